"""The interior-point solver: its cone algebra, single contacts with known answers, the rigid
sets where Gauss-Seidel and Newton from R = 0 stall, unsymmetric W, runs, and bad input."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run import Simulation
from parsolve.solvers import Problem, make_solver
from parsolve.solvers.interior import InteriorPoint
from parsolve.solvers.soc import (cone_step, desaxce, fischer_burmeister, jordan, jordan_solve,
                                  jordan_sqrt, nesterov_todd)
from parsolve.solvers import Hybrid, SemismoothNewton
from parsolve.solvers.residual import residual
from test_newton import box_stack, local_dynamics, solve, sphere_column


def interior_points(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    x[:, 0] = np.hypot(x[:, 1], x[:, 2]) + rng.uniform(1e-3, 2.0, n)
    return x


def test_nesterov_todd_scaling_maps_x_and_y_to_one_point():
    x, y = interior_points(200, 1), interior_points(200, 2)
    y[:7] *= 1e-9                                    # far apart in scale too
    T, Ti = nesterov_todd(x, y)
    lam_y, lam_x = np.einsum("kij,kj->ki", T, y), np.einsum("kij,kj->ki", Ti, x)
    np.testing.assert_allclose(lam_y, lam_x, rtol=1e-9, atol=1e-12 * np.abs(lam_x).max())
    np.testing.assert_allclose(np.einsum("kij,kjl->kil", T, Ti), np.broadcast_to(np.eye(3),
                               T.shape), atol=1e-9)
    np.testing.assert_allclose(T, np.swapaxes(T, 1, 2), atol=1e-12 * np.abs(T).max())
    # lambda o lambda has x . y as its first component (the complementarity gap)
    np.testing.assert_allclose(jordan(lam_x, lam_x)[:, 0], np.sum(x * y, axis=1), rtol=1e-9)


def test_jordan_solve_inverts_the_jordan_product():
    a, v = interior_points(100, 3), np.random.default_rng(4).normal(size=(100, 3))
    np.testing.assert_allclose(jordan_solve(a, jordan(a, v)), v, rtol=1e-9, atol=1e-9)


def test_cone_step_reaches_the_boundary_and_no_further():
    x = interior_points(500, 5)
    d = np.random.default_rng(6).normal(size=(500, 3)) * 3
    a = cone_step(x, d)
    finite = np.isfinite(a)
    assert finite.sum() > 100 and (~finite).sum() > 0
    edge = x[finite] + a[finite, None] * d[finite]
    assert np.allclose(edge[:, 0], np.hypot(edge[:, 1], edge[:, 2]), atol=1e-9)
    inside = x + 0.999 * np.where(finite, a, 10.0)[:, None] * d
    assert (inside[:, 0] > np.hypot(inside[:, 1], inside[:, 2])).all()


def test_jordan_sqrt_is_the_square_root_in_the_cone():
    v = interior_points(200, 4)
    v[:10, 0] = np.hypot(v[:10, 1], v[:10, 2])              # on the boundary too
    np.testing.assert_allclose(jordan_sqrt(jordan(v, v)), v, rtol=0, atol=1e-7 * np.abs(v).max())


def test_fischer_burmeister_vanishes_exactly_on_complementary_pairs():
    """phi(x, y) = 0 iff x, y in L and x o y = 0: opposite boundary rays, one side zero;
    not for interior pairs, nor for x outside the cone."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(50, 2))
    s = rng.uniform(0.1, 3.0, 50)[:, None]
    x = np.column_stack([np.hypot(a[:, 0], a[:, 1]), a])
    y = s * np.column_stack([x[:, 0], -a])
    zero = np.zeros_like(x)
    for u, v in ((x, y), (interior_points(50, 1), zero), (zero, interior_points(50, 2))):
        assert np.abs(fischer_burmeister(u, v)).max() <= 1e-7 * (np.abs(u).max()
                                                                + np.abs(v).max())
    both = interior_points(50, 3)
    assert np.all(np.abs(fischer_burmeister(both, both)).max(axis=1) > 0.1)
    out = x.copy()
    out[:, 0] *= 0.5                                         # outside L
    assert np.all(np.abs(fischer_burmeister(out, zero)).max(axis=1) > 1e-3)


W_ONE = np.diag([2.0, 3.0, 3.0])


