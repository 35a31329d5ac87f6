"""Masonry in parallel (run at 2, 3 and 4 ranks): a running-bond wall of 210 bricks settling
on a fixed base follows the serial trajectory bit for bit, and a restart on this rank count
from a serial checkpoint continues it bit for bit."""
import os
import shutil
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel import Comm
from gathering import assert_equals_serial
from parsolve.run import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
H, STEPS = 1e-3, 30


def wall():
    """20 courses of 0.2 x 0.1 x 0.05 m bricks in running bond, 1e-4 m apart in height, on a
    fixed slab (a polyhedron), pushed sideways at the top: the courses settle and the bond
    carries the push."""
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    slab = np.array([(x, y, z) for x in (-0.5, 2.5) for y in (-0.2, 0.3) for z in (-0.1, 0.0)])
    m.polyhedron(slab, "brick", fixed=True, name="base")
    ids = m.wall(length=2.0, height=1.0, brick=(0.2, 0.1, 0.05), material="brick",
                 density=1800, gap=1e-4)
    m.load(ids[-1], force=(-5.0, 0.0, 0.0))
    return m


def run(comm, steps, **kw):
    sim = Simulation(wall(), step=H, solver=ps.GaussSeidel(tol=1e-9, max_iter=200),
                     progress=0, quiet=True, comm=comm, **kw)
    sim.run(steps * H)
    return sim


def same(sim, serial):
    assert_equals_serial(sim, serial, history=False)
    assert WORLD.allreduce(int(sim.owned.n_owned)) == 210


def test_a_wall_settles_bit_for_bit_and_a_restart_continues_it():
    folder = WORLD.bcast(tempfile.mkdtemp(prefix="walls-") if WORLD.rank == 0 else None)
    serial = run(Comm(MPI.COMM_SELF), STEPS, checkpoint_every=STEPS // 2,
                 checkpoint_dir=os.path.join(folder, f"serial-{WORLD.rank}"))
    assert np.abs(serial.owned.v).max() > 1e-3                # the courses move
    assert len(serial.contacts) > 4 * 210                      # faces on faces: polygons
    sim = run(Comm(WORLD), STEPS)
    same(sim, serial)
    assert WORLD.allreduce(int(sim.owned.n_owned > 0)) > 1    # the bricks are shared out
    ckpt = sorted(os.listdir(os.path.join(folder, "serial-0")))
    first = os.path.join(folder, "serial-0", [c for c in ckpt if c.endswith(".h5")][0])
    again = run(Comm(WORLD), STEPS, restart=first)
    assert again.restarted_from is not None
    same(again, serial)
    WORLD.barrier()
    if WORLD.rank == 0:
        shutil.rmtree(folder)
