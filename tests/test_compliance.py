"""Compliant contacts (laws/coulomb.py): a normal spring of stiffness k loaded by the contact's
approach, Signorini's law on U_N + c (R_N - R_N') with c = 1 / (h^2 k). Kernels against their
twins, the law at one row, a load compressing the springs by load / k (in series down a
column), dissipation, the three solvers on one compliant problem, a pile where rigid contacts
leave Gauss-Seidel capped and compliant ones do not, bad stiffnesses, a restart."""
import textwrap

import numpy as np
import pytest

import parsolve as ps
from parsolve import laws
from parsolve.errors import InputError
from parsolve.laws import coulomb
from parsolve.solvers import GaussSeidel, InteriorPoint, Problem, SemismoothNewton, kernels
from test_laws import dense_problem, kernels_equal_twins


def compliant(problem, c):
    """dense_problem's rows with compliance c on its contacts."""
    W, indptr, indices, blocks, diag, B, kind, param = problem
    param = param.copy()
    param[kind == coulomb.KIND, 1] = c
    return W, indptr, indices, blocks, diag, B, kind, param


def test_compliant_rows_in_sweeps_residuals_and_newton_parts_equal_their_twins():
    W, *problem = compliant(dense_problem(12, 4, (0, 1, 0)), 0.37)
    kernels_equal_twins(problem, "bilateral", 4 * 4)


def test_one_compliant_row_meets_its_law_and_a_pressed_one_compresses_its_spring():
    rng = np.random.default_rng(5)
    for _ in range(300):
        A = rng.normal(size=(3, 3))
        W = A @ A.T + 0.1 * np.eye(3)
        b, c, mu = rng.normal(size=3), rng.uniform(0.05, 3.0), rng.uniform(0.0, 1.0)
        p = np.array([mu, c])
        got, code = kernels.row_solve(coulomb.KIND, W, b, p)
        want, _ = laws.row_solve(coulomb.KIND, W, b, p)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        u = W @ got + b
        assert laws.residual_sq(coulomb.KIND, p, got, u) <= 1e-20 * (1 + b @ b)
        if got[0] > 0:                        # closed: the law's velocity u_N + c r_N is 0
            assert abs(u[0] + c * got[0]) <= 1e-10 * (1 + abs(b[0]))
    # frictionless, pressed: r_N = -b_N / (W_NN + c), the rigid reaction's W_NN / (W_NN + c)
    W, b = np.diag([2.0, 3.0, 3.0]), np.array([-4.0, 0.0, 0.0])
    r, _ = kernels.row_solve(coulomb.KIND, W, b, np.array([0.0, 0.5]))
    np.testing.assert_allclose(r, [4.0 / 2.5, 0.0, 0.0], rtol=1e-15)


def test_the_jacobian_through_the_compliance_matches_finite_differences():
    rng = np.random.default_rng(2)
    n = 400
    R, U = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    p = np.stack([rng.uniform(0.1, 1, n), rng.uniform(0.0, 2.0, n)], axis=1)
    rn, rt = rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, n)
    _, A, _ = coulomb.phi_rows(R, U, p, rn, rt)
    h = 1e-7
    for j in range(3):
        E = np.zeros((n, 3))
        E[:, j] = h
        fd = (coulomb.phi_rows(R + E, U, p, rn, rt, False)
              - coulomb.phi_rows(R - E, U, p, rn, rt, False)) / (2 * h)
        np.testing.assert_allclose(fd, A[:, :, j], atol=1e-6)


def resting_column(k, spheres=1, load=0.0, h=1e-3, steps=400, at=200):
    """`spheres` spheres of 1 kg and radius 0.01 stacked on a floor of stiffness k (both
    contacts: sphere-floor and sphere-sphere), from touching, at rest; from step `at` a
    downward load on the top one. Returns (heights of the centres at step `at` and at the
    end, the floor contact's normal force at the end)."""
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("s", "s", friction=0.3, stiffness=k)
    m.half_space((0, 0, 0), (0, 0, 1), "s")
    ids = [m.sphere((0, 0, 0.01 + 0.02 * i), 0.01, "s", mass=1.0) for i in range(spheres)]
    if load:
        m.load(int(ids[-1]), force=lambda t: (0.0, 0.0, -load if t >= at * h else 0.0))
    sim = ps.Simulation(m, step=h, solver=GaussSeidel(tol=1e-13, max_iter=1000), quiet=True,
                        progress=1e9)
    for _ in range(at):
        sim.step()
    before = sim.bodies.x[np.argsort(sim.bodies.gid), 2].copy()
    for _ in range(steps - at):
        assert sim.step()["converged"]
    after = sim.bodies.x[np.argsort(sim.bodies.gid), 2].copy()
    c = sim.contacts
    floor = np.flatnonzero(c.obstacle >= 0)
    return before, after, float(c.R[floor, 0].sum()) / h


