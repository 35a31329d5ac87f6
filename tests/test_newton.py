"""The global semismooth Newton and the hybrid solver (serial): Newton reaches 1e-10 where
Gauss-Seidel stalls, both agree where both converge, a run with either is the Gauss-Seidel run,
and bad options are refused. Its kernels (kernels/newton.pyx) equal their Python twins, and the
Levenberg-Marquardt shift stays bounded however often Newton fails (exact sums: test_reduce.py)."""
import time
import warnings

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run.simulation import Simulation
from parsolve.solvers import Problem, kernels, linear, make_solver, newton
from parsolve.laws import coulomb
from parsolve.solvers import twins as ref
from parsolve.solvers import Hybrid, SemismoothNewton
from parsolve.solvers.residual import coulomb_rows
from scenes import lattice, on_floor
from test_local_solvers import block_problem


def alart_curnier(R, U, mu, rho_n, rho_t, jacobian=True):
    """Alart-Curnier's function of contact rows of friction mu (the Coulomb law's twin)."""
    return coulomb.phi_rows(R, U, np.stack([mu, np.zeros_like(mu)], axis=1), rho_n, rho_t,
                            jacobian)


def local_dynamics(model, steps):
    """The local dynamics of the last of `steps` steps (block rows assembled)."""
    sim = Simulation(model, step=1e-3, solver=ps.GaussSeidel(tol=1e-6, max_iter=50),
                     progress=0, quiet=True, verify_every=0)
    box = {}
    sim.local_dynamics_hook = lambda s, ld: box.update(ld=ld)
    sim.run(steps * 1e-3)
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
    report = solver.solve(Problem.coulomb(ld.indptr, ld.indices, ld.blocks, ld.diag, ld.B,
                                          ld.mu), R)
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


def contact_states(n=1600, seed=1):
    """(R, U, mu, rho_n, rho_t) over every case of Alart-Curnier's function, each in a slice:
    mu = 0; s_N = r_N - rho_N u_N exactly 0 and negative (take-off); z_T = r_T - rho_T u_T
    exactly 0; sticking (|z_T| <= mu s_N); taking off (r = 0, u_N > 0: on the law); the rest
    random, mostly sliding."""
    rng = np.random.default_rng(seed)
    R, U = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    mu, rho_n, rho_t = rng.uniform(0.1, 1, n), rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, n)
    k = n // 8
    mu[:k] = 0.0
    rho_n[k:2 * k], U[k:2 * k, 0] = 1.0, R[k:2 * k, 0]                # s_N = 0
    R[2 * k:3 * k, 0], U[2 * k:3 * k, 0] = -np.abs(R[2 * k:3 * k, 0]), np.abs(U[2 * k:3 * k, 0])
    rho_t[3 * k:4 * k], U[3 * k:4 * k, 1:] = 1.0, R[3 * k:4 * k, 1:]  # z_T = 0, s_N > 0 or not
    R[4 * k:5 * k, 1:] = U[4 * k:5 * k, 1:] = 0.0
    R[5 * k:6 * k, 0], U[5 * k:6 * k, 0] = 5.0, -1.0                  # sticking
    R[5 * k:6 * k, 1:] *= 1e-3
    U[5 * k:6 * k, 1:] *= 1e-3
    R[6 * k:7 * k], U[6 * k:7 * k, 0] = 0.0, np.abs(U[6 * k:7 * k, 0])  # taking off
    return R, U, mu, rho_n, rho_t


def test_contact_states_cover_every_case():
    R, U, mu, rho_n, rho_t = contact_states()
    sn = R[:, 0] - rho_n * U[:, 0]
    nz = np.hypot(*(R[:, 1:] - rho_t[:, None] * U[:, 1:]).T)
    stick = nz <= mu * np.maximum(sn, 0.0)
    for case in (mu == 0, sn == 0, sn < 0, nz == 0, (nz == 0) & (sn > 0), stick & (nz > 0),
                 ~stick & (sn > 0) & (mu > 0)):
        assert case.sum() >= 50


