"""The SLURM scripts of jobs/, run outside SLURM with stand-ins for sbatch and scontrol:
the signal SLURM sends before the time limit gives a checkpoint and a requeue, the next leg
continues from it on another number of tasks and marks the run done, and a chain of legs is
submitted with the right dependencies."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from parsolve.io.hdf5 import h5py_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOBS = os.path.join(ROOT, "jobs")

MODEL = """
import argparse
import numpy as np
import parsolve as ps
ap = argparse.ArgumentParser()
ap.add_argument("--duration", type=float, default=0.1)
args = ap.parse_args()
m = ps.Model(gravity=(0.0, 0.0, -9.81))
m.surface("g", "g", friction=0.4, restitution=0.2)
m.box_walls((0, 0, 0), (0.2, 0.1, 0.4), "g")
k = np.arange(120)
x = np.stack([0.012 + 0.022 * (k % 8), 0.012 + 0.022 * ((k // 8) % 3),
              0.012 + 0.022 * (k // 24)], axis=1)
m.spheres(x, 0.01, "g", density=1000)
m.run(args.duration, 1e-3, output="res.h5", progress=0,
      solver=ps.GaussSeidel(tol=1e-6, max_iter=200))
"""


@pytest.fixture
def site(tmp_path):
    """A run folder with the model, and a bin/ of stand-ins that log their arguments."""
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text('#!/bin/sh\necho "$@" >> "$LOG"\n')
    (bin_dir / "sbatch").write_text(
        '#!/bin/sh\necho "$@" >> "$LOG"\nn=$(wc -l < "$LOG")\necho "$((1000 + n))"\n')
    (bin_dir / "parsolve").write_text(
        f'#!/bin/sh\nexec {sys.executable} -m parsolve.cli "$@"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", LOG=str(tmp_path / "log"),
               PYTHONPATH=ROOT, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", LAUNCH="mpirun",
               MPIRUN_FLAGS="--oversubscribe", SLURM_JOB_ID="4242")
    env.pop("SLURM_RESTART_COUNT", None)
    return tmp_path, env


def job(cwd, env, *args, **kw):
    return subprocess.Popen(["bash", os.path.join(JOBS, "parsolve.sbatch"), "model.py", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def test_scripts_parse_and_ask_slurm_for_a_warning_signal_and_requeue():
    for name in ("parsolve.sbatch", "pour.sbatch", "collapse.sbatch", "chain.sh"):
        path = os.path.join(JOBS, name)
        assert subprocess.run(["bash", "-n", path]).returncode == 0, name
        text = open(path).read()
        if name.endswith(".sbatch"):
            assert "#SBATCH --signal=B:USR1@" in text and "#SBATCH --requeue" in text, name
    assert os.path.exists(os.path.join(ROOT, "examples", "collapse.py"))


def test_the_time_limit_signal_checkpoints_and_requeues_and_the_next_leg_completes(site):
    d, env = site
    p = job(d, dict(env, SLURM_NTASKS="2"), "--", "--duration", "20.0")
    deadline = time.time() + 120
    while not (d / "res.h5").exists():
        assert time.time() < deadline and p.poll() is None, p.communicate()
        time.sleep(0.05)
    time.sleep(2.0)
    p.send_signal(signal.SIGUSR1)                  # what --signal=B:USR1@T sends the shell
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, (out, err)
    assert "requeueing job 4242" in out
    assert (d / "log").read_text().split() == ["requeue", "4242"]
    saved = sorted(os.listdir(d / "checkpoints"))
    assert len(saved) == 1 and not (d / "parsolve.done").exists()
    h5py = h5py_module()
    with h5py.File(d / "checkpoints" / saved[0], "r") as f:
        t_saved = float(f.attrs["time"])
        assert f.attrs["ranks"] == 2

    # the requeued leg, on 3 tasks, continues from the checkpoint to the end
    q = job(d, dict(env, SLURM_NTASKS="3", SLURM_RESTART_COUNT="1"), "--", "--duration",
            str(round(t_saved + 0.02, 6)))
    out, err = q.communicate(timeout=240)
    assert q.returncode == 0, (out, err)
    assert f"restarting from checkpoints/{saved[0]}" in out and "the run is complete" in out
    assert (d / "parsolve.done").exists()
    r = job(d, env, "--", "--duration", "1.0")
    out, _ = r.communicate(timeout=60)
    assert r.returncode == 0 and "the run is complete, nothing to do" in out


def test_bad_input_fails_the_job_without_requeue(site):
    d, env = site
    (d / "model.py").write_text(textwrap.dedent(MODEL).replace("friction=0.4", "friction=-1"))
    p = job(d, dict(env, SLURM_NTASKS="2"))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "not requeued" in err and "friction" in err
    assert not (d / "log").exists()


def test_chain_submits_legs_that_wait_for_each_other(site):
    d, env = site
    p = subprocess.run(["bash", os.path.join(JOBS, "chain.sh"), "3",
                        os.path.join(JOBS, "collapse.sbatch"), "--", "--spheres", "5000"],
                       cwd=d, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    calls = [line.split() for line in (d / "log").read_text().splitlines()]
    assert len(calls) == 3
    assert all("--export=ALL,REQUEUE=0" in c and c[-3:] == ["--", "--spheres", "5000"]
               for c in calls)
    assert not any(a.startswith("--dependency") for a in calls[0])
    assert "--dependency=afterany:1001" in calls[1] and "--dependency=afterany:1002" in calls[2]