def one_contact(qn, qt, mu=0.5, wn=2.0, wt=3.0):
    """A contact with W = diag(wn, wt, wt) (W_ONE by default): Coulomb's law has a
    closed-form solution."""
    W = np.diag([wn, wt, wt])
    prob = Problem.coulomb(np.array([0, 1]), np.array([0]), W[None], np.array([0]),
                           np.array([[qn, qt, 0.0]]), np.array([mu]))
    rn = max(-qn / wn, 0.0)
    rt = -qt / wt if abs(qt) <= mu * wt * rn else -mu * rn * np.sign(qt)
    return prob, np.array([rn, rt, 0.0])


@pytest.mark.parametrize("qn, qt", [(-1.0, 0.2), (-1.0, 5.0), (-1.0, -5.0), (0.5, 1.0),
                                    (-1.0, 0.0)],
                         ids=["sticking", "sliding", "sliding back", "open", "pressed"])
def test_one_contact_has_its_closed_form_solution(qn, qt):
    prob, exact = one_contact(qn, qt)
    R = np.full((1, 3), 7.0)                         # not used: the method starts inside
    rep = InteriorPoint(tol=1e-12, newton_iter=0, probe=False).solve(prob, R)
    assert rep.converged and rep.residual <= 1e-12
    np.testing.assert_allclose(R[0], exact, atol=1e-10)
    assert rep.stages == [("ipm", rep.iterations, rep.ksp_iterations)]
    u = W_ONE @ exact + [qn, qt, 0.0]                # the cone form of the law holds there
    x, y = desaxce(exact[None], u[None], np.array([0.5]), np.array([0.5]))
    assert np.abs(fischer_burmeister(x, y)).max() <= 1e-12
    R = np.full((1, 3), 7.0)                         # the probe: J regular, from R
    rep = InteriorPoint(tol=1e-12, newton_iter=0).solve(prob, R)
    assert rep.converged and rep.events["probe_converged"] == 1
    assert rep.stages == [("probe", rep.iterations, rep.ksp_iterations)]
    np.testing.assert_allclose(R[0], exact, atol=1e-10)


@pytest.fixture(scope="module")
def stack():
    return local_dynamics(box_stack(), 3)


def test_ipm_solves_a_box_stack_from_zero_where_newton_needs_more(stack):
    """Ten boxes, mu = 0.8, four corner contacts per face (W singular): the interior point
    reaches 1e-10 alone, in fewer iterations than Newton's steps, and the two give the same
    velocities (R itself is not unique on a hyperstatic set)."""
    R, rep, _ = solve(InteriorPoint(tol=1e-10, newton_iter=0, probe=False), stack)
    assert rep.converged and rep.residual <= 1e-10
    assert rep.events["newton_polish"] == 0 and rep.events["lu_factorisations"] >= \
        rep.iterations
    Rn, rn, _ = solve(SemismoothNewton(tol=1e-10, max_iter=200), stack)
    assert rn.converged and rep.iterations < rn.iterations
    U = stack.matvec(R) + stack.B
    Un = stack.matvec(Rn) + stack.B
    np.testing.assert_allclose(U, Un, atol=1e-9 * np.linalg.norm(stack.B))
    assert residual(R, U, stack.B, *_rows(stack)) <= 1e-10


def test_the_trace_follows_the_iterations_and_changes_nothing(stack):
    """The trace hook sees every iterate in order, ending at the report's residual; the gap
    and the infeasibility |M x + b - y| fall from the cones' axes to the solution; R is the
    untraced run's bit for bit."""
    R0, rep0, _ = solve(InteriorPoint(tol=1e-10, newton_iter=0, probe=False), stack)
    solver, path = InteriorPoint(tol=1e-10, newton_iter=0, probe=False), []
    solver.trace = path.append
    R, rep, _ = solve(solver, stack)
    assert np.array_equal(R, R0) and rep.iterations == rep0.iterations
    assert [q["iteration"] for q in path] == list(range(rep.iterations + 1))
    assert path[-1]["residual"] == rep.residual <= 1e-10 and "step" not in path[-1]
    steps = path[:-1]
    assert all(0.0 < q["step"] <= 1.0 for q in steps)
    assert steps[-1]["gap"] < 1e-6 * steps[0]["gap"]
    assert steps[-1]["infeasibility"] < 1e-6 * steps[0]["infeasibility"]


