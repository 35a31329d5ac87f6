"""FCLIB local problems: exact round trips in the three CSparse forms, a step of a run exported
and solved by `parsolve fclib solve` to the run's own reactions, and every bad file refused
with exit code 2 and the problem named."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import parsolve as ps
from parsolve import FileFormatError
from parsolve.io import fclib
from parsolve.io.hdf5 import h5py_module
from parsolve.run import Simulation
from parsolve.solvers.residual import residual_from_velocity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)


def column(n=10, mu=0.3):
    m = ps.Model()
    m.surface("g", "g", friction=mu)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    m.spheres(np.array([[0, 0, 0.01 + 0.02 * k] for k in range(n)]), 0.01, "g", density=1000)
    return m


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Step 5 of a column run exported, with the run's own reactions of that step."""
    path = str(tmp_path_factory.mktemp("fclib") / "column.h5")
    sim = Simulation(column(), 1e-3, solver=ps.GaussSeidel(tol=1e-12, max_iter=20000),
                     progress=0, quiet=True)
    fclib.export_step(sim, path, 5)
    sim.run(5e-3)
    return path, sim.contacts.R.copy()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "parsolve.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120)


@pytest.mark.parametrize("form", ["csc", "csr", "triplet"])
def test_round_trip_is_exact(exported, tmp_path, form):
    p = fclib.read(exported[0])
    out = str(tmp_path / f"{form}.h5")
    fclib.write(out, p, form=form)
    with h5py_module().File(out, "r") as f:
        assert f["fclib_local/W/nz"][()] == fclib.FORMS[form] or form == "triplet"
    q = fclib.read(out)
    for name in ("indptr", "indices", "blocks", "diag", "q", "mu"):
        np.testing.assert_array_equal(getattr(q, name), getattr(p, name), err_msg=name)


def test_the_exported_step_solves_to_the_runs_reactions(exported, tmp_path):
    path, R_run = exported
    p = fclib.read(path)
    assert p.n == 10 and "step 5" in p.title
    for solver in ("gs", "newton", "hybrid", "ipm"):
        out = str(tmp_path / f"{solver}.h5")
        r = cli("fclib", "solve", path, "--solver", solver, "--tol", "1e-11",
                "--max-iter", "20000", "--out", out)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().splitlines()
        assert len(lines) == 1
        rec = json.loads(lines[0])
        assert {"contacts", "solver", "local", "iterations", "residual", "seconds",
                "converged"} <= set(rec)
        assert rec["contacts"] == 10 and rec["converged"] and rec["residual"] <= 1e-11
        with h5py_module().File(out, "r") as f:
            R, U = f["solution/r"][()].reshape(-1, 3), f["solution/u"][()].reshape(-1, 3)
        np.testing.assert_allclose(U, p.matvec(R) + p.q, rtol=0, atol=1e-14)
        assert residual_from_velocity(R, U, p.q, p.mu) == pytest.approx(rec["residual"])
        # a column on a floor: W is regular, the solution unique, and equal to the run's
        np.testing.assert_allclose(R, R_run, rtol=0, atol=1e-8 * np.abs(R_run).max())


@pytest.mark.parametrize("local", ["projection", "quartic", "newton", "auto", "warm"])
def test_every_local_solver_through_the_command_line(exported, local):
    r = cli("fclib", "solve", exported[0], "--local", local, "--tol", "1e-9",
            "--max-iter", "20000")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["local"] == local and rec["converged"] and rec["residual"] <= 1e-9


