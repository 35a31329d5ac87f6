"""The command line, end to end, in subprocesses (also under mpirun at 2 ranks)."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARSOLVE = [sys.executable, "-m", "parsolve.cli"]
MPIRUN = ["mpirun", "--oversubscribe", "-n", "2"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           PYTHONPATH=ROOT)

MODEL = """
import parsolve as ps
m = ps.Model()
m.surface("a", "floor", friction=0.3, restitution=0.5)
m.half_space((0, 0, 0), (0, 0, 1), "floor")
m.sphere((0, 0, {z}), {radius}, "a", density=1000)
m.run(0.5, 1e-3, output="never-used.h5", frames=0.1)
"""


def write(tmp_path, text, name="model.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def call(args, tmp_path, timeout=120):
    return subprocess.run(args, cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def test_run_writes_results_and_info_describes_them(tmp_path):
    script = write(tmp_path, MODEL.format(z=0.5, radius=0.1))
    out = tmp_path / "res.h5"
    p = call(PARSOLVE + ["run", script, "--output", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "run summary" in p.stdout and "steps 500" in p.stdout
    assert out.exists() and not (tmp_path / "never-used.h5").exists()
    p = call(PARSOLVE + ["info", str(out)], tmp_path)
    assert p.returncode == 0 and "history: 500 steps" in p.stdout and "frames: 6" in p.stdout


def test_bad_input_exits_2_naming_the_culprit(tmp_path):
    script = write(tmp_path, MODEL.format(z=0.5, radius=-0.1))
    p = call(PARSOLVE + ["run", script], tmp_path)
    assert p.returncode == 2
    assert "parsolve: error: body 0: radius must be a finite number > 0, got -0.1" in p.stderr


def test_info_refuses_a_foreign_or_corrupt_file(tmp_path):
    bad = tmp_path / "junk.h5"
    bad.write_bytes(b"not hdf5 at all" * 10)
    p = call(PARSOLVE + ["info", str(bad)], tmp_path)
    assert p.returncode == 2 and "not a readable HDF5 file" in p.stderr


@pytest.mark.parametrize("rank_with_error", [0, 1])
def test_error_on_one_rank_ends_every_rank_quickly(tmp_path, rank_with_error):
    script = write(tmp_path, f"""
        from mpi4py import MPI
        import parsolve as ps
        m = ps.Model()
        m.surface("a", "f", friction=0.1)
        m.half_space((0, 0, 0), (0, 0, 1), "f")
        bad = MPI.COMM_WORLD.Get_rank() == {rank_with_error}
        m.sphere((0, 0, 1), -1.0 if bad else 0.1, "a", density=1.0)
        MPI.COMM_WORLD.Barrier()     # the healthy rank waits in a collective
    """)
    t0 = time.time()
    p = call(MPIRUN + PARSOLVE + ["run", script], tmp_path, timeout=60)
    assert time.time() - t0 < 30
    assert p.returncode != 0
    assert "body 0: radius must be a finite number > 0, got -1.0" in p.stderr


def test_mpirun_one_rank_runs_the_model(tmp_path):
    script = write(tmp_path, MODEL.format(z=0.5, radius=0.1))
    p = call(["mpirun", "-n", "1"] + PARSOLVE + ["run", script, "--output", "r.h5"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.h5").exists()
