"""Runs of every length end, on any number of ranks (make test-mpi runs this at 2, 3 and 4).

The scene is a column along z whose bottom layer rests on the floor: only the lowest subdomain has
contacts, so the ranks' own tallies (local solves by kind) differ, as in a real pile. Before
the summary was reduced, runs of some lengths hung forever at the end (the ranks wrote
different attributes collectively). Each run here must finish under a watchdog that turns a
hang into a failure, and its results must be readable with plain h5py."""
import faulthandler
import os
import shutil
import tempfile

import numpy as np
import pytest

import parsolve as ps
from parsolve.io.hdf5 import h5py_module
from parsolve.parallel import Comm
from parsolve.run import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
H = 1e-3


def column():
    m = ps.Model()
    m.surface("g", "g", friction=0.4, restitution=0.1)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    k = np.arange(2 * 2 * 12)
    x = np.stack([0.01 + 0.021 * (k % 2), 0.01 + 0.021 * ((k // 2) % 2),
                  0.01 + 0.021 * (k // 4)], axis=1)
    m.spheres(x, 0.01, "g", density=2500)
    return m


@pytest.fixture
def folder():
    comm = Comm()
    d = comm.bcast(tempfile.mkdtemp(prefix="ends-") if comm.root else None)
    yield d
    comm.barrier()
    if comm.root:
        shutil.rmtree(d)
    comm.free()


@pytest.mark.parametrize("files", ["results only", "frames and checkpoints"])
def test_runs_of_every_length_from_1_to_64_steps_end_and_leave_readable_files(folder, files):
    faulthandler.dump_traceback_later(600, exit=True)         # a hang fails, never blocks CI
    try:
        model = column()
        comm = Comm()
        for steps in range(1, 65):
            out = os.path.join(folder, f"res-{steps}.h5")
            options = ({} if files == "results only" else
                       dict(frames=7 * H, checkpoint_every=16, checkpoint_keep=2,
                            checkpoint_dir=os.path.join(folder, f"ck-{steps}")))
            sim = Simulation(model, step=H, output=out, progress=0, quiet=True, comm=comm,
                             solver=ps.GaussSeidel(tol=1e-8, max_iter=50), **options)
            summary = sim.run(steps * H)
            assert summary["steps"] == steps
            # the summary is reduced: the same on every rank, local solves counted once
            assert comm.allgather(repr(summary)) == [repr(summary)] * comm.size
            if comm.root:
                with h5py_module().File(out, "r") as f:
                    assert f.attrs["complete"]
                    assert list(f["history/step"][()]) == list(range(1, steps + 1))
                    assert f.attrs["summary_steps"] == steps
                    frames = f["frames/step"][()]
                    assert frames[0] == 0 and frames[-1] == steps
                    last = f[f"frames/{len(frames) - 1:06d}/bodies/gid"].shape[0]
                    assert last == 48
                    solved = sum(v for k, v in f.attrs.items() if k.startswith("summary_local_"))
                    assert solved == sum(v for k, v in summary.items()
                                         if k.startswith("local_"))
        comm.free()
    finally:
        faulthandler.cancel_dump_traceback_later()