def test_export_through_parsolve_run(tmp_path):
    (tmp_path / "model.py").write_text(
        "import numpy as np, parsolve as ps\n"
        "m = ps.Model()\nm.surface('g', 'g', friction=0.5)\n"
        "m.half_space((0, 0, 0), (0, 0, 1), 'g')\n"
        "m.spheres(np.array([[0, 0, 0.01 + 0.02 * k] for k in range(4)]), 0.01, 'g', "
        "density=1000)\nm.run(0.005, 1e-3, progress=0)\n")
    r = subprocess.run([sys.executable, "-m", "parsolve.cli", "run", "model.py",
                        "--fclib-step", "3", "--fclib-out", "s3.h5"], cwd=tmp_path, env=ENV,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert fclib.read(str(tmp_path / "s3.h5")).n == 4


def corrupt(src, dst, edit):
    with h5py_module().File(src, "r") as f, h5py_module().File(dst, "w") as g:
        f.copy("fclib_local", g)
        edit(g["fclib_local"])


BAD = {
    "missing q": (lambda g: g["vectors"].__delitem__("q"), "vectors/q is missing"),
    "short q": (lambda g: (g["vectors"].__delitem__("q"), g["vectors"].create_dataset(
        "q", data=np.zeros(5))), "q has 5 entries"),
    "short mu": (lambda g: (g["vectors"].__delitem__("mu"), g["vectors"].create_dataset(
        "mu", data=np.zeros(3))), "mu has 3 entries for 10 contacts"),
    "negative mu": (lambda g: g["vectors/mu"].__setitem__(4, -0.1), "contact 4 has friction"),
    "nan in W": (lambda g: g["W/x"].__setitem__(2, np.nan), "W/x holds NaN"),
    "2-D": (lambda g: (g.__delitem__("spacedim"), g.create_dataset("spacedim", data=2)),
            "spacedim is 2"),
    "bad pointers": (lambda g: g["W/p"].__setitem__(3, 10 ** 6), "pointers p"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_exit_2_naming_the_problem(exported, tmp_path, case):
    edit, message = BAD[case]
    bad = str(tmp_path / "bad.h5")
    corrupt(exported[0], bad, edit)
    with pytest.raises(FileFormatError, match=message.replace("(", r"\(")):
        fclib.read(bad)
    r = cli("fclib", "solve", bad)
    assert r.returncode == 2 and message in r.stderr and r.stdout == ""


def test_not_hdf5_or_not_fclib(tmp_path):
    (tmp_path / "text.h5").write_text("not hdf5")
    with h5py_module().File(tmp_path / "other.h5", "w") as f:
        f["x"] = 1
    for name, message in (("text.h5", "not a readable HDF5"), ("other.h5", "no /fclib_local"),
                          ("none.h5", "no such FCLIB file")):
        r = cli("fclib", "info", str(tmp_path / name))
        assert r.returncode == 2 and message in r.stderr


def test_siconos_solves_our_problem_to_the_same_reactions(exported):
    sn = pytest.importorskip("siconos.numerics")
    p = fclib.read(exported[0])
    problem = sn.FrictionContactProblem(3, p.dense(), p.q.reshape(-1).copy(), p.mu.copy())
    options = sn.SolverOptions(sn.SICONOS_FRICTION_3D_NSGS)
    options.dparam[sn.SICONOS_DPARAM_TOL] = 1e-12
    options.iparam[sn.SICONOS_IPARAM_MAX_ITER] = 100000
    r, u = np.zeros(3 * p.n), np.zeros(3 * p.n)
    assert sn.fc3d_nsgs(problem, r, u, options) == 0
    np.testing.assert_allclose(r.reshape(-1, 3), exported[1], rtol=0,
                               atol=1e-8 * np.abs(exported[1]).max())


SICONOS = {form: os.path.join(ROOT, "tests", "data", f"siconos_{form}.dat")
           for form in ("dense", "sbm")}


def test_siconos_text_problems_read_in_both_storages():
    """tests/data/siconos_*.dat were written by Siconos' own frictionContact_printInFilename
    (python3-siconos 4.4) from one unsymmetric W (block (0, 1) zero), dense and sparse block:
    both give that W, with Siconos' column-major blocks turned the right way round."""
    dense, sbm = (fclib.read(SICONOS[f]) for f in ("dense", "sbm"))
    Ws = []
    for p in (dense, sbm):
        Ws.append(p.dense())
        np.testing.assert_array_equal(p.q.reshape(-1), np.arange(6.0) - 2.5)
        np.testing.assert_array_equal(p.mu, [0.3, 0.7])
    np.testing.assert_array_equal(Ws[0], Ws[1])
    W = Ws[0]
    assert W[3, 0] == 4.116305363741328271487419e-01 and W[0, 3] == 0.0   # the file's digits
    assert W[1, 0] == 1.304000045130137230842138 and W[0, 1] == -1.321048632913018883172640e-01
    assert len(sbm.blocks) == 3 and sbm.indices.tolist() == [0, 0, 1]   # no block (0, 1)


def test_a_siconos_text_problem_solves_through_the_command_line():
    r = cli("fclib", "solve", SICONOS["sbm"], "--tol", "1e-12")
    record = json.loads(r.stdout)
    assert r.returncode == 0 and record["converged"] and record["residual"] <= 1e-12
    p = fclib.read(SICONOS["sbm"])
    R, U, report = fclib.solve(p, tol=1e-12)
    assert report.converged
    for a in range(p.n):                          # Signorini-Coulomb, contact by contact
        assert R[a, 0] >= 0 and np.hypot(*R[a, 1:]) <= p.mu[a] * R[a, 0] * (1 + 1e-9)
        assert U[a, 0] >= -1e-10 and abs(R[a, 0] * U[a, 0]) <= 1e-10


BAD_SICONOS = {
    "truncated": (lambda t: t[:len(t) // 2], "ends inside"),
    "2-D": (lambda t: "2" + t[1:], "dimension 2"),
    "sparse storage": (lambda t: t.replace("\n1\n6\n6\n", "\n2\n6\n6\n", 1), "storage 2"),
    "block numbers": (lambda t: t.replace("\n1\n  4.1163", "\n7\n  4.1163", 1),
                      "block 1 is not numbered 1"),
    "not numbers": (lambda t: t.replace("6.947080963129241837350492e+00", "W?"),
                    "not a Siconos text problem"),
}


@pytest.mark.parametrize("case", sorted(BAD_SICONOS))
def test_bad_siconos_text_files_exit_2_naming_the_problem(tmp_path, case):
    edit, message = BAD_SICONOS[case]
    bad = tmp_path / "bad.dat"
    with open(SICONOS["sbm"]) as f:
        bad.write_text(edit(f.read()))
    with pytest.raises(FileFormatError, match=message):
        fclib.read(str(bad))
    r = cli("fclib", "solve", str(bad))
    assert r.returncode == 2 and message in r.stderr and str(bad) in r.stderr
