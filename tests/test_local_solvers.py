"""The local solvers of one contact (kernels/local.pxd, quartic.pxd) against Signorini-Coulomb's
law, against their pure-Python twins, and against each other; the special cases of the quartic
sliding solve (seed 004 ch. 12); the local solver chosen per Gauss-Seidel solve."""
import math

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from parsolve import InputError
from parsolve.solvers import GaussSeidel, Problem, kernels
from parsolve.laws import coulomb_local as ref
from parsolve.laws.codes import METHODS as LOCAL_SOLVERS, OUTCOMES as CODE_NAMES

METHODS = {name: i for i, name in enumerate(LOCAL_SOLVERS)}
EXACT = ("auto", "quartic", "newton", "warm")  # solve every SPD problem; projection may stall


def residual(W, b, mu, r):
    """Natural-map residual of (u = W r + b, r), scaled as the kernels accept it."""
    scale = np.abs(b).sum() + np.abs(r).sum()
    e = ref.natural_map(r, W @ r + b, mu)
    return e / scale if scale > 0 else e


def in_cone(r, mu):
    # to round-off: |r_T| may underflow to a denormal where mu r_N is exactly 0
    return r[0] >= 0.0 and math.hypot(r[1], r[2]) <= mu * r[0] * (1 + 1e-12) + 1e-14 * abs(r).max()


@st.composite
def problems(draw, mu_max=2.0):
    """A symmetric positive definite W (condition number up to ~1e4), a free velocity b, mu."""
    angles = draw(st.lists(st.floats(-math.pi, math.pi), min_size=3, max_size=3))
    eig = draw(st.lists(st.floats(1e-4, 1.0), min_size=3, max_size=3))
    a, bb, c = angles
    Rz = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    Ry = np.array([[math.cos(bb), 0, math.sin(bb)], [0, 1, 0], [-math.sin(bb), 0, math.cos(bb)]])
    Rx = np.array([[1, 0, 0], [0, math.cos(c), -math.sin(c)], [0, math.sin(c), math.cos(c)]])
    Q = Rz @ Ry @ Rx
    W = Q @ np.diag(eig) @ Q.T
    W = 0.5 * (W + W.T)
    # velocities below 1e-12 are zero (subnormal reactions would test underflow, not the law)
    comp = st.floats(-1.0, 1.0).map(lambda x: 0.0 if abs(x) < 1e-12 else x)
    b = np.array(draw(st.lists(comp, min_size=3, max_size=3)))
    mu = draw(st.floats(0.0, mu_max))
    return W, b, mu


# near a CI draw: the compiled local Newton stops, its twin falls back to the quartic
NEWTON_OR_QUARTIC = (np.array([[0.16283946150342557, 0.2179467337392372, 0.29787983571067944],
                               [0.2179467337392372, 0.29200281256526067, 0.3989488286656533],
                               [0.29787983571067944, 0.3989488286656533, 0.5453723590823797]]),
                     np.array([-7.629394526200487e-06, 0.0, 0.9999999851292714]),
                     1.949304610490799)


@settings(deadline=None, max_examples=300)
@given(problems())
@example(NEWTON_OR_QUARTIC)
def test_each_local_solution_satisfies_the_law_and_equals_its_python_twin(p):
    W, b, mu = p
    for name in LOCAL_SOLVERS:
        r, code = kernels.local_solve(W, b, mu, None, METHODS[name])
        rp, cp = ref.local_solve(W, b, mu, None, METHODS[name])
        if ref.FAILED in (code, cp) and {code, cp} <= {ref.PROJECTION, ref.FAILED}:
            # the projection's 2000 iterations on an ill-conditioned block, not converged (or
            # the stopping test met on one side only): the same sequence, with round-off
            # (numpy's dot against the kernel's loop) amplified by the iterations
            assert np.abs(r - rp).max() <= 1e-9 * (1 + np.abs(r).max())
            continue
        if code != cp and {code, cp} == {ref.NEWTON, ref.QUARTIC}:
            # the local Newton's stopping test met on one side only (its last iterate's
            # round-off, amplified by W's conditioning): the other side falls back to the
            # quartic, which solves the same law (a CI draw: cond(W) 9e3, b_N = -7.6e-6,
            # mu = 1.95, method "newton")
            for x in (r, rp):
                assert in_cone(x, mu) and residual(W, b, mu, x) <= 1e-10, (name, x)
            continue
        # the same operations but numpy's dot against the kernel's loop: round-off, which
        # W's conditioning amplifies (up to 1e4 here: 5e-9 on a reaction of 4761, the
        # Newton local solve, b = (-0.81, 0, 0), mu = 1)
        tol = max(1e-12, 100 * np.finfo(float).eps * np.linalg.cond(W))
        assert code == cp and np.abs(r - rp).max() <= tol * (1 + np.abs(r).max()), name
        assert in_cone(r, mu), (name, r)
        if name in EXACT or code != ref.FAILED:
            assert code != ref.FAILED, name
            assert residual(W, b, mu, r) <= 1e-10, (name, CODE_NAMES[code])


