"""Measure sensors in parallel (run at 2 and 3 ranks): a settling bed of spheres and a wall of
bricks (pairs whose contact points lie on two ranks) give the serial run's samples bit for
bit, every measure, the coarse-grained fields and the joints' counts."""
import os
import tempfile

import h5py
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.measures import Ball, Grid, slabs
from parsolve.measures.sensor import QUANTITIES, REGION
from parsolve.parallel import Comm
from parsolve.run.simulation import Simulation

from scenes import spheres_in_box          # noqa: E402

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def bed():
    """Two layers of nearly touching spheres thrown at 0.2 m/s: contacts from the first
    steps on, across the ranks' slabs."""
    return spheres_in_box(120, 7, (0, 0, -9.81), 0.4, 0.0, 0.2, 0.0, (0.375, 0.1, 0.4),
                          (0.0125, 0.025), (0.0123, 0.0125), 0.2)


def wall():
    """6 courses of 5 bricks in running bond on a fixed slab (4-point face contacts, whose
    points can lie on two ranks), pushed sideways at the top."""
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    slab = np.array([(x, y, z) for x in (-0.3, 1.3) for y in (-0.2, 0.3) for z in (-0.1, 0.0)])
    m.polyhedron(slab, "brick", fixed=True, name="base")
    ids = m.wall(length=1.0, height=0.3, brick=(0.2, 0.1, 0.05), material="brick",
                 density=1800, gap=1e-4)
    m.load(ids[-1], force=(-5.0, 0.0, 0.0))
    return m


def run(model, comm, output, steps, h=1e-3):
    sim = Simulation(model, step=h, solver=ps.GaussSeidel(tol=1e-9, max_iter=200),
                     progress=0, quiet=True, comm=comm, output=output)
    sim.run(steps * h)
    return sim


def sensors(path):
    with h5py.File(path, "r") as f:
        return {f"{s}/{q}": f[f"sensors/{s}/{q}"][()] for s in f["sensors"]
                for q in f[f"sensors/{s}"]}


@pytest.mark.parametrize("scene", ["bed", "wall"])
def test_measure_sensors_equal_the_serial_runs_bit_for_bit(scene):
    folder = WORLD.bcast(tempfile.mkdtemp(prefix="measures-") if WORLD.rank == 0 else None)

    def model():
        m = bed() if scene == "bed" else wall()
        lo, hi = ((0, 0, 0), (0.375, 0.1, 0.05)) if scene == "bed" else \
            ((-0.1, -0.1, 0), (1.1, 0.2, 0.3))
        m.sensor("grid", region=Grid(lo, hi, (3, 1, 2)), quantities=QUANTITIES, every=4,
                 kinetic=True, kernel="lucy", width=0.06)
        m.sensor("slabs", region=slabs(lo, hi, "z", 5), every=4, contact_force=1e-9)
        m.sensor("ball", region=Ball(np.add(lo, hi) / 2, 0.05), every=4,
                 quantities=REGION + ("joints",))
        return m

    steps = 12 if scene == "bed" else 8
    run(model(), Comm(MPI.COMM_SELF), os.path.join(folder, f"serial-{WORLD.rank}.h5"), steps)
    sim = run(model(), Comm(WORLD), os.path.join(folder, "par.h5"), steps)
    assert WORLD.allreduce(int(sim.owned.n_owned > 0)) == WORLD.size    # spread over ranks
    c = sim.contacts
    pairs = {(int(a), int(b)) for a, b in zip(c.k1, c.k2 // 64) if b >= 0}
    held = [key for part in WORLD.allgather(pairs) for key in part]
    if scene == "wall":                 # some pair's points lie on two ranks at the end
        assert len(held) > len(set(held))
    if WORLD.rank == 0:
        a = sensors(os.path.join(folder, "serial-0.h5"))
        b = sensors(os.path.join(folder, "par.h5"))
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)
        # not an empty comparison: contacts, coordination, packing and stress were measured
        assert np.nanmax(a["grid/contacts"]) > 5 and np.nanmax(a["grid/coordination"]) > 0.1
        assert np.nanmax(a["grid/packing"]) > 0.05 and np.abs(a["grid/stress"][-1]).max() > 0
        assert a["grid/field_density"].max() > 0 and a["grid/joints"][-1].sum() > 0
    WORLD.Barrier()