def test_the_probe_costs_a_step_where_j_is_singular_and_changes_nothing(stack):
    """On the box stack (J singular on the sticking corners) the pure Newton probe stops at
    its first failed factorisation or slow step; the interior point then ends where it ends
    without the probe, bit for bit (its iterations do not start from R)."""
    R0, rep0, _ = solve(InteriorPoint(tol=1e-10, newton_iter=0, probe=False), stack)
    R, rep, _ = solve(InteriorPoint(tol=1e-10, newton_iter=0), stack)
    assert rep.stages[0][0] == "probe" and rep.stages[0][1] <= 3
    assert rep.stages[1:] == rep0.stages and rep.events["probe_converged"] == 0
    assert rep.iterations == rep0.iterations + rep.stages[0][1]
    assert rep.converged and np.array_equal(R, R0)


@pytest.mark.parametrize("build", [lambda tol: InteriorPoint(tol=tol),
                                   lambda tol: Hybrid(tol=tol, stage="ipm")],
                         ids=["interior point", "hybrid"])
def test_the_probe_solves_a_column_in_two_steps(build):
    """A column of spheres on the floor (W regular, J regular): the probe reaches 1e-12 from
    R = 0 (or Gauss-Seidel's iterate) in at most two steps, and no interior-point iteration
    runs; R is Newton's."""
    ld = local_dynamics(sphere_column(20), 3)
    R, rep, _ = solve(build(1e-12), ld)
    assert rep.converged and rep.residual <= 1e-12
    assert "ipm" not in [s[0] for s in rep.stages] and rep.events["probe_converged"] == 1
    probe = [s for s in rep.stages if s[0] == "probe"]
    assert len(probe) == 1 and probe[0][1] <= 2
    Rn, rn, _ = solve(SemismoothNewton(tol=1e-12), ld)
    np.testing.assert_allclose(R, Rn, atol=1e-9 * np.abs(Rn).max())


def test_a_bad_probe_contraction_is_refused():
    from parsolve.solvers import NewtonProbe

    for c in (0.0, 1.0, -1.0):
        with pytest.raises(InputError, match="contraction"):
            NewtonProbe(contraction=c)


@pytest.mark.parametrize("mu", [0.3, 0.8])
def test_newton_on_fischer_burmeister_merit_solves_the_stack(mu):
    """Newton's steps taken on Fischer-Burmeister's merit: 1e-10 on a box stack, the same
    velocities as on Alart-Curnier's."""
    ld = local_dynamics(box_stack(mu=mu), 3)
    R, rep, _ = solve(SemismoothNewton(tol=1e-10, max_iter=500, merit="fb"), ld)
    Ra, ra, _ = solve(SemismoothNewton(tol=1e-10, max_iter=500), ld)
    assert rep.converged and ra.converged and rep.iterations != ra.iterations
    np.testing.assert_allclose(ld.matvec(R), ld.matvec(Ra), atol=1e-9 * np.linalg.norm(ld.B))


def test_the_fischer_burmeister_merit_needs_cones():
    from parsolve import laws

    rows = laws.bilateral.rows(np.array([3]))
    prob = Problem.rows(np.array([0, 1]), np.array([0]), np.eye(3)[None], np.array([0]),
                        np.zeros((1, 3)), rows["kind"], rows["param"])
    with pytest.raises(InputError, match="bilateral"):
        SemismoothNewton(merit="fb").solve(prob, np.zeros((1, 3)))
    with pytest.raises(InputError, match="merit"):
        SemismoothNewton(merit="nope")


def _rows(ld):
    from parsolve.solvers.residual import coulomb_rows
    return coulomb_rows(ld.mu)


def test_unsymmetric_delassus_is_solved():
    """W = S + K with K skew (a gyroscopic term): monotone, not symmetric."""
    rng = np.random.default_rng(7)
    n = 30
    A = rng.normal(size=(3 * n, 3 * n + 5))
    K = rng.normal(size=(3 * n, 3 * n)) * 0.3
    W = A @ A.T / (3 * n) + (K - K.T)
    blocks = W.reshape(n, 3, n, 3).transpose(0, 2, 1, 3).reshape(n * n, 3, 3)
    indptr = np.arange(0, n * n + 1, n)
    indices = np.tile(np.arange(n), n)
    q = rng.normal(size=(n, 3))
    q[:, 0] -= 1.0
    mu = rng.uniform(0.2, 0.9, n)
    prob = Problem.coulomb(indptr, indices, blocks, np.arange(n) * (n + 1), q, mu)
    R = np.zeros((n, 3))
    rep = InteriorPoint(tol=1e-10).solve(prob, R)
    assert rep.converged
    U = (W @ R.reshape(-1)).reshape(n, 3) + q
    from parsolve.solvers.residual import residual_from_velocity
    assert residual_from_velocity(R, U, q, mu) <= 1e-10


