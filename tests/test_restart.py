"""Checkpoints and restarts end to end, through `mpirun -n P parsolve run` subprocesses:
restart across rank counts equals the uninterrupted run bit for bit; a SIGKILL during a
checkpoint write leaves the previous one intact; SIGTERM/SIGUSR1 write a checkpoint and exit
with code 3; bad checkpoint files are refused on every rank; the XDMF index is consistent."""
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from parsolve.io.hdf5 import h5py_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           PYTHONPATH=ROOT)
PARSOLVE = [sys.executable, "-m", "parsolve.cli"]

MODEL = """
import argparse
import numpy as np
import parsolve as ps
ap = argparse.ArgumentParser()
ap.add_argument("--duration", type=float, default=0.1)
ap.add_argument("--friction", type=float, default=0.4)
args = ap.parse_args()
rng = np.random.default_rng(3)
m = ps.Model(gravity=(2.0, 0.0, -9.81))
m.surface("g", "g", friction=args.friction, restitution=0.3)
m.surface("g", "w", friction=0.3, restitution=0.3)
m.box_walls((0, 0, 0), (0.3, 0.1, 0.3), "w", top=True)
k = np.arange(160)
x = np.stack([0.012 + 0.025 * (k % 10), 0.012 + 0.025 * ((k // 10) % 4),
              0.012 + 0.025 * (k // 40)], axis=1)
m.spheres(x, 0.01, "g", density=1000, velocities=rng.normal(0, 1.0, (160, 3)))
m.box((0.15, 0.05, 0.2), (0.02, 0.015, 0.01), "g", density=800)
m.run(args.duration, 1e-3, output="res.h5", frames=0.05, progress=0,
      solver=ps.GaussSeidel(tol=1e-9, max_iter=300))
"""


