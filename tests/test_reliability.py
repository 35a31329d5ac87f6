"""How runs fail, tried as a batch user's job fails: signals to mpirun and to the ranks at random
steps, a rank killed mid-run, a second signal during a checkpoint, flipped bytes in
checkpoints, unphysical input, errors in model scripts. Every case must end (each subprocess
under a timeout), with the documented exit code, and leave files that restart bit for bit.

Faults are injected with PARSOLVE_FAULTS (parsolve/faults.py): a delay per step makes the
runs long enough to be hit at a random step, and `kill@solve:rank=1:step=N` kills a rank at a
chosen point."""
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from parsolve.errors import FileFormatError
from parsolve.io import checkpoint
from parsolve.io.hdf5 import h5py_module
from parsolve.io.results import read_history
from parsolve.parallel import Comm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           PYTHONPATH=ROOT)
PARSOLVE = [sys.executable, "-m", "parsolve.cli"]
H = 1e-3
STEPS = 300
SLOW = "delay@step:seconds=0.005"          # >= 1.5 s for the run: room for a random signal
PHYSICS = ("step", "time", "kinetic_energy", "potential_energy", "contacts", "iterations",
           "residual", "converged")

MODEL = """
import argparse
import numpy as np
import parsolve as ps
ap = argparse.ArgumentParser()
ap.add_argument("--duration", type=float, default={duration})
ap.add_argument("--frames", type=float, default=None)
args = ap.parse_args()
rng = np.random.default_rng(3)
m = ps.Model(gravity=(2.0, 0.0, -9.81))
m.surface("g", "g", friction=0.4, restitution=0.3)
m.box_walls((0, 0, 0), (0.3, 0.1, 0.3), "g", top=True)
k = np.arange(80)
x = np.stack([0.012 + 0.025 * (k % 10), 0.012 + 0.025 * ((k // 10) % 4),
              0.012 + 0.025 * (k // 40)], axis=1)
m.spheres(x, 0.01, "g", density=1000, velocities=rng.normal(0, 1.0, (80, 3)))
sim = ps.Simulation(m, {h}, output="res.h5", frames=args.frames, progress=0, flush_seconds=0.2,
                    solver=ps.GaussSeidel(tol=1e-9, max_iter=300))
if ps.rank() == 0:          # the step being solved, for a test that signals at a chosen step
    sim.observers.append(lambda s, ld: open("step.txt", "w").write(str(s.step_count + 1)))
sim.run(args.duration)
sim.free()
""".format(duration=STEPS * H, h=H)


def folder(base, name, model=MODEL):
    d = base / name
    d.mkdir()
    (d / "model.py").write_text(textwrap.dedent(model))
    return d


def command(ranks):
    return (["mpirun", "--oversubscribe", "-n", str(ranks)] if ranks > 1 else []) + PARSOLVE


def run(d, ranks, *args, timeout=240, faults=None):
    env = dict(ENV, PARSOLVE_FAULTS=faults) if faults else ENV
    return subprocess.run(command(ranks) + ["run", "model.py", *args], cwd=d, env=env,
                          capture_output=True, text=True, timeout=timeout)


def start(d, ranks, *args, faults=SLOW):
    return subprocess.Popen(command(ranks) + ["run", "model.py", *args], cwd=d,
                            env=dict(ENV, PARSOLVE_FAULTS=faults), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(path, p, seconds=120):
    deadline = time.time() + seconds
    while not os.path.exists(path):
        assert time.time() < deadline and p.poll() is None, f"{path} never appeared"
        time.sleep(0.02)


def wait_for_step(d, step, p, seconds=240):
    """Wait until the run in `d` solves step `step` or later (its step.txt)."""
    deadline = time.time() + seconds
    while True:
        assert time.time() < deadline and p.poll() is None, f"step {step} never came"
        try:
            if int((d / "step.txt").read_text() or 0) >= step:
                return
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.01)


