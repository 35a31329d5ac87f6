"""A full disk, as a batch job meets it: a write of the results, a checkpoint or the results
index fails with ENOSPC (injected by PARSOLVE_FAULTS's oserror, or on a small tmpfs where this
machine lets us mount one). Every rank ends with exit 2 and one message naming the file, the
reason and what was kept (the results up to a step, the last checkpoint), no h5py traceback;
what was kept reads and restarts."""
import subprocess
import uuid

import numpy as np
import pytest

from parsolve.io.hdf5 import h5py_module
from parsolve.io.results import read_history
from test_reliability import ENV, MODEL, PARSOLVE, folder, run

# checkpoints (and closed segments) every 20 steps, a frame every 5, 60 steps
FULL = MODEL.replace("flush_seconds=0.2", "checkpoint_every=20")
ARGS = ("--", "--duration", "0.06", "--frames", "0.005")


def no_traceback(p):
    assert "Traceback" not in p.stderr and "h5py" not in p.stderr, p.stderr


def leftovers(d):
    return list(d.rglob("*.tmp"))


@pytest.mark.parametrize("ranks", [1, 2])
@pytest.mark.parametrize("case", ["segment", "checkpoint", "index"])
def test_a_full_disk_ends_every_rank_with_2_saying_what_was_kept(tmp_path, ranks, case):
    """The fault on the last rank (rank 0 writes the index): a frame's dataset at step 30,
    the checkpoint of step 40, the index after step 40's segment. The results index holds
    every closed segment before the failure and the older checkpoints stay; the run
    restarts from the last one and ends."""
    last = ranks - 1
    fault, message, kept_step, checkpoint = {
        "segment": (f"oserror@segment-write:rank={last}:step=30",
                    "cannot write the results segment 'res.parts/seg-000000000-0001.h5'", 20,
                    20),
        "checkpoint": (f"oserror@checkpoint-dataset:rank={last}:step=40",
                       "cannot write the checkpoint 'checkpoints/checkpoint-000000040.h5'", 40,
                       20),
        "index": ("oserror@index:step=40", "cannot write the results index 'res.h5'", 20, 20),
    }[case]
    d = folder(tmp_path, "full", FULL)
    p = run(d, ranks, *ARGS, faults=fault)
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert "MPI_ABORT" not in p.stderr, p.stderr          # every rank knew: no abort
    assert p.stderr.count(message) == 1, p.stderr        # said once, by rank 0
    assert "No space left on device (ENOSPC)" in p.stderr, p.stderr
    assert f"Kept: res.h5 holds the results up to step {kept_step}" in p.stderr, p.stderr
    assert f"the last checkpoint is checkpoints/checkpoint-{checkpoint:09d}.h5 (step " \
           f"{checkpoint})" in p.stderr, p.stderr
    assert "continue with --restart auto" in p.stderr
    assert leftovers(d) == []                            # no half-written file stays
    assert read_history(d / "res.h5")["step"][-1] == kept_step
    info = subprocess.run(PARSOLVE + ["info", "res.h5"], cwd=d, capture_output=True,
                          text=True, env=ENV)
    assert info.returncode == 0 and "not closed" in info.stdout, info.stdout + info.stderr
    p = run(d, ranks, "--restart", "auto", *ARGS)
    assert p.returncode == 0, p.stderr
    leg = d / f"res.restart-{checkpoint:09d}.h5"
    steps = read_history(leg)["step"]
    np.testing.assert_array_equal(steps, np.arange(1, 61))   # no gap, no step twice


@pytest.fixture
def small_disk(tmp_path):
    """A 1.2 MB tmpfs, or a skip where this machine does not let us mount one."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200k", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


# at 2 ranks the right message comes, but a rank can then crash (SEGV) on its way out of HDF5
# after a failed metadata flush, now and then: known, not yet fixed (the exit code is then
# MPI_Abort's, not 2); the test still runs and reports it
CRASH = pytest.mark.xfail(strict=False, reason="a rank may crash leaving HDF5 after a failed "
                          "metadata flush on a real full disk (intermittent)")


@pytest.mark.parametrize("ranks", [1, pytest.param(2, marks=CRASH)])
def test_a_real_full_disk_ends_the_run_with_2_and_its_message(small_disk, ranks):
    """Frames at every step fill a small tmpfs. A failed raw write is known to every rank
    (exit 2 everywhere); HDF5's metadata, which rank 0 writes inside collective calls, may
    fail while the others wait inside HDF5: that rank then ends the job with 2 (MPI_Abort),
    with the same message. Never h5py's traceback, a hang or a crash."""
    d = folder(small_disk, "run", MODEL)
    p = run(d, ranks, "--", "--frames", "0.001", timeout=300)
    assert p.returncode == 2, p.stderr
    no_traceback(p)
    assert "cannot write the " in p.stderr and "Kept: " in p.stderr, p.stderr
    assert "No space left on device" in p.stderr or " 0 bytes free" in p.stderr, p.stderr
    if "holds the results up to step" in p.stderr:
        step = int(p.stderr.split("holds the results up to step ")[1].split()[0])
        assert read_history(d / "res.h5")["step"][-1] == step
        with h5py_module().File(d / "res.h5", "r") as f:
            assert not f.attrs["complete"]