@pytest.mark.parametrize("k", [1e6, 1e7])
def test_a_load_compresses_the_springs_by_load_over_k_in_series(k):
    """A load P on the top of a column of three spheres at rest: each of the three contacts
    carries P more and shortens by P / k, so the top sinks 3 P / k, the middle 2 P / k, the
    bottom P / k; the floor carries the weight and the load. Rigid contacts do not move."""
    P = 30.0
    before, after, floor = resting_column(k, 3, P)
    np.testing.assert_allclose(before - after, np.array([1, 2, 3]) * P / k, rtol=1e-6)
    assert floor == pytest.approx(3 * 9.81 + P, rel=1e-7)
    before, after, _ = resting_column(0.0, 3, P)
    assert np.abs(before - after).max() < 1e-12


def test_a_drop_on_a_compliant_floor_dissipates_and_comes_to_rest():
    """A ball dropped with e = 0 on a spring floor (h omega = 0.1 to 3: from a lightly damped
    spring, which bounces, to backward Euler's heavy damping): its energy never rises above the
    start's (the spring's included); where h omega >= 1 it comes to rest with its weight on the
    floor."""
    for k in (1e4, 1e6, 1e7):
        m = ps.Model(gravity=(0.0, 0.0, -9.81))
        m.surface("s", "s", friction=0.3, stiffness=k)
        m.half_space((0, 0, 0), (0, 0, 1), "s")
        m.sphere((0, 0, 0.06), 0.01, "s", mass=1.0)
        sim = ps.Simulation(m, step=1e-3, quiet=True, progress=1e9,
                            solver=GaussSeidel(tol=1e-13, max_iter=1000))
        e0 = 9.81 * 0.06
        for _ in range(1500):
            sim.step()
            b, c = sim.bodies, sim.contacts
            force = float(c.R[:, 0].sum()) / sim.h if len(c) else 0.0
            energy = 0.5 * float(b.v[0] @ b.v[0]) + 9.81 * b.x[0, 2] + 0.5 * force ** 2 / k
            assert energy <= e0 * (1 + 1e-9)
        if k >= 1e6:
            assert np.abs(sim.bodies.v[0]).max() < 1e-6
            assert force == pytest.approx(9.81, rel=1e-6)


def test_gauss_seidel_newton_and_the_interior_point_agree_on_compliant_contacts():
    W, indptr, indices, blocks, diag, B, kind, param = compliant(
        dense_problem(15, 6, (0,), mu=0.3), 0.2)
    sols = {}
    for name, solver in (("gs", GaussSeidel(tol=1e-11, max_iter=50000)),
                         ("newton", SemismoothNewton(tol=1e-11)),
                         ("ipm", InteriorPoint(tol=1e-11))):
        R = np.zeros((15, 3))
        problem = Problem.rows(indptr, indices, blocks, diag, B, kind, param)
        assert solver.solve(problem, R).converged, name
        U = (W @ R.reshape(-1)).reshape(-1, 3) + B
        Uc = U[:, 0] + 0.2 * R[:, 0]                  # the law's normal velocity
        assert (R[:, 0] >= -1e-12).all() and (Uc >= -1e-9).all()
        assert np.abs(R[:, 0] * Uc).max() <= 1e-9
        assert (R[:, 0] > 1e-6).any() and (Uc > 1e-6).any()     # some closed, some open
        sols[name] = R
    for name in ("newton", "ipm"):
        np.testing.assert_allclose(sols[name], sols["gs"], atol=1e-8 * np.abs(sols["gs"]).max())


