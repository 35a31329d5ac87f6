"""The global semismooth Newton and the hybrid solver (serial): Newton reaches 1e-10 where
Gauss-Seidel stalls, both agree where both converge, a run with either is the Gauss-Seidel run,
and bad options are refused."""
import time

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.simulation import Simulation
from parsolve.solvers import make_solver
from parsolve.solvers.newton import Hybrid, SemismoothNewton, alart_curnier
from scenes import lattice, on_floor


def local_dynamics(model, steps):
    """The local dynamics of the last of `steps` steps (block rows assembled)."""
    sim = Simulation(model, step=1e-3, solver=ps.GaussSeidel(tol=1e-6, max_iter=50),
                     progress=0, quiet=True, verify_every=0)
    box = {}
    sim.local_dynamics_hook = lambda s, ld: box.update(ld=ld)
    for _ in range(steps):
        sim.step()
    ld = box["ld"]
    ld.rows
    return ld


def box_stack(n=10, mu=0.8):
    m = on_floor(mu=mu)
    for k in range(n):
        m.box((0, 0, 0.05 + 0.1 * k), (0.1, 0.08, 0.05), "body", density=1000)
    return m


def sphere_column(n=30, mu=0.8, r=0.05):
    m = on_floor(mu=mu)
    m.spheres(np.stack([np.zeros(n), np.zeros(n), r + 2 * r * np.arange(n)], axis=1), r,
              "body", density=1000)
    return m


def solve(solver, ld, R=None):
    R = np.zeros((ld.n, 3)) if R is None else R
    t0 = time.perf_counter()
    report = solver.solve(ld.indptr, ld.indices, ld.blocks, ld.diag, ld.B, ld.mu, R)
    return R, report, time.perf_counter() - t0


@pytest.fixture(scope="module")
def stack():
    return local_dynamics(box_stack(), 3)


def test_alart_curnier_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    n = 300
    R, U = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    mu, rn, rt = rng.uniform(0.1, 1, n), rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, n)
    _, A, B = alart_curnier(R, U, mu, rn, rt)
    h = 1e-7
    for j in range(3):
        E = np.zeros((n, 3))
        E[:, j] = h
        for X, D, args in ((R, A, lambda E: (R + E, U)), (U, B, lambda E: (R, U + E))):
            fd = (alart_curnier(*args(E), mu, rn, rt, False)
                  - alart_curnier(*args(-E), mu, rn, rt, False)) / (2 * h)
            np.testing.assert_allclose(fd, D[:, :, j], atol=1e-6)


def test_newton_reaches_1e_10_on_a_box_stack_where_gauss_seidel_stalls(stack):
    """Ten boxes, mu = 0.8, four corner contacts per face (W singular): Gauss-Seidel given
    more time than Newton needs stays far above 1e-10."""
    R, rep, t_newton = solve(SemismoothNewton(tol=1e-10, max_iter=100), stack)
    assert rep.converged and rep.residual <= 1e-10
    assert rep.ksp_iterations > 0 and rep.stages[0][0] == "newton"
    _, gs, t_gs = solve(ps.GaussSeidel(tol=1e-10, max_iter=20000), stack)
    assert t_gs > t_newton
    assert not gs.converged and gs.residual > 1e-8


def test_hybrid_switches_to_newton_when_gauss_seidel_stalls(stack):
    R, rep, _ = solve(Hybrid(tol=1e-10), stack)
    assert rep.converged
    kinds = [s[0] for s in rep.stages]
    assert kinds[0] == "gs" and "newton" in kinds
    assert rep.iterations == sum(s[1] for s in rep.stages)
    assert rep.ksp_iterations == sum(s[2] for s in rep.stages if s[0] == "newton") > 0


def test_newton_and_gauss_seidel_agree_on_a_column_both_solve():
    """A column of 30 spheres (W nonsingular: one solution)."""
    ld = local_dynamics(sphere_column(), 3)
    Rn, rn, _ = solve(SemismoothNewton(tol=1e-12), ld)
    Rg, rg, _ = solve(ps.GaussSeidel(tol=1e-12, max_iter=50000), ld)
    assert rn.converged and rg.converged
    assert rn.iterations < rg.iterations
    np.testing.assert_allclose(Rn, Rg, atol=1e-9 * np.abs(Rg).max())


def scene():
    m = on_floor(mu=0.5)
    n = 27
    rng = np.random.default_rng(3)
    m.spheres(lattice(n, 0.05, 0.105, (0, 0, 0), 3), 0.05, "body", density=1000,
              velocities=rng.normal(0, 0.3, (n, 3)))
    for k in range(2):
        m.box((0.5, 0, 0.05 + 0.1 * k), (0.1, 0.08, 0.05), "body", density=1000)
    return m


@pytest.fixture(scope="module")
def gs_run():
    sim = Simulation(scene(), step=1e-3, solver=ps.GaussSeidel(tol=1e-12, max_iter=20000),
                     progress=0, quiet=True)
    sim.run(0.1)
    return sim


@pytest.mark.parametrize("solver", [SemismoothNewton(tol=1e-12),
                                    Hybrid(tol=1e-12, window=2, stall=0.01)],
                         ids=["newton", "hybrid"])
def test_a_run_with_newton_is_the_gauss_seidel_run(gs_run, solver, tmp_path):
    from parsolve.io.results import read_history

    out = tmp_path / "run.h5"
    sim = Simulation(scene(), step=1e-3, solver=solver, progress=0, quiet=True,
                     output=str(out))
    sim.run(0.1)
    np.testing.assert_allclose(sim.bodies.x, gs_run.bodies.x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(sim.bodies.v, gs_run.bodies.v, rtol=0, atol=1e-8)
    assert all(row["converged"] for row in sim.history)
    h = read_history(str(out))
    assert h["newton_iterations"].sum() > 0 and h["ksp_iterations"].sum() > 0
    assert (h["iterations"] >= h["newton_iterations"]).all()
    gs = [row["newton_iterations"] + row["ksp_iterations"] for row in gs_run.history]
    assert not any(gs)


@pytest.mark.parametrize("build", [
    lambda: SemismoothNewton(tol=0), lambda: SemismoothNewton(tol=float("nan")),
    lambda: SemismoothNewton(max_iter=0), lambda: SemismoothNewton(ksp_type="nope"),
    lambda: SemismoothNewton(pc_type="nope"), lambda: SemismoothNewton(warm_sweeps=-1),
    lambda: Hybrid(stall=1.5), lambda: Hybrid(window=0), lambda: Hybrid(tol=-1),
    lambda: make_solver("newton", tol=-1), lambda: make_solver("hybrid", max_iter=0)])
def test_bad_options_raise_input_error(build):
    with pytest.raises(InputError):
        build()


def test_make_solver_builds_newton_and_hybrid():
    assert isinstance(make_solver("newton", tol=1e-9, max_iter=20), SemismoothNewton)
    assert isinstance(make_solver("hybrid", tol=1e-9, max_iter=20), Hybrid)
