"""Gauss-Seidel's options: relaxation omega and a shuffled order. Every variant reaches the
one solution of a column's contact problem (nonsingular W), where the column comes to rest,
and the shuffled order is a permutation of each colour fixed by the rows' global keys
and the seed alone (rows between the same two bodies keep their key order). The rank
independence of the shuffled trajectory: tests/mpi/test_newton.py."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run import Simulation
from parsolve.solvers import Problem
from parsolve.solvers.problem import shuffle_salt, shuffled
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
                          ({"seed": 1.5}, "seed"), ({"omega": 2.0}, "omega")):
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