def ranks_of(p):
    out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def state(path, step=None):
    """(x, q, v, w) of every body sorted by id at `step` (default: the last frame)."""
    with h5py_module().File(path, "r") as f:
        steps = list(f["frames/step"][()])
        k = len(steps) - 1 if step is None else steps.index(step)
        g = f[f"frames/{k:06d}/bodies"]
        o = np.argsort(g["gid"][()])
        return int(steps[k]), np.hstack([g[n][()][o] for n in "xqvw"])


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return tmp_path_factory.mktemp("reliability")


@pytest.fixture(scope="module")
def reference(base):
    """The uninterrupted run, serial, a frame every step."""
    d = folder(base, "reference")
    p = run(d, 1, "--", "--frames", str(H))
    assert p.returncode == 0, p.stderr
    return d / "res.h5"


def restarts_exactly(d, reference, ranks=1, extra=2):
    """Restart from the newest checkpoint for `extra` steps: equal to the reference."""
    newest = checkpoint.newest(str(d / "checkpoints"))
    assert newest is not None, os.listdir(d)
    with h5py_module().File(newest, "r") as f:
        step = int(f.attrs["step"])
    p = run(d, ranks, "--restart", "auto", "--", "--duration", str((step + extra) * H))
    assert p.returncode == 0 and f"restarting from {os.path.relpath(newest, d)}" in p.stdout, \
        p.stdout + p.stderr
    last, x = state(d / f"res.restart-{step:09d}.h5")
    assert last == step + extra
    np.testing.assert_array_equal(x, state(reference, last)[1])
    return step


def test_signals_at_random_steps_end_with_3_and_a_checkpoint_that_restarts_exactly(base,
                                                                                    reference):
    """20 tries: SIGUSR1 to mpirun (as SLURM's --signal sends it) or SIGTERM to every rank, each
    at a random step (the run tells its step: a loaded machine slows the steps, not the
    draw)."""
    rng = random.Random(13)
    steps = []
    for k in range(20):
        d = folder(base, f"signal{k}")
        p = start(d, 2)
        wait_for_step(d, rng.randint(2, STEPS - 50), p)
        if k % 2 == 0:
            p.send_signal(signal.SIGUSR1)
        else:
            for pid in ranks_of(p):
                os.kill(pid, signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 3, (k, out, err)
        assert "ended by signal" in out
        assert len(os.listdir(d / "checkpoints")) == 1
        steps.append(restarts_exactly(d, reference))
        shutil.rmtree(d)
    assert len(set(steps)) >= 5                       # the signals did land at random steps


def test_sigterm_to_mpirun_leaves_the_newest_complete_checkpoint_restartable(base, reference):
    """Open MPI's mpirun forwards SIGTERM, then kills the ranks about 1 s later and exits with 1
    (it imposes both): whatever the ranks managed, the newest complete checkpoint restarts."""
    d = folder(base, "sigterm-mpirun")
    p = start(d, 2, "--checkpoint-every", "40")
    wait_for(d / "checkpoints" / "checkpoint-000000080.h5", p)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=120)
    assert p.returncode != 0
    assert not [n for n in os.listdir(d / "checkpoints") if n.endswith(".h5") and
                n + ".tmp" in os.listdir(d / "checkpoints")]
    assert restarts_exactly(d, reference) >= 80


def test_a_rank_killed_mid_run_loses_nothing_before_the_last_checkpoint(base, reference):
    d = folder(base, "killed")
    p = run(d, 2, "--checkpoint-every", "50", faults="kill@solve:rank=1:step=130")
    assert p.returncode not in (0, 2, 3), p.stderr
    # the results file is readable by h5py and parsolve info, up to the last closed segment
    history = read_history(d / "res.h5")
    assert len(history["step"]) >= 100
    np.testing.assert_array_equal(history["step"], np.arange(1, len(history["step"]) + 1))
    info = subprocess.run(PARSOLVE + ["info", "res.h5"], cwd=d, env=ENV, capture_output=True,
                          text=True)
    assert info.returncode == 0 and "not closed" in info.stdout, info.stdout + info.stderr
    # the restarted leg continues the history without a gap: the joined history is the
    # uninterrupted run's, and so is the last state
    q = run(d, 3, "--restart", "auto")
    assert q.returncode == 0, q.stderr
    joined, full = read_history(d / "res.restart-000000100.h5"), read_history(reference)
    for name in PHYSICS:
        np.testing.assert_array_equal(joined[name], full[name], err_msg=name)
    np.testing.assert_array_equal(state(d / "res.restart-000000100.h5")[1],
                                  state(reference, STEPS)[1])


