"""The law rooms: each law's compiled kernels equal their Python twins, the one dispatcher
serves rows of several laws in one sweep, and the solvers meet each law's own conditions
(parsolve/laws, kernels/law.pxd)."""
import os

import numpy as np
import pytest

from parsolve import laws
from parsolve.laws import bilateral, coulomb
from parsolve.laws.codes import KINDS, METHODS, OUTCOMES
from parsolve.solvers import GaussSeidel, Problem, kernels, twins
from parsolve.solvers import SemismoothNewton

ROOT = os.path.join(os.path.dirname(__file__), "..")


def dense_problem(n, seed, kinds, m=(3, 1, 2), mu=0.3):
    """n rows of a dense SPD W (all blocks present, block CSR), B, and rows of the given
    kinds: bilateral rows cycle through m equalities, contacts have friction mu."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(3 * n, 3 * n + 9))
    W = H @ H.T / (3 * n) + 0.5 * np.eye(3 * n)
    indptr = np.arange(0, n * n + 1, n, dtype=np.int64)
    indices = np.tile(np.arange(n, dtype=np.int64), n)
    blocks = np.array([W[3 * a:3 * a + 3, 3 * c:3 * c + 3] for a in range(n) for c in range(n)])
    diag = np.arange(n, dtype=np.int64) * (n + 1)
    B = rng.normal(size=(n, 3)) - [0.5, 0.0, 0.0]
    kind = np.array([kinds[a % len(kinds)] for a in range(n)], np.int8)
    param = np.zeros((n, coulomb.SOLVE_PARAMS))
    param[kind == coulomb.KIND, 0] = mu
    bil = np.flatnonzero(kind == bilateral.KIND)
    param[bil, 0] = [m[k % len(m)] for k in range(len(bil))]
    return W, indptr, indices, blocks, diag, B, kind, param


def test_the_compiled_codes_are_the_python_ones():
    """kernels/codes.pxd is generated from laws/codes.py (one source for both languages)."""
    text = open(os.path.join(ROOT, "kernels", "codes.pxd")).read()
    for prefix, names in (("KIND", KINDS), ("LOCAL", OUTCOMES), ("METHOD", METHODS)):
        for i, name in enumerate(names):
            assert f"    {prefix}_{name.upper()} = {i}\n" in text
    W = np.diag([2.0, 3.0, 4.0])
    r, code = kernels.row_solve(bilateral.KIND, W, np.array([-2.0, 3.0, 4.0]), np.array([3.0]))
    assert OUTCOMES[code] == "bilateral" and np.allclose(r, [1.0, -1.0, -1.0])


@pytest.mark.parametrize("m", [1, 2, 3])
def test_bilateral_row_solve_kernel_equals_twin_and_meets_the_law(m):
    rng = np.random.default_rng(m)
    for _ in range(200):
        A = rng.normal(size=(3, 3))
        W = A @ A.T + 0.1 * np.eye(3)
        b, r0 = rng.normal(size=3), rng.normal(size=3)
        p = np.array([float(m)])
        got, code = kernels.row_solve(bilateral.KIND, W, b, p, r0)
        want, wcode = laws.row_solve(bilateral.KIND, W, b, p, r0)
        assert code == wcode == OUTCOMES.index("bilateral")
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
        u = W @ got + b
        assert np.abs(u[:m]).max() <= 1e-12 * (1 + np.abs(b).max())      # the equalities
        assert (got[m:] == 0.0).all()                                      # no reaction
        assert laws.residual_sq(bilateral.KIND, p, got, u) <= 1e-22 * (1 + b @ b)


def test_a_singular_bilateral_block_fails_and_keeps_the_warm_start():
    W, b, r0 = np.zeros((3, 3)), np.ones(3), np.array([1.0, 2.0, 3.0])
    for m in (1, 2, 3):
        for impl in (kernels.row_solve, laws.row_solve):
            r, code = impl(bilateral.KIND, W, b, np.array([float(m)]), r0)
            assert OUTCOMES[code] == "failed" and np.array_equal(r, r0)


def kernels_equal_twins(problem, outcome, count):
    """Four sweeps, the residual, the Newton parts, Alart-Curnier's Phi, A, B and the
    projection of a mixed problem (dense_problem's blocks) compiled and in Python: the same
    iterates and numbers, and `count` local solves with `outcome`. Returns (R, U)."""
    indptr, indices, blocks, diag, B, kind, param = problem
    order = np.arange(len(B), dtype=np.int64)
    n = len(B)
    R1, R2 = np.zeros((n, 3)), np.zeros((n, 3))
    c1, c2 = np.zeros(len(OUTCOMES), np.int64), np.zeros(len(OUTCOMES), np.int64)
    for _ in range(4):
        d1 = kernels.gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R1, order,
                                        1.0, c1)
        d2 = twins.gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R2, order,
                                      1.0, c2)
        assert d1 == pytest.approx(d2, rel=1e-12)
    np.testing.assert_allclose(R1, R2, rtol=1e-12, atol=1e-12)
    assert (c1 == c2).all() and c1[OUTCOMES.index(outcome)] == count
    U1, U2 = np.empty((n, 3)), np.empty((n, 3))
    e1 = kernels.delassus_residual(indptr, indices, blocks, B, kind, param, R1, U1)
    e2 = twins.delassus_residual(indptr, indices, blocks, B, kind, param, R1, U2)
    np.testing.assert_allclose(e1, e2, rtol=1e-12)
    rho = np.ones(n)
    V = U1 + 0.1
    got, want = np.empty((n, 6)), np.empty((n, 6))
    kernels.newton_parts(kind, param, R1, U1, V, B, rho, 2 * rho, got)
    twins.newton_parts(kind, param, R1, U1, V, B, rho, 2 * rho, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    Phi, A, Bj = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3))
    kernels.alart_curnier(kind, param, R1, U1, rho, 2 * rho, Phi, A, Bj)
    for got, want in zip((Phi, A, Bj), laws.phi_rows(kind, param, R1, U1, rho, 2 * rho)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    Z1, Z2 = R1 + 1.0, R1 + 1.0
    kernels.project_admissible(kind, param, Z1)
    twins.project_admissible(kind, param, Z2)
    np.testing.assert_allclose(Z1, Z2, rtol=0, atol=1e-14)
    return R1, U1


def test_mixed_sweeps_residuals_and_newton_parts_equal_their_twins():
    """Contacts and bilateral rows in one sweep: the compiled loop over the dispatcher gives
    the twin's iterates, outcome counts and residual parts."""
    W, *problem = dense_problem(12, 1, (0, 1, 0))
    kernels_equal_twins(problem, "bilateral", 4 * 4)


@pytest.mark.parametrize("solver", [GaussSeidel(tol=1e-12, max_iter=20000),
                                    SemismoothNewton(tol=1e-12)], ids=["gs", "newton"])
def test_bilateral_rows_alone_give_the_linear_solution(solver):
    """Only equalities: W_EE R_E = -B_E on the constrained components, R = 0 on the others."""
    W, indptr, indices, blocks, diag, B, kind, param = dense_problem(9, 2, (1,))
    eq = (np.arange(3)[None, :] < param[:, :1]).reshape(-1)
    exact = np.zeros(27)
    exact[eq] = np.linalg.solve(W[np.ix_(eq, eq)], -B.reshape(-1)[eq])
    R = np.zeros((9, 3))
    report = solver.solve(Problem.rows(indptr, indices, blocks, diag, B, kind, param), R)
    assert report.converged
    np.testing.assert_allclose(R.reshape(-1), exact, rtol=0, atol=1e-9 * np.abs(exact).max())


def test_mixed_rows_meet_each_law_and_both_solvers_agree():
    W, indptr, indices, blocks, diag, B, kind, param = dense_problem(12, 3, (0, 1, 0), mu=0.2)
    sols = {}
    for name, solver in (("gs", GaussSeidel(tol=1e-11, max_iter=50000)),
                         ("newton", SemismoothNewton(tol=1e-11))):
        R = np.zeros((12, 3))
        assert solver.solve(Problem.rows(indptr, indices, blocks, diag, B, kind, param),
                            R).converged
        U = (W @ R.reshape(-1)).reshape(-1, 3) + B
        scale = np.abs(B).max()
        con, bil = kind == coulomb.KIND, kind == bilateral.KIND
        m = param[bil, 0].astype(int)
        for Ub, Rb, mb in zip(U[bil], R[bil], m):                  # equalities, no reaction
            assert np.abs(Ub[:mb]).max() <= 1e-9 * scale and (Rb[mb:] == 0).all()
        Rc, Uc = R[con], U[con]                                    # Signorini-Coulomb
        assert (Rc[:, 0] >= -1e-12).all() and (Uc[:, 0] >= -1e-9 * scale).all()
        assert np.abs(Rc[:, 0] * Uc[:, 0]).max() <= 1e-9 * scale ** 2
        assert (np.hypot(Rc[:, 1], Rc[:, 2]) <= 0.2 * Rc[:, 0] * (1 + 1e-9) + 1e-12).all()
        assert (Rc[:, 0] > 0).any() and (Uc[:, 0] > 1e-6).any()   # some in contact, some open
        sols[name] = R
    np.testing.assert_allclose(sols["gs"], sols["newton"], atol=1e-8 * np.abs(sols["gs"]).max())


def test_a_run_on_the_python_twins_follows_the_compiled_run():
    """PARSOLVE_KERNELS=python swaps every kernel for its twin: the same run, up to round-off
    (same iterations, same contacts, positions to 1e-12)."""
    import json
    import subprocess
    import sys

    script = ("import json, sys; sys.path.insert(0, 'tests'); import fingerprint as f; "
              "import numpy as np; from parsolve.solvers import kernels; "
              "from parsolve.run import Simulation; "
              "make, h, _, solver = f.CASES['spheres_gs']; "
              "s = Simulation(make(), step=h, solver=solver(), progress=0, quiet=True, "
              "verify_every=0); rows = [s.step() for _ in range(12)]; "
              "print(json.dumps({'compiled': kernels.COMPILED, "
              "'it': [r['iterations'] for r in rows], 'n': [r['contacts'] for r in rows], "
              "'x': s.owned.x.tolist()}))")
    out = {}
    for mode in ("compiled", "python"):
        env = dict(os.environ, PARSOLVE_KERNELS=mode)
        p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        out[mode] = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["compiled"]["compiled"] and not out["python"]["compiled"]
    assert out["python"]["n"] == out["compiled"]["n"] and max(out["compiled"]["it"]) > 10
    assert out["python"]["it"] == out["compiled"]["it"]
    np.testing.assert_allclose(out["python"]["x"], out["compiled"]["x"], rtol=0, atol=1e-12)