@settings(deadline=None, max_examples=300)
@given(problems())
def test_quartic_and_newton_agree_where_the_solution_is_unique(p):
    # With a strong normal-tangential coupling, mu |W_NT| > W_NN (eccentricity e > 1 in seed
    # 004's words: the sliding reactions lie on a hyperbola), a contact can have two sliding
    # solutions and two correct solvers may pick different ones. With e <= 0.5 the solution
    # is unique, and quartic and Newton must agree.
    W, b, mu = p
    assume(mu * math.hypot(W[0, 1], W[0, 2]) <= 0.5 * W[0, 0])
    rq, cq = kernels.local_solve(W, b, mu, None, METHODS["quartic"])
    rn, cn = kernels.local_solve(W, b, mu, None, METHODS["newton"])
    assert cq != ref.FAILED and cn != ref.FAILED
    assert np.abs(rq - rn).max() <= 1e-8 * (1 + np.abs(rq).max())


@settings(deadline=None, max_examples=300)
@given(problems(), st.floats(-math.pi, math.pi), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_warm_slide_from_any_reaction_satisfies_the_law_and_equals_its_twin(p, angle, t, rn):
    # warm from a reaction inside or on the cone (the last sweep's), in any slip direction:
    # the Newton on the slip direction, or the chain after it, ends on a solution; where the
    # solution is unique it is auto's
    W, b, mu = p
    r0 = np.array([rn, t * mu * rn * math.cos(angle), t * mu * rn * math.sin(angle)])
    r, code = kernels.local_solve(W, b, mu, r0, METHODS["warm"])
    rp, cp = ref.local_solve(W, b, mu, r0, METHODS["warm"])
    assert code == cp and np.abs(r - rp).max() <= 1e-12 * (1 + np.abs(r).max())
    assert code != ref.FAILED and in_cone(r, mu) and residual(W, b, mu, r) <= 1e-10
    if mu * math.hypot(W[0, 1], W[0, 2]) <= 0.5 * W[0, 0]:
        ra, _ = kernels.local_solve(W, b, mu, r0, METHODS["auto"])
        assert np.abs(r - ra).max() <= 1e-8 * (1 + np.abs(ra).max())


def test_the_warm_slide_takes_newton_steps_on_the_slip_direction():
    # an anisotropic block with normal-tangential coupling, slipping along 0.7 rad: the Newton
    # alone finds the slide from 0.1 rad off and from the root itself; warm from a reaction
    # that points the other way the chain after it still does
    mu = 0.6
    rs = np.array([1.0, -mu * math.cos(0.7), -mu * math.sin(0.7)])
    b = sliding_problem(W_ANISO, rs, 0.8, mu)
    for theta in (0.8, 0.7, 0.3):
        np.testing.assert_allclose(ref.slide_newton(W_ANISO, b, mu, math.cos(theta),
                                                    math.sin(theta)), rs, atol=1e-13)
    for theta in (0.8, 0.8 + math.pi):
        r0 = np.array([1.0, -mu * math.cos(theta), -mu * math.sin(theta)])
        r, code = kernels.local_solve(W_ANISO, b, mu, r0, METHODS["warm"])
        assert code == ref.SLIDE
        np.testing.assert_allclose(r, rs, atol=1e-12)


def sliding_problem(W, r_slide, alpha, mu):
    """b such that r_slide (on the cone's boundary) slides with u = (0, -alpha r_T)."""
    u = np.array([0.0, -alpha * r_slide[1], -alpha * r_slide[2]])
    return u - W @ r_slide


W_ANISO = np.array([[2.0, 0.3, -0.2], [0.3, 1.5, 0.4], [-0.2, 0.4, 0.7]])


@pytest.mark.parametrize("theta", [0.0, math.pi / 2, math.pi, -math.pi / 2, 0.7])
def test_quartic_finds_slides_along_the_axes_and_at_t_infinite(theta):
    # theta = 0, pi: R_T2 = 0; +-pi/2: R_T1 = 0; pi is t = tan(theta/2) infinite
    mu = 0.6
    r = np.array([1.0, mu * math.cos(theta), mu * math.sin(theta)])
    b = sliding_problem(W_ANISO, r, 0.8, mu)
    for impl in (kernels.slide_quartic, ref.slide_quartic):
        out = impl(W_ANISO, b, mu)
        assert out is not None
        np.testing.assert_allclose(out, r, atol=1e-12)


def test_quartic_frictionless_isotropic_and_round_cases():
    # mu = 0: the frictionless slide r = (-b_N / W_NN, 0, 0)
    b = np.array([-1.0, 0.3, -0.2])
    r, code = kernels.local_solve(W_ANISO, b, 0.0, None, METHODS["quartic"])
    assert code == ref.QUARTIC and np.allclose(r, [0.5, 0, 0]) and residual(W_ANISO, b, 0, r) < 1e-14
    # equal eigenvalues of W_TT and no normal-tangent coupling (a sphere on a plane): the conic
    # is a circle (eccentricity 0) and the quartic degenerates
    W = np.diag([3.0, 1.0, 1.0])
    mu = 0.5
    rs = np.array([1.0, 0.3, 0.4])                      # |r_T| = 0.5 = mu r_N
    b = sliding_problem(W, rs, 2.0, mu)
    for m in ("quartic", "auto", "newton"):
        r, code = kernels.local_solve(W, b, mu, None, METHODS[m])
        np.testing.assert_allclose(r, rs, atol=1e-12)
    # the degenerate quartic: b_T = 0 with an isotropic W_TT and no coupling gives all
    # coefficients zero; the answer is stick, found before the quartic is needed
    b = np.array([-1.0, 0.0, 0.0])
    r, code = kernels.local_solve(W, b, mu, None, METHODS["quartic"])
    assert code == ref.STICK and np.allclose(r, [1 / 3, 0, 0])


def test_no_admissible_root_falls_back_and_stays_in_the_cone():
    # a stick problem has no sliding root: the quartic alone finds none
    W = W_ANISO
    b = -W @ np.array([1.0, 0.1, 0.0])                  # stick at r = (1, 0.1, 0)
    assert kernels.slide_quartic(W, b, 0.8) is None and ref.slide_quartic(W, b, 0.8) is None
    # W with a non-positive normal entry along every slip direction: no slide, no stick, the
    # chain ends in the projection, whose r is always in the cone
    W = np.array([[1e-3, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
    b = np.array([-1.0, 5.0, 0.0])
    for m in LOCAL_SOLVERS:
        r, code = kernels.local_solve(W, b, 1.5, None, METHODS[m])
        assert in_cone(r, 1.5)


def test_real_roots_of_degenerate_polynomials():
    for impl in (kernels.poly_real_roots, ref.poly_real_roots):
        assert impl([24, -50, 35, -10, 1]) == pytest.approx([1, 2, 3, 4], abs=1e-12)
        assert impl([1, 0, -2, 0, 1]) == pytest.approx([-1, 1], abs=1e-7)   # double roots
        assert impl([-6, 11, -6, 1, 1e-18]) == pytest.approx([1, 2, 3], abs=1e-12)
        assert impl([1, 0, 1]) == [] and impl([0, 0, 0]) == []


def block_problem(n=12, seed=4):
    """A chain of contacts coupled through their neighbours, W SPD in block CSR."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(3 * n, 3 * n + 6)) / math.sqrt(3 * n)
    Wd = H @ H.T + 0.05 * np.eye(3 * n)
    indptr, indices, blocks, diag = [0], [], [], []
    for a in range(n):
        for c in range(max(0, a - 1), min(n, a + 2)):
            if c == a:
                diag.append(len(indices))
            indices.append(c)
            blocks.append(Wd[3 * a:3 * a + 3, 3 * c:3 * c + 3])
        indptr.append(len(indices))
    B = rng.normal(size=(n, 3)) * [1.0, 0.3, 0.3] - [0.5, 0, 0]
    return (np.array(indptr, np.int64), np.array(indices, np.int64), np.array(blocks),
            np.array(diag, np.int64), B, np.full(n, 0.5))


def test_gauss_seidel_reaches_the_same_solution_with_each_local_solver():
    indptr, indices, blocks, diag, B, mu = block_problem()
    sols = {}
    for m in ("auto", "quartic", "newton", "projection", "warm"):
        R = np.zeros_like(B)
        rep = GaussSeidel(tol=1e-11, max_iter=5000, local=m).solve(
            Problem.coulomb(indptr, indices, blocks, diag, B, mu), R)
        assert rep.converged, (m, rep.residual)
        sols[m] = R
        assert sum(rep.local.values()) == rep.iterations * len(B)
    for m in ("quartic", "newton", "projection", "warm"):
        np.testing.assert_allclose(sols[m], sols["auto"], atol=1e-8)


@pytest.mark.parametrize("method", ["auto", "warm"])
def test_the_compiled_gauss_seidel_loop_is_the_python_loop_bit_for_bit(method):
    # GaussSeidel on block-CSR rows runs its sweeps and residuals in one compiled call
    # (kernels.gauss_seidel_rows): the same iterates, residual and counts as the loop of
    # single sweeps it replaces, bit for bit, and as its twin (numpy's sums: to round-off)
    from parsolve.solvers import twins

    indptr, indices, blocks, diag, B, mu = block_problem()
    p = Problem.coulomb(indptr, indices, blocks, diag, B, mu)
    order, m = np.arange(len(B), dtype=np.int64), METHODS[method]
    out = []
    for impl in ("compiled", "twin", "loop"):
        R, U, counts = np.zeros_like(B), np.empty_like(B), np.zeros(len(CODE_NAMES), np.int64)
        args = (p.indptr, p.indices, p.blocks, p.diag, p.B, p.kind, p.param, R)
        if impl == "loop":
            err, it = kernels.delassus_residual(*args[:3], *args[4:], U)[0], 0
            while err > 1e-11 and it < 5000:
                kernels.gauss_seidel_sweep(*args, order, 1.0, counts, m)
                it += 1
                err = kernels.delassus_residual(*args[:3], *args[4:], U)[0]
        else:
            f = kernels.gauss_seidel_rows if impl == "compiled" else twins.gauss_seidel_rows
            it, err = f(*args, U, order, 1.0, counts, m, 1e-11, 5000)
        out.append((it, err, R, counts))
    it, err, R, counts = out[2]
    assert it == out[0][0] and err == out[0][1]
    np.testing.assert_array_equal(R, out[0][2])
    np.testing.assert_array_equal(counts, out[0][3])
    it, err, R, counts = out[1]
    assert it == out[0][0] and err == pytest.approx(out[0][1], rel=1e-4)
    np.testing.assert_allclose(R, out[0][2], rtol=0, atol=1e-12 * np.abs(R).max())
    np.testing.assert_array_equal(counts, out[0][3])
    assert out[0][1] <= 1e-11 and 10 < out[0][0] < 5000
    # a cap stops it, with the residual after the last sweep
    R, U, counts = np.zeros_like(B), np.empty_like(B), np.zeros(len(CODE_NAMES), np.int64)
    it, err = kernels.gauss_seidel_rows(p.indptr, p.indices, p.blocks, p.diag, p.B, p.kind,
                                        p.param, R, U, order, 1.0, counts, m, 1e-11, 3)
    assert it == 3 and err > 1e-11 and counts.sum() == 3 * len(B)


def test_an_unknown_local_solver_is_refused():
    with pytest.raises(InputError, match="local solver 'exact'"):
        GaussSeidel(local="exact")