def test_a_second_signal_during_the_checkpoint_write_does_not_corrupt_it(base, reference):
    d = folder(base, "twice")
    p = start(d, 2, faults=SLOW + ";delay@checkpoint-dataset:seconds=0.1")
    wait_for(d / "res.h5", p)
    time.sleep(0.5)
    p.send_signal(signal.SIGUSR1)
    wait_for(d / "checkpoints", p)
    time.sleep(0.3)                                    # inside the write of its datasets
    p.send_signal(signal.SIGUSR1)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 3, err
    restarts_exactly(d, reference)


def test_a_byte_flipped_anywhere_in_a_checkpoint_dataset_is_refused(base):
    d = folder(base, "flip")
    p = run(d, 1, "--checkpoint-every", "60", "--", "--duration", str(60 * H))
    assert p.returncode == 0, p.stderr
    good = d / "checkpoints" / "checkpoint-000000060.h5"
    h5py = h5py_module()
    with h5py.File(good, "r") as f:
        fingerprint = f.attrs["model_fingerprint"]
        places = {f"/{g}/{n}": (f[g][n].id.get_offset(), f[g][n].id.get_storage_size())
                  for g in ("bodies", "contacts") for n in f[g]}
    assert len(places) == sum(len(c) for c in checkpoint.GROUPS.values()) \
        and all(size > 0 for _, size in places.values())
    comm = Comm()
    rng = np.random.default_rng(5)
    bad = d / "bad.h5"
    for name, (offset, size) in places.items():
        data = bytearray(good.read_bytes())
        at = offset + int(rng.integers(size))
        data[at] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(data))
        with pytest.raises(FileFormatError, match=f"dataset {name} fails its checksum"):
            checkpoint.read(str(bad), comm, fingerprint)
    checkpoint.read(str(good), comm, fingerprint)     # the intact file still reads
    p = run(d, 2, "--restart", "bad.h5")                 # and through the command line
    assert p.returncode == 2 and p.stderr.count("fails its checksum") == 1, p.stderr
    assert "(all ranks)" in p.stderr


def test_restart_auto_skips_a_damaged_newest_checkpoint(base, reference):
    """A batch chain must not end on one damaged file: auto takes the newest intact one."""
    d = folder(base, "auto-damaged")
    p = run(d, 2, "--checkpoint-every", "30", "--", "--duration", str(60 * H))
    assert p.returncode == 0, p.stderr
    newest = d / "checkpoints" / "checkpoint-000000060.h5"
    with h5py_module().File(newest, "r") as f:
        at = f["bodies/v"].id.get_offset() + 100
    data = bytearray(newest.read_bytes())
    data[at] ^= 0x10
    newest.write_bytes(bytes(data))
    q = run(d, 2, "--restart", "auto", "--", "--duration", str(62 * H))
    assert q.returncode == 0, q.stderr
    assert "skipping a damaged checkpoint" in q.stdout and "/bodies/v fails its checksum" in \
        q.stdout and "restarting from checkpoints/checkpoint-000000030.h5" in q.stdout
    np.testing.assert_array_equal(state(d / "res.restart-000000030.h5")[1],
                                  state(reference, 62)[1])


GUARDS = """
import numpy as np
import parsolve as ps
m = ps.Model()
m.surface("g", "g", friction=0.3)
m.half_space((0, 0, 0), (0, 0, 1), "g")
m.spheres([(0.0, 0.0, 0.5), (0.0, 0.0, 0.5), (1.0, 0.0, 0.05)], 0.05, "g", density=1000)
m.sphere((3.0, 0.0, 2.0), 0.1, "g", density=1000)
m.run({duration}, {step}, output="res.h5", progress=0, guards="{mode}")
"""