def test_alart_curnier_kernel_equals_its_twin():
    R, U, mu, rho_n, rho_t = contact_states()
    n = len(R)
    Phi, A, B = np.full((n, 3), np.nan), np.full((n, 3, 3), np.nan), np.full((n, 3, 3), np.nan)
    kernels.alart_curnier(*coulomb_rows(mu), R, U, rho_n, rho_t, Phi, A, B)
    for got, want in zip((Phi, A, B), alart_curnier(R, U, mu, rho_n, rho_t)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    alone = np.full((n, 3), np.nan)
    kernels.alart_curnier(*coulomb_rows(mu), R, U, rho_n, rho_t, alone)          # Phi without the Jacobian
    np.testing.assert_allclose(alone, Phi, rtol=0, atol=1e-12)


def test_newton_parts_kernel_equals_its_twin():
    R, U, mu, rho_n, rho_t = contact_states()
    q = np.random.default_rng(2).normal(size=R.shape)
    V = U + np.random.default_rng(3).normal(size=U.shape)        # a regularised velocity
    got, want = np.full((len(R), 6), np.nan), np.full((len(R), 6), np.nan)
    kernels.newton_parts(*coulomb_rows(mu), R, U, V, q, rho_n, rho_t, got)
    ref.newton_parts(*coulomb_rows(mu), R, U, V, q, rho_n, rho_t, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    on = got[:, 0] == 0.0                                         # on the law
    assert on.sum() >= 50 and (got[on, 5] == 0.0).all() and (got[~on, 5] > 0.0).all()
    assert not np.allclose(got[:, 4], got[:, 5])                  # Phi at V is not at U
    kernels.newton_parts(*coulomb_rows(mu), R, U, U, q, rho_n, rho_t, got)
    assert (got[:, 4] == got[:, 5]).all()


def test_slope_and_jacobian_kernels_equal_their_twins():
    indptr, indices, blocks, diag, q, mu = block_problem(n=40)
    n = len(q)
    rng = np.random.default_rng(5)
    R, U = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    Phi, A, B = alart_curnier(R, U, mu, rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, n))
    d, Wd = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    got, want = np.full((n, 2), np.nan), np.full((n, 2), np.nan)
    kernels.slope_parts(Phi, A, B, d, Wd, got)
    ref.slope_parts(Phi, A, B, d, Wd, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert (got[:, 0] > 0).any() and (got[:, 1] > 0).any() and (got.min(axis=1) == 0).all()
    got, want = np.full_like(blocks, np.nan), np.full_like(blocks, np.nan)
    alpha = rng.uniform(0.0, 0.5, n)
    kernels.jacobian_blocks(indptr, blocks, diag, A, B, alpha, got)
    ref.jacobian_blocks(indptr, blocks, diag, A, B, alpha, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    plain = np.empty_like(blocks)                                 # alpha B on the diagonal
    kernels.jacobian_blocks(indptr, blocks, diag, A, B, np.zeros(n), plain)
    np.testing.assert_allclose(got[diag] - plain[diag], alpha[:, None, None] * B, atol=1e-12)


def test_projection_into_the_cones_equals_its_twin():
    R, _, mu, _, _ = contact_states()
    got, want = R.copy(), R.copy()
    kernels.project_admissible(*coulomb_rows(mu), got)
    ref.project_admissible(*coulomb_rows(mu), want)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert (np.hypot(got[:, 1], got[:, 2]) <= mu * got[:, 0] * (1 + 1e-12)).all()


def test_the_proximal_weight_is_capped(monkeypatch):
    """Every line search failing (as after many failures on a 23,000-contact pile), sigma grows
    tenfold per failed step up to SIGMA_MAX (beyond, J + alpha B would be a scaled identity and
    inf * 0 could enter J); there, Gauss-Seidel sweeps replace each step, counted."""
    indptr, indices, blocks, diag, q, mu = block_problem(n=12)
    alphas = []
    assemble = linear.Workspace.assemble_jacobian
    monkeypatch.setattr(linear.Workspace, "assemble_jacobian",
                        lambda self, A, B, alpha: (alphas.append((alpha / self.scale).max()),
                                                   assemble(self, A, B, alpha)))
    monkeypatch.setattr(SemismoothNewton, "_search", lambda *args: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = SemismoothNewton(tol=1e-300, max_iter=20).solve(
            Problem.coulomb(indptr, indices, blocks, diag, q, mu), np.zeros_like(q))
    assert rep.iterations == 20
    assert max(alphas) == pytest.approx(newton.SIGMA_MAX, rel=1e-12)
    raised = sum(1 for a, b in zip(alphas, alphas[1:]) if b > a)
    assert rep.events["sigma_raised"] == raised >= 8
    assert rep.events["gs_fallback"] == rep.fallbacks == 20 - raised > 0    # one per step


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
    lambda: SemismoothNewton(linear="nope"), lambda: SemismoothNewton(gather=-1),
    lambda: ps.InteriorPoint(gather=-1), lambda: Hybrid(newton_iter=0),
    lambda: Hybrid(stall=1.5), lambda: Hybrid(window=0), lambda: Hybrid(tol=-1),
    lambda: make_solver("newton", tol=-1), lambda: make_solver("hybrid", max_iter=0)])
def test_bad_options_raise_input_error(build):
    with pytest.raises(InputError):
        build()


def test_make_solver_builds_newton_and_hybrid():
    assert isinstance(make_solver("newton", tol=1e-9, max_iter=20), SemismoothNewton)
    assert isinstance(make_solver("hybrid", tol=1e-9, max_iter=20), Hybrid)


def test_the_non_monotone_line_search_accepts_what_armijo_refuses(stack, monkeypatch):
    """memory=5 (Grippo, Lampariello and Lucidi): the reference is the largest of the anchor's
    last merits, so a step that raises the merit above the current one but not above that
    maximum is taken; on the box stack it converges in fewer steps than the monotone search,
    and memory=1 is that monotone search."""
    refs = []
    search = SemismoothNewton._search

    def spy(self, p, R, U, V, d, Wd, Vd, reference, slopes):
        out = search(self, p, R, U, V, d, Wd, Vd, reference, slopes)
        refs.append((self.memory, reference, None if out is None else out[4]))
        return out

    monkeypatch.setattr(SemismoothNewton, "_search", spy)
    _, mono, _ = solve(SemismoothNewton(tol=1e-10, max_iter=500, memory=1), stack)
    _, gll, _ = solve(SemismoothNewton(tol=1e-10, max_iter=500, memory=5), stack)
    assert mono.converged and gll.converged and gll.iterations < mono.iterations
    assert all(new is None or new <= ref * (1 + 1e-12) for _, ref, new in refs)
    # some non-monotone step: accepted above the merit it started from
    merits = [(m, new) for m, _, new in refs if new is not None]
    rises = [b for (m0, a), (m1, b) in zip(merits, merits[1:]) if m0 == m1 == 5 and b > a]
    assert rises
    with pytest.raises(InputError, match="memory"):
        SemismoothNewton(memory=0)


def _mechanism_and_pile():
    """A pendulum of three spheres on joints (W's pattern holds step after step) above
    spheres that fall onto a floor (contacts come and go: the pattern changes)."""
    m = on_floor(mu=0.4)
    ids = m.spheres([(0.1 * i, 0.0, 0.6) for i in range(1, 4)], 0.04, "body", density=1000)
    m.fix_point(int(ids[0]), (0.0, 0.0, 0.6))
    for i in range(1, 3):
        m.fix_point(int(ids[i - 1]), (0.1 * i + 0.05, 0.0, 0.6), other=int(ids[i]))
    m.spheres([(0.5 + 0.11 * i, 0.3, 0.06 + 0.02 * i) for i in range(4)], 0.05, "body",
              density=1000)
    return m


@pytest.mark.parametrize("linear_solver", ["lu", "gmres"])
def test_kept_petsc_objects_give_the_bits_of_new_ones(linear_solver):
    """SemismoothNewton keeps W, J and its linear solvers from one step to the next on one rank
    (linear.Kept) while W's pattern holds: the run is bit for bit the run that makes new
    objects at every solve, while the pattern holds and across its changes."""
    runs = []
    for keep in (True, False):
        solver = SemismoothNewton(tol=1e-10, linear=linear_solver)
        if not keep:
            solver._kept = None
        sim = Simulation(_mechanism_and_pile(), step=2e-3, solver=solver, progress=0,
                         quiet=True)
        rows = [sim.step() for _ in range(60)]
        runs.append((sim.bodies.x.copy(), sim.bodies.v.copy(), sim.bodies.w.copy(),
                     [(r["contacts"], r["newton_iterations"], r["ksp_iterations"],
                       r["residual"]) for r in rows]))
        if keep:
            kept = solver._kept
            assert kept.W is not None and kept.chain is not None     # something was kept
    (xa, va, wa, ha), (xb, vb, wb, hb) = runs
    assert ha == hb
    assert len({h[0] for h in ha}) > 1                   # the pattern changed during the run
    for a, b in ((xa, xb), (va, vb), (wa, wb)):
        assert a.tobytes() == b.tobytes()


def test_a_failed_solve_keeps_nothing(monkeypatch):
    """An error inside a solve releases the kept objects (nothing half-used survives); the
    next solve makes new ones."""
    solver = SemismoothNewton(tol=1e-10)
    sim = Simulation(_mechanism_and_pile(), step=2e-3, solver=solver, progress=0, quiet=True)
    sim.step()
    assert solver._kept.W is not None

    def broken(*args, **kwargs):
        raise RuntimeError("broken")
    monkeypatch.setattr(type(solver), "_solve", broken)
    with pytest.raises(RuntimeError):
        sim.step()
    assert solver._kept.W is None and solver._kept.chain is None
