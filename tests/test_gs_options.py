"""Gauss-Seidel's options: relaxation omega and a shuffled order. Every variant reaches the
one solution of a column's contact problem (nonsingular W), where the column comes to rest,
and the shuffled order is a permutation of each colour fixed by the rows' global keys
and the seed alone (rows between the same two bodies keep their key order). The rank
independence of the shuffled trajectory: tests/mpi/test_newton.py.

The options for long granular solves: stop="change" stops at the first sweep whose change
(Problem.change, LMGC90's Quad measure) is within tol and reports the true residual; check=k
measures every k sweeps and ends on the iterate of the same sweeps run blind; adapt backs
omega off where over-relaxation cycles on a pile. Over the ranks: tests/mpi/test_gs_options.py.
"""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run import Simulation
from parsolve.solvers import Problem
from parsolve.solvers.problem import shuffle_salt, shuffled
from parsolve.solvers.residual import residual
from scenes import spheres_in_box
from test_newton import box_stack, local_dynamics, solve, sphere_column

G, H = 9.81, 1e-3


@pytest.fixture(scope="module")
def column():
    return local_dynamics(sphere_column(n=20, mu=0.5), 3)


@pytest.mark.parametrize("options", [{}, {"omega": 0.7}, {"omega": 1.3},
                                     {"shuffle": "solve", "seed": 3},
                                     {"shuffle": "sweep", "seed": 3},
                                     {"shuffle": "sweep", "seed": 4, "omega": 1.2}],
                         ids=["plain", "under", "over", "solve", "sweep", "sweep-over"])
def test_every_variant_reaches_the_columns_solution(column, options):
    ld = column
    ref, rep0, _ = solve(ps.GaussSeidel(tol=1e-12, max_iter=100_000), ld)
    R, rep, _ = solve(ps.GaussSeidel(tol=1e-12, max_iter=100_000, **options), ld)
    assert rep0.converged and rep.converged
    np.testing.assert_allclose(R, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # the column comes to rest: every contact closed and sticking, U = B + W R = 0
    U = ld.B.copy()
    for a in range(ld.n):
        for k in range(ld.indptr[a], ld.indptr[a + 1]):
            U[a] += ld.blocks[k] @ R[ld.indices[k]]
    assert (R[:, 0] > 0).all()
    np.testing.assert_allclose(U, 0.0, atol=1e-9 * np.abs(ld.B).max())


def test_the_shuffle_changes_the_trajectory_not_the_work(column):
    ld = column
    its = {}
    for options in ({}, {"shuffle": "sweep", "seed": 1}, {"shuffle": "sweep", "seed": 2},
                    {"shuffle": "sweep", "seed": 1}):
        R, rep, _ = solve(ps.GaussSeidel(tol=1e-8, max_iter=100_000, **options), ld)
        its.setdefault(str(options), []).append((rep.iterations, R.tobytes()))
    seeds = [its[k] for k in its if "seed" in k]
    assert seeds[0][0] == seeds[0][1]                      # one seed, one trajectory
    assert seeds[0][0][1] != seeds[1][0][1]                # another seed, another one


def test_a_shuffled_schedule_permutes_each_colour_by_the_keys_alone():
    """A stack of boxes: four rows between each two boxes share their bodies' key; the
    shuffle keeps them in their order, permutes the rest, and is the same for the same seed."""
    sim = Simulation(box_stack(n=6), step=H, solver=ps.GaussSeidel(tol=1e-6, max_iter=50),
                     progress=0, quiet=True, verify_every=0)
    box = {}
    orig = sim.solver.solve
    sim.solver.solve = lambda problem, R: (box.update(p=problem), orig(problem, R))[1]
    sim.run(3 * H)
    p = box["p"]
    keys = p.shuffle_keys()
    assert len(keys) == p.n and p.n >= 20
    for o in p.schedule.colours:
        a, b = shuffled(o, keys, shuffle_salt(5, 0)), shuffled(o, keys, shuffle_salt(5, 0))
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.sort(a), np.sort(o))
        for k in np.unique(keys[o]):                     # ties keep the colour's order
            same = a[keys[a] == k]
            np.testing.assert_array_equal(same, o[np.isin(o, same)])
    orders = [np.concatenate([shuffled(o, keys, shuffle_salt(s, 0)) for o in p.schedule.colours])
              for s in (5, 6)]
    assert not np.array_equal(orders[0], orders[1])
    assert len(np.unique(keys)) < p.n                    # there were ties to keep


