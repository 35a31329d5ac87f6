"""Checkpoint formats: a checkpoint written by parsolve 0.1.0 (format 1, tests/data/
checkpoint_v1: the model of model.py on 2 ranks, step 20 of 40) restarts with this release at 1
and 2 ranks and continues bit for bit the run that wrote it (its state at step 40, step40.npz)
and the uninterrupted run of this release; a format this release does not read is refused,
naming its format and the release that reads it."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from parsolve.io.checkpoint import FORMAT_VERSION, FORMATS, format_version
from parsolve.io.hdf5 import h5py_module

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "checkpoint_v1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           PYTHONPATH=ROOT)
V1 = "checkpoint-000000020.h5"


def run(tmp, ranks, *args):
    cmd = (["mpirun", "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + \
        [sys.executable, "-m", "parsolve", "run", "model.py", *args]
    return subprocess.run(cmd, cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300)


def state(path):
    """(bodies x q v w sorted by gid, contacts k1 k2 R state sorted by key) of a checkpoint."""
    with h5py_module().File(path, "r") as f:
        b = {k: f["bodies"][k][()] for k in f["bodies"]}
        c = {k: f["contacts"][k][()] for k in f["contacts"]}
    o, oc = np.argsort(b["gid"]), np.lexsort((c["k2"], c["k1"]))
    return {**{k: b[k][o] for k in ("gid", "x", "q", "v", "w")},
            **{k: c[k][oc] for k in ("k1", "k2", "R", "state")}}


@pytest.fixture
def workdir(tmp_path):
    for name in ("model.py", V1):
        shutil.copy(os.path.join(DATA, name), tmp_path / name)
    return tmp_path


def test_the_stored_checkpoint_is_format_1_of_this_model(workdir):
    with h5py_module().File(workdir / V1, "r") as f:
        assert format_version(f.attrs) == 1 and "origin" not in f["contacts"]
        assert f.attrs["version"] == "0.1.0" and FORMAT_VERSION == 2


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_format_1_checkpoint_continues_bit_for_bit(workdir, ranks):
    """Restarted at step 20 on `ranks` ranks, the run's state at step 40 equals the one the
    run of parsolve 0.1.0 that wrote the checkpoint reached, and this release's
    uninterrupted run's: every body's x, q, v, w and every row's key, reaction and state."""
    p = run(workdir, ranks, "--restart", V1, "--checkpoint-every", "20")
    assert p.returncode == 0, p.stderr[-3000:]
    assert f"restarting from {V1} at step 20" in p.stdout
    got = state(workdir / "checkpoints" / "checkpoint-000000040.h5")
    with h5py_module().File(workdir / "checkpoints" / "checkpoint-000000040.h5", "r") as f:
        assert format_version(f.attrs) == FORMAT_VERSION          # written in today's format
    stored = np.load(os.path.join(DATA, "step40.npz"))
    for name in stored.files:
        np.testing.assert_array_equal(got[name], stored[name], err_msg=name)
    whole = workdir / "whole"
    whole.mkdir()
    shutil.copy(workdir / "model.py", whole / "model.py")
    p = run(whole, 1, "--checkpoint-every", "40")
    assert p.returncode == 0, p.stderr[-3000:]
    ref = state(whole / "checkpoints" / "checkpoint-000000040.h5")
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)


@pytest.mark.parametrize("version", [0, 3])
def test_a_format_this_release_does_not_read_is_refused_by_name(workdir, version):
    """Format 0 (an early 0.1.0 file, no energy balance) and a newer format 3: exit 2 on every
    rank with the format and the release that reads it, nothing written."""
    bad = workdir / "other.h5"
    shutil.copy(workdir / V1, bad)
    with h5py_module().File(bad, "r+") as f:
        if version == 0:
            del f.attrs["energy"]
        else:
            f.attrs["format_version"] = version
    p = run(workdir, 2, "--restart", "other.h5")
    assert p.returncode == 2, p.stderr[-3000:]
    assert f"checkpoint format {version}" in p.stderr
    reader = FORMATS[0] if version == 0 else "a parsolve newer than"
    assert reader in p.stderr
    assert not (workdir / "checkpoints").exists() and not (workdir / "res.h5").exists()