def test_guards_name_coincident_bodies_and_a_step_that_tunnels(base):
    d = folder(base, "guards", GUARDS.format(duration=1.0, step=0.5, mode="warn"))
    p = run(d, 2)
    assert p.returncode == 0, p.stderr
    assert "body 0 and body 1 overlap by 0.1 m, 200% of the smaller radius" in p.stdout
    assert p.stdout.count("body 0 and body 1 overlap") == 1           # once, by rank 0
    assert "body 3 moved" in p.stdout and "times its radius" in p.stdout
    assert "physics guards:" in p.stdout
    d = folder(base, "guards-error", GUARDS.format(duration=1.0, step=0.5, mode="error"))
    p = run(d, 2)
    assert p.returncode == 2 and "unphysical state" in p.stderr and "body 0 and body 1" in \
        p.stderr and p.stderr.count("unphysical state") == 1, p.stderr
    with h5py_module().File(d / "res.h5", "r") as f:                    # nothing written is lost
        assert f.attrs["complete"] and f["frames/step"][0] == 0
    d = folder(base, "guards-quiet", GUARDS.format(duration=0.05, step=1e-3, mode="warn")
               .replace("(0.0, 0.0, 0.5), (0.0, 0.0, 0.5)", "(0.0, 0.0, 0.5), (0.5, 0.0, 0.5)"))
    p = run(d, 1)
    assert p.returncode == 0 and "warning" not in p.stdout, p.stdout


SCRIPT_ERRORS = {
    "syntax": ("import parsolve as ps\nm = ps.Model(\n", 1, "SyntaxError"),
    "script": ("import parsolve as ps\nm = ps.Model()\nraise ValueError('my model is wrong')\n",
               1, "ValueError: my model is wrong"),
    "nan everywhere": ("import parsolve as ps\nm = ps.Model()\nm.surface('g', 'g', 0.3)\n"
                       "m.sphere((float('nan'), 0, 0), 0.1, 'g', density=1)\n"
                       "m.run(0.01, 1e-3)\n", 2, "not a finite number"),
    "nan on one rank": (
        "import numpy as np\nimport parsolve as ps\nm = ps.Model()\nm.surface('g', 'g', 0.3)\n"
        "def make(ids):\n    x = np.stack([ids * 0.3, 0 * ids, 0 * ids], 1).astype(float)\n"
        "    x[ids == 9] = np.nan\n    return {'centers': x, 'radii': 0.1 + 0 * x[:, 0]}\n"
        "m.sphere_generator(10, make, 'g', density=1)\nm.run(0.01, 1e-3)\n", 2, "body 9"),
}


@pytest.mark.parametrize("case", sorted(SCRIPT_ERRORS))
def test_errors_are_said_once_by_rank_0_with_the_scripts_frames_only(base, case):
    script, code, message = SCRIPT_ERRORS[case]
    d = folder(base, "error-" + case.replace(" ", "-"), script)
    p = run(d, 2, timeout=60)
    assert p.returncode == code, p.stderr
    assert p.stderr.count(message) == 1, p.stderr
    assert "runpy" not in p.stderr and "parsolve/cli.py" not in p.stderr, p.stderr
    if case == "nan on one rank":
        assert "(rank 1)" in p.stderr, p.stderr
    elif case != "syntax":
        assert "(all ranks)" in p.stderr, p.stderr


def test_a_failure_on_one_rank_outside_any_collective_ends_every_rank(base):
    d = folder(base, "raise-one-rank")
    p = run(d, 2, timeout=60, faults="raise@detect:rank=1:step=3")
    assert p.returncode == 1, p.stderr
    assert "(rank 1)" in p.stderr and "fault injected at detect (step 3, rank 1)" in p.stderr