def test_bad_options_are_refused():
    for options, word in (({"shuffle": "random"}, "shuffle"), ({"seed": -1}, "seed"),
                          ({"seed": 1.5}, "seed"), ({"omega": 2.0}, "omega"),
                          ({"adapt": 0}, "adapt"), ({"adapt": 2.5}, "adapt"),
                          ({"adapt": True}, "adapt"), ({"check": 0}, "check"),
                          ({"check": 5.0}, "check"), ({"stop": "quad"}, "stop"),
                          ({"stop": None}, "stop"), ({"sweeps": 5, "stop": "change"}, "stop"),
                          ({"sweeps": 5, "check": 2}, "check"),
                          ({"sweeps": 5, "adapt": 3}, "adapt")):
        with pytest.raises(InputError, match=word):
            ps.GaussSeidel(**options)


def test_auto_takes_the_hybrid_for_tight_tolerances_and_over_relaxes_otherwise(column):
    from parsolve.solvers import AUTO_OMEGA, TIGHT, make_solver
    from parsolve.solvers import Hybrid

    tight, loose = make_solver("auto", tol=TIGHT), make_solver("auto", tol=10 * TIGHT)
    assert isinstance(tight, Hybrid) and tight.tol == TIGHT and tight.ipm is not None
    assert isinstance(loose, ps.GaussSeidel) and loose.omega == AUTO_OMEGA
    # either reaches its tolerance on the column, at the one solution
    ref, _, _ = solve(ps.GaussSeidel(tol=1e-12, max_iter=100_000), column)
    for s in (make_solver("auto", tol=1e-10, max_iter=100_000),
              make_solver("auto", tol=1e-5, max_iter=100_000)):
        R, rep, _ = solve(s, column)
        assert rep.converged and rep.residual <= s.tol
        np.testing.assert_allclose(R, ref, rtol=0, atol=1e3 * s.tol * np.abs(ref).max())


def test_the_options_reach_make_solver_and_the_fclib_solve():
    from parsolve.io import fclib
    from parsolve.solvers import make_solver

    s = make_solver("gs", tol=1e-4, adapt=7, check=3, stop="change")
    assert (s.adapt, s.check, s.stop) == (7, 3, "change")
    with pytest.raises(InputError, match="stop"):
        fclib.solve(None, "newton", stop="change")


def coulomb(ld):
    return Problem.coulomb(ld.indptr, ld.indices, ld.blocks, ld.diag, ld.B, ld.mu)


def change_by_hand(ld, R0, R1):
    """LMGC90's Quad measure written from its definition, with the diagonal blocks found in
    the block rows by their column."""
    W = np.array([ld.blocks[k] for a in range(ld.n)
                  for k in range(ld.indptr[a], ld.indptr[a + 1]) if ld.indices[k] == a])
    dv, v = np.einsum("aij,aj->ai", W, R1 - R0), np.einsum("aij,aj->ai", W, R1)
    return np.sqrt((dv ** 2).sum() / (v ** 2).sum())


def test_stop_on_change_ends_at_the_first_small_change_and_reports_the_residual(column):
    ld, tol = column, 1e-5
    R, rep, _ = solve(ps.GaussSeidel(tol=tol, max_iter=100_000, stop="change"), ld)
    k = rep.iterations
    assert rep.converged and k > 2
    runs = [solve(ps.GaussSeidel(sweeps=j), ld)[0] for j in (k - 2, k - 1, k)]
    np.testing.assert_array_equal(runs[2], R)               # the same sweeps as run blind
    assert change_by_hand(ld, runs[1], runs[2]) <= tol < change_by_hand(ld, runs[0], runs[1])
    assert coulomb(ld).change(runs[1], runs[2]) == pytest.approx(
        change_by_hand(ld, runs[1], runs[2]), rel=1e-12)
    # the report's residual is the true one, not the change (here it is above tol)
    p = coulomb(ld)
    assert rep.residual == p.residual(R) and rep.residual != pytest.approx(
        p.change(runs[1], runs[2]), rel=1e-3)
    assert p.change(R, R) == 0.0
    assert p.change(R, np.zeros_like(R)) == np.inf


