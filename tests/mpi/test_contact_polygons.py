"""Contact polygons in parallel (run at 2 and 3 ranks): a settling wall of 210 bricks writes
the same polygon cells (points, forces, counts) as the serial run, bit for bit, including the
pairs whose points are owned by different ranks."""
import os
import shutil
import tempfile

import h5py
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel import Comm
from parsolve.run import Simulation

from test_polyhedra import wall  # noqa: E402  (the same 210-brick wall)

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
H, STEPS = 1e-3, 8


def run(comm, output):
    sim = Simulation(wall(), step=H, solver=ps.GaussSeidel(tol=1e-9, max_iter=200),
                     progress=0, quiet=True, comm=comm, output=output, frames=STEPS * H / 2)
    sim.run(STEPS * H)
    return sim


def polygons(path):
    """Every frame's cells as {(k1, b): (vertices, force, normal, normal_force, tangential,
    points)}, and the cells' count."""
    frames = []
    with h5py.File(path, "r") as f:
        for k in range(len(f["frames/time"])):
            p = f[f"frames/{k:06d}/polygons"]
            topo, verts = p["topology"][()], p["vertices"][()]
            cells, at = {}, 0
            for c in range(len(p["points"])):
                n = topo[at + 1]
                ids = topo[at + 2:at + 2 + n]
                cells[(int(p["k1"][c]), int(p["b"][c]))] = (
                    topo[at], verts[ids], p["force"][c], p["normal"][c], p["normal_force"][c],
                    p["tangential_force"][c], p["points"][c])
                at += 2 + n
            assert at == len(topo) and len(cells) == len(p["points"])    # each pair once
            frames.append(cells)
    return frames


def test_the_polygons_of_a_wall_equal_the_serial_runs():
    folder = WORLD.bcast(tempfile.mkdtemp(prefix="polygons-") if WORLD.rank == 0 else None)
    serial = run(Comm(MPI.COMM_SELF), os.path.join(folder, f"serial-{WORLD.rank}.h5"))
    sim = run(Comm(WORLD), os.path.join(folder, "par.h5"))
    # some pair's points lie on two ranks at the last frame (its cell is gathered)
    c = sim.contacts
    mine = {(int(a), int(b)) for a, b in zip(c.k1, c.k2 // 64) if b >= 0}
    held = [key for part in WORLD.allgather(mine) for key in part]
    assert len(held) > len(set(held))
    del serial
    WORLD.barrier()
    if WORLD.rank == 0:
        got = polygons(os.path.join(folder, "par.h5"))
        want = polygons(os.path.join(folder, "serial-0.h5"))
        assert len(got) == len(want) == 3
        assert len(want[-1]) > 200 and max(v[-1] for v in want[-1].values()) >= 4
        for g, w in zip(got, want):
            assert g.keys() == w.keys()
            for key in w:
                for a, b in zip(g[key], w[key]):
                    np.testing.assert_array_equal(a, b)
        shutil.rmtree(folder)
    WORLD.barrier()