def pile(k, spheres=300, steps=260):
    """A pour of `spheres` glass spheres (r 1.8-2 mm) into a 30 mm box, h = 5e-4, Gauss-Seidel
    to 1e-4 capped at 1,000 sweeps (the peer bench's pour, smaller): the steps that ended
    above the tolerance and the mean sweeps."""
    rng = np.random.default_rng(7)
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("glass", "glass", friction=0.4, restitution=0.2, stiffness=k)
    m.box_walls((0, 0, 0), (0.03, 0.03, 0.3), material="glass")
    n = int(np.ceil(np.sqrt(spheres / 8)))
    i = np.arange(spheres)
    x = np.stack([0.0025 + 0.005 * (i % n), 0.0025 + 0.005 * ((i // n) % n),
                  0.003 + 0.005 * (i // (n * n))], axis=1) + rng.uniform(-5e-4, 5e-4, (spheres, 3))
    m.spheres(x, rng.uniform(1.8e-3, 2.0e-3, spheres), "glass", density=2500.0)
    sim = ps.Simulation(m, step=5e-4, quiet=True, progress=1e9, verify_every=0,
                        solver=GaussSeidel(tol=1e-4, max_iter=1000, omega=1.0))
    rows = [sim.step() for _ in range(steps)]
    return (sum(not r["converged"] for r in rows), np.mean([r["iterations"] for r in rows]),
            sim)


def test_a_pile_gauss_seidel_leaves_capped_converges_with_compliant_contacts():
    """On rigid contacts some steps of a settling pile end at the sweep cap above the
    tolerance (Gauss-Seidel wanders there); with the peer's glass as springs (k = 1,640 N/m:
    the Hertz secant stiffness of two of these spheres at five times a sphere's weight) every
    step converges, in a tenth of the sweeps, and the pile's centre of mass is where the rigid
    one's is within 3 % (whose capped steps are not quite solutions)."""
    capped, sweeps, rigid = pile(0.0)
    assert capped > 10
    capped_k, sweeps_k, soft = pile(1640.0)
    assert capped_k == 0 and sweeps_k < 0.2 * sweeps
    com = [np.average(s.bodies.x[:, 2], weights=s.bodies.radius ** 3) for s in (rigid, soft)]
    assert com[1] == pytest.approx(com[0], rel=0.03)


@pytest.mark.parametrize("value, words", [(-1.0, "stiffness must be >= 0"),
                                          (float("nan"), "stiffness"), ("x", "stiffness")])
def test_a_bad_stiffness_is_refused_naming_the_pair(value, words):
    m = ps.Model()
    with pytest.raises(InputError, match=words) as e:
        m.surface("grain", "wall", friction=0.3, stiffness=value)
    assert "'grain', 'wall'" in str(e.value)


def test_a_rigid_model_keeps_its_fingerprint_and_a_stiffness_changes_it():
    def model(**kw):
        m = ps.Model()
        m.surface("a", "a", friction=0.3, **kw)
        return m.materials.state()
    assert model() == model(stiffness=0.0) and "stiffness" not in model()
    assert model(stiffness=1e3) != model(stiffness=2e3)


COMPLIANT = """
import numpy as np
import parsolve as ps
rng = np.random.default_rng(3)
m = ps.Model(gravity=(0.0, 0.0, -9.81))
m.surface("g", "g", friction=0.4, restitution=0.2, stiffness=2e4)
m.box_walls((0, 0, 0), (0.1, 0.1, 0.3), "g")
k = np.arange(100)
x = np.stack([0.012 + 0.02 * (k % 5), 0.012 + 0.02 * ((k // 5) % 5),
              0.0095 + 0.0185 * (k // 25)], axis=1)
m.spheres(x + rng.uniform(-5e-4, 5e-4, x.shape), 0.009, "g", density=2500)
m.run(0.09, 1e-3, output="res.h5", frames=0.03, progress=0,
      solver=ps.GaussSeidel(tol=1e-8, max_iter=2000))
"""


def test_a_restart_continues_a_compliant_pile_exactly(tmp_path):
    """The springs' state is the rows' reactions, which the checkpoint holds: the run
    continued from a checkpoint, on 2 ranks, ends where the whole run ends, bit for bit."""
    from parsolve.io.hdf5 import h5py_module
    from test_restart import assert_restart_continues

    assert_restart_continues(tmp_path, textwrap.dedent(COMPLIANT))
    first = sorted((tmp_path / "legs" / "checkpoints").glob("*.h5"))[0]
    with h5py_module().File(first, "r") as f:           # loaded springs at the restart
        assert (f["contacts/R"][:, 0] > 0).sum() > 20


def test_fclib_exports_the_problem_the_solvers_meet(tmp_path):
    """A step of a column on springs exported: W's normal diagonal is the rigid one's plus c,
    and the exported problem solves (by FCLIB's rows alone) to the run's reactions."""
    from parsolve.io import fclib

    def column(k):
        m = ps.Model()
        m.surface("g", "g", friction=0.3, stiffness=k)
        m.half_space((0, 0, 0), (0, 0, 1), "g")
        m.spheres(np.array([[0, 0, 0.01 + 0.02 * i] for i in range(10)]), 0.01, "g",
                  density=1000)
        return m

    p = {}
    for k in (0.0, 2e3):
        path = str(tmp_path / f"k{k:g}.h5")
        sim = ps.Simulation(column(k), 1e-3, solver=GaussSeidel(tol=1e-12, max_iter=20000),
                            progress=0, quiet=True)
        fclib.export_step(sim, path, 5)
        sim.run(5e-3)
        p[k] = fclib.read(path), sim.contacts.R.copy()
    (rigid, _), (soft, R_run) = p[0.0], p[2e3]
    c = 1.0 / (1e-3 ** 2 * 2e3)
    np.testing.assert_allclose(soft.blocks[soft.diag, 0, 0] - rigid.blocks[rigid.diag, 0, 0],
                               c, rtol=1e-12)
    R = np.zeros((soft.n, 3))
    problem = Problem.coulomb(soft.indptr, soft.indices, soft.blocks, soft.diag, soft.q, soft.mu)
    assert GaussSeidel(tol=1e-12, max_iter=20000).solve(problem, R).converged
    assert (R_run[:, 0] > 0).all()
    np.testing.assert_allclose(R, R_run, rtol=0, atol=1e-8 * np.abs(R_run).max())
