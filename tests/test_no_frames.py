"""frames=0 means no frames (issue 38): the run writes its history, checkpoints and summary
but not one frame, `parsolve info` and the XDMF writer read such a file; a negative interval
is an InputError; `parsolve run --frames 0` overrides the script's."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.io.hdf5 import h5py_module
from parsolve.io.results import read_history
from parsolve.io.xdmf import write_xdmf
from parsolve.run import Simulation

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = 1e-3


def ball():
    m = ps.Model()
    m.surface("g", "g", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    m.sphere((0, 0, 0.0995), 0.1, "g", density=1000)
    return m


def test_frames_0_writes_no_frame_and_the_rest_as_usual(tmp_path):
    out = str(tmp_path / "res.h5")
    summary = Simulation(ball(), step=H, output=out, frames=0, progress=0, quiet=True,
                         checkpoint_every=5, checkpoint_dir=str(tmp_path / "ck")).run(10 * H)
    assert summary["steps"] == 10
    with h5py_module().File(out, "r") as f:
        assert f["frames/time"].shape == (0,) and f.attrs["complete"]
    h = read_history(out)
    assert len(h["step"]) == 10 and np.all(np.diff(h["time"]) > 0)
    assert len([n for n in os.listdir(tmp_path / "ck") if n.endswith(".h5")]) >= 1
    with open(write_xdmf(out)) as f:                    # an index of nothing, still valid
        xdmf = f.read()
    assert "<Domain>" in xdmf and "Grid" not in xdmf
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "info", out], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "frames: 0" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "measure", out,
                        "--grid=grid:-1,-1,-1,1,1,1,2,2,2", "--no-plots"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "has no frames to measure" in p.stderr, p.stderr


@pytest.mark.parametrize("frames", [-0.01, float("nan")])
def test_a_negative_or_undefined_interval_is_refused(frames):
    with pytest.raises(InputError, match="frames"):
        Simulation(ball(), step=H, frames=frames, progress=0, quiet=True)


def test_the_command_line_frames_0_overrides_the_script(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import parsolve as ps
        m = ps.Model()
        m.surface("g", "g", friction=0.3)
        m.sphere((0, 0, 0), 0.1, "g", density=1000)
        m.run(0.01, 1e-3, output="res.h5", frames=0.002, progress=0)
        """))
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "run", "model.py", "--frames",
                        "0"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    with h5py_module().File(tmp_path / "res.h5", "r") as f:
        assert f["frames/time"].shape == (0,) and f["history/step"].shape == (10,)