def test_check_every_k_sweeps_stops_at_the_first_check_past_tol(column):
    ld, tol = column, 1e-6
    _, one, _ = solve(ps.GaussSeidel(tol=tol, max_iter=100_000), ld)
    for k in (4, 7):
        R, rep, _ = solve(ps.GaussSeidel(tol=tol, max_iter=100_000, check=k), ld)
        assert rep.converged and rep.iterations % k == 0
        assert one.iterations <= rep.iterations < one.iterations + k   # residual falls here
        blind, brep, _ = solve(ps.GaussSeidel(sweeps=rep.iterations), ld)
        np.testing.assert_array_equal(R, blind)
        assert rep.residual == brep.residual <= tol
    # where one.iterations is a multiple of k, check=k ends on check=1's R bit for bit
    k = next(k for k in range(2, 50) if one.iterations % k == 0)
    R1, _, _ = solve(ps.GaussSeidel(tol=tol, max_iter=100_000), ld)
    Rk, repk, _ = solve(ps.GaussSeidel(tol=tol, max_iter=100_000, check=k), ld)
    assert repk.iterations == one.iterations
    np.testing.assert_array_equal(Rk, R1)
    # the cap is kept: 5 + 5 + 2 sweeps
    _, rep, _ = solve(ps.GaussSeidel(tol=1e-14, max_iter=12, check=5), ld)
    assert rep.iterations == 12 and not rep.converged


@pytest.fixture(scope="module")
def pile():
    """120 spheres dropped into a box, 60 ms later a pile of about 150 contacts on which
    Gauss-Seidel over-relaxed by 1.6 cycles far above tolerance."""
    return local_dynamics(spheres_in_box(120, 5, (1.0, 0.0, -9.81), 0.8, 0.0, 0.5, 0.0,
                                         (0.4, 0.1, 0.3), (0.011, 0.021), 0.01, 0.2), 60)


def test_adapt_backs_omega_off_where_over_relaxation_cycles_on_a_pile(pile):
    ld, tol = pile, 1e-6
    _, plain, _ = solve(ps.GaussSeidel(tol=tol, max_iter=3000), ld)
    _, fixed, _ = solve(ps.GaussSeidel(tol=tol, max_iter=3000, omega=1.6), ld)
    assert plain.converged and not fixed.converged and fixed.residual > 1e3 * tol
    seen = []
    p = coulomb(ld)
    sweep = p.sweep
    p.sweep = lambda R, counts, omega, *a: (seen.append(omega), sweep(R, counts, omega, *a))
    R = np.zeros((ld.n, 3))
    rep = ps.GaussSeidel(tol=tol, max_iter=3000, omega=1.6, adapt=10).solve(p, R)
    assert rep.converged and rep.residual <= tol and rep.iterations < 3000
    assert seen[0] == 1.6 and seen[-1] < 1.6                  # backed off ...
    assert all(b <= a for a, b in zip(seen, seen[1:]))        # ... never up again
    assert seen[-1] >= 1.0
    # a solution (a pile's is not unique: no comparison with ref's R): U = B + W R from the
    # block rows by hand meets every contact's law to tol
    U = ld.B.copy()
    for a in range(ld.n):
        for k in range(ld.indptr[a], ld.indptr[a + 1]):
            U[a] += ld.blocks[k] @ R[ld.indices[k]]
    assert residual(R, U, ld.B, p.kind, p.param) <= tol
    assert (R[:, 0] > 0).sum() > ld.n // 2                   # a pile, in contact


def test_adapt_that_never_fires_is_the_plain_loop_bit_for_bit(pile):
    a, ra, _ = solve(ps.GaussSeidel(tol=1e-6, max_iter=3000), pile)
    b, rb, _ = solve(ps.GaussSeidel(tol=1e-6, max_iter=3000, adapt=10_000), pile)
    np.testing.assert_array_equal(a, b)
    assert (ra.iterations, ra.residual) == (rb.iterations, rb.residual)