def test_newton_polishes_when_the_iterations_run_out(stack):
    R, rep, _ = solve(InteriorPoint(tol=1e-10, max_iter=4, probe=False), stack)
    assert rep.converged
    assert rep.events["newton_polish"] == 1
    assert [s[0] for s in rep.stages] == ["ipm", "newton"] and rep.stages[0][1] == 4
    assert rep.iterations == 4 + rep.newton_iterations


def test_a_run_with_the_interior_point_is_the_newton_run():
    from test_newton import scene

    def run(solver):
        sim = Simulation(scene(), step=1e-3, solver=solver, progress=0, quiet=True)
        sim.run(0.05)
        assert all(row["converged"] for row in sim.history)
        return sim

    a, b = run(InteriorPoint(tol=1e-12)), run(SemismoothNewton(tol=1e-12))
    np.testing.assert_allclose(a.bodies.x, b.bodies.x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(a.bodies.v, b.bodies.v, rtol=0, atol=1e-8)
    assert sum(row.get("event_lu_factorisations", 0) for row in a.history) > 0


def test_rows_without_a_cone_are_refused_by_kind():
    from parsolve import laws

    rows = laws.bilateral.rows(np.array([3]))
    prob = Problem.rows(np.array([0, 1]), np.array([0]), np.eye(3)[None], np.array([0]),
                        np.zeros((1, 3)), rows["kind"], rows["param"])
    with pytest.raises(InputError, match="bilateral"):
        InteriorPoint().solve(prob, np.zeros((1, 3)))
    prob, _ = one_contact(-1.0, 0.0, mu=0.0)
    with pytest.raises(InputError, match="coulomb"):
        InteriorPoint().solve(prob, np.zeros((1, 3)))


@pytest.mark.parametrize("build", [
    lambda: InteriorPoint(tol=0), lambda: InteriorPoint(max_iter=0),
    lambda: InteriorPoint(newton_iter=-1), lambda: InteriorPoint(linear="nope"),
    lambda: make_solver("ipm", tol=float("nan"))])
def test_bad_options_raise_input_error(build):
    with pytest.raises(InputError):
        build()


def test_make_solver_builds_the_interior_point():
    assert isinstance(make_solver("ipm", tol=1e-9), InteriorPoint)
    assert isinstance(ps.solvers.make_solver("ipm"), InteriorPoint)


def test_the_hybrid_takes_interior_point_stages(stack):
    R, rep, _ = solve(Hybrid(tol=1e-10, stage="ipm"), stack)
    assert rep.converged
    kinds = [s[0] for s in rep.stages]
    assert kinds[0] == "gs" and "ipm" in kinds
    assert rep.events["newton_stages"] >= 1 and "monotone_direction" in rep.events
    assert rep.iterations == sum(s[1] for s in rep.stages)
    assert rep.ksp_iterations == sum(s[2] for s in rep.stages if s[0] != "gs") > 0


def test_the_hybrid_takes_newton_stages_where_rows_have_no_cone():
    from parsolve import laws

    prob, exact = one_contact(-1.0, 0.2)
    rows = laws.bilateral.rows(np.array([3]))
    W = np.array([[2.0, 0.5, 0.0], [0.5, 3.0, 0.0], [0.0, 0.0, 1.0]])
    two = Problem.rows(np.array([0, 1]), np.array([0]), W[None], np.array([0]),
                       np.array([[1.0, -2.0, 0.5]]), rows["kind"], rows["param"])
    R = np.zeros((1, 3))
    rep = Hybrid(tol=1e-12, stage="ipm", window=1, stall=0.99).solve(two, R)
    assert rep.converged and "ipm" not in [s[0] for s in rep.stages]
    np.testing.assert_allclose(W @ R[0] + [1.0, -2.0, 0.5], 0.0, atol=1e-10)