def run(tmp, ranks, *args, timeout=240, env=None):
    cmd = (["mpirun", "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + PARSOLVE
    return subprocess.run(cmd + ["run", "model.py", *args], cwd=tmp, env=env or ENV,
                          capture_output=True, text=True, timeout=timeout)


def final_state(path):
    h5py = h5py_module()
    with h5py.File(path, "r") as f:
        last = f["frames/time"].shape[0] - 1
        g = f[f"frames/{last:06d}/bodies"]
        o = np.argsort(g["gid"][()])
        return float(f["frames/time"][last]), np.hstack([g[n][()][o] for n in "xqvw"])


def assert_restart_continues(tmp_path, script, every=30, ranks=2):
    """`script` run whole at 1 rank, and in legs: checkpointed every `every` steps at 1 rank,
    continued at `ranks` from the first checkpoint. The legs end where the whole run ends,
    bit for bit. Returns the whole run's results path."""
    for name in ("whole", "legs"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.py").write_text(script)
    out = run(tmp_path / "whole", 1)
    assert out.returncode == 0, out.stderr[-2000:]
    out = run(tmp_path / "legs", 1, "--checkpoint-every", str(every))
    assert out.returncode == 0, out.stderr[-2000:]
    ckpt = sorted((tmp_path / "legs" / "checkpoints").glob("*.h5"))[0]
    out = run(tmp_path / "legs", ranks, "--restart", str(ckpt))
    assert out.returncode == 0, out.stderr[-2000:]
    legs = sorted((tmp_path / "legs").glob("res.restart-*.h5"))
    t0, whole = final_state(tmp_path / "whole" / "res.h5")
    t1, leg = final_state(legs[-1])
    assert t0 == t1
    np.testing.assert_array_equal(leg, whole)
    return tmp_path / "whole" / "res.h5"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("restart")
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    return d


@pytest.fixture(scope="module")
def reference(workdir):
    d = workdir / "reference"
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    p = run(d, 1)
    assert p.returncode == 0, p.stderr
    return final_state(d / "res.h5")


@pytest.mark.parametrize("first, second", [(1, 2), (2, 3), (3, 1)])
def test_restart_on_another_rank_count_equals_the_uninterrupted_run(workdir, reference, first,
                                                                    second):
    d = workdir / f"r{first}{second}"
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    p = run(d, first, "--checkpoint-every", "25", "--", "--duration", "0.05")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(d / "checkpoints")) == ["checkpoint-000000025.h5",
                                                     "checkpoint-000000050.h5"]
    p = run(d, second, "--restart", "checkpoints/checkpoint-000000050.h5")
    assert p.returncode == 0, p.stderr
    if second > 1:                    # the balance of the ranks, in the summary
        assert "per rank (min/avg/max, mean over steps): bodies" in p.stdout
        assert "work seconds" in p.stdout and f"ranks {second}" in p.stdout
    t, state = final_state(d / "res.restart-000000050.h5")
    assert t == reference[0]
    np.testing.assert_array_equal(state, reference[1])
    assert os.path.exists(d / "res.h5")                  # the first leg's results are kept


def test_sigkill_during_a_checkpoint_write_leaves_the_previous_one_intact(workdir):
    d = workdir / "kill"
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    env = dict(ENV, PARSOLVE_FAULTS="delay@checkpoint-dataset:seconds=0.3")
    p = subprocess.Popen(PARSOLVE + ["run", "model.py", "--checkpoint-every", "20", "--",
                                     "--duration", "1.0"], cwd=d, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ck = d / "checkpoints"
    deadline = time.time() + 120
    while not (ck / "checkpoint-000000040.h5.tmp").exists():
        assert time.time() < deadline and p.poll() is None, "no second checkpoint started"
        time.sleep(0.05)
    time.sleep(0.5)                                      # in the middle of its datasets
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert (ck / "checkpoint-000000020.h5").exists()
    assert not (ck / "checkpoint-000000040.h5").exists()
    info = subprocess.run(PARSOLVE + ["info", "checkpoints/checkpoint-000000020.h5"], cwd=d,
                          env=ENV, capture_output=True, text=True)
    assert info.returncode == 0 and "step 20" in info.stdout
    q = run(d, 2, "--restart", "auto", "--", "--duration", "0.03")
    assert q.returncode == 0, q.stderr
    assert "restarting from checkpoints/checkpoint-000000020.h5" in q.stdout


@pytest.mark.parametrize("ranks, sig", [(1, signal.SIGTERM), (2, signal.SIGUSR1)])
def test_a_signal_writes_a_checkpoint_and_exits_with_3(workdir, ranks, sig):
    d = workdir / f"sig{ranks}"
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    cmd = (["mpirun", "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + PARSOLVE
    p = subprocess.Popen(cmd + ["run", "model.py", "--", "--duration", "5.0"], cwd=d, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (d / "res.h5").exists():
        assert time.time() < deadline and p.poll() is None
        time.sleep(0.05)
    time.sleep(2.0)
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 3, (out, err)
    assert "ended by signal" in out
    saved = os.listdir(d / "checkpoints")
    assert len(saved) == 1
    q = run(d, 1, "--restart", "auto", "--", "--duration", "0.01")
    assert q.returncode == 0 and "restarting from" in q.stdout, q.stderr


def test_bad_checkpoints_are_refused_on_every_rank_and_nothing_is_touched(workdir):
    d = workdir / "bad"
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    p = run(d, 1, "--checkpoint-every", "10", "--", "--duration", "0.01")
    assert p.returncode == 0, p.stderr
    good = d / "checkpoints" / "checkpoint-000000010.h5"
    data = good.read_bytes()
    (d / "truncated.h5").write_bytes(data[: len(data) // 2])
    (d / "corrupt.h5").write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 4096,
                                                                            dtype=np.uint8)))
    h5py = h5py_module()
    with h5py.File(d / "foreign.h5", "w") as f:
        f["x"] = np.arange(3)
    before = sorted(os.listdir(d / "checkpoints")), good.stat().st_mtime
    cases = [("truncated.h5", "not a readable HDF5 file"), ("corrupt.h5", "not a readable HDF5"),
             ("foreign.h5", "not a parsolve checkpoint"), ("missing.h5", "no such checkpoint")]
    for name, message in cases:
        p = run(d, 2, "--restart", name)
        assert p.returncode != 0 and p.returncode != 3
        # every rank failed alike: said once, by rank 0, naming the ranks
        assert p.returncode == 2 and "(all ranks)" in p.stderr, p.stderr
        assert p.stderr.count(message) == 1, p.stderr
    p = run(d, 1, "--restart", str(good), "--", "--friction", "0.5")
    assert p.returncode == 2 and "a checkpoint of another model" in p.stderr
    assert (sorted(os.listdir(d / "checkpoints")), good.stat().st_mtime) == before


def test_xdmf_references_existing_datasets_with_their_shapes(workdir, reference):
    d = workdir / "reference"
    tree = ET.parse(d / "res.xdmf")
    h5py = h5py_module()
    items = tree.getroot().iter("DataItem")
    n = 0
    with h5py.File(d / "res.h5", "r") as f:
        for item in items:
            file, path = item.text.split(":")
            assert file == "res.h5"
            dims = tuple(int(x) for x in item.get("Dimensions").split())
            assert f[path].shape == dims, (path, f[path].shape, dims)
            n += 1
    kinds = {g.get("Name") for g in tree.getroot().find("Domain")}
    assert kinds == {"bodies", "boxes", "contacts"} and n > 20
