"""Rolling and spinning resistance (parsolve/laws/rolling.py, kernels/rolling.pxd): the kernels
equal their twins, the local solve is the exact minimum, Gauss-Seidel and Newton agree, and the
analytic cases of a sphere on an incline (at rest while R tan(theta) <= mu_r, else rolling
without slip at g (sin(theta) - mu_r / R cos(theta)) / (1 + 2/5)) and a spinning sphere
stopped by its spinning resistance at I w0 / (mu_s m g)."""
import numpy as np
import pytest

import parsolve as ps
from parsolve import laws
from parsolve.errors import InputError
from parsolve.laws import coulomb, rolling
from parsolve.laws.codes import OUTCOMES, STATUS
from parsolve.solvers import GaussSeidel, Problem, kernels, twins
from parsolve.solvers.interior import InteriorPoint
from parsolve.solvers.newton import SemismoothNewton
from parsolve.tables.keys import CONTACT, ROLLING, ROTATION, contact_of

G = 9.81


def spd(rng, n=3, floor=0.1):
    A = rng.normal(size=(n, n))
    return A @ A.T + floor * np.eye(n)


def pairs_problem(n, seed, mu=0.4, mu_s=0.3, mu_r=0.5):
    """n contacts, each followed by its rolling row, on a dense SPD W (block CSR): rows
    2k (contact, friction mu) and 2k + 1 (rolling, linked to row 2k)."""
    rng = np.random.default_rng(seed)
    m = 2 * n
    W = spd(rng, 3 * m, 0.5) / (3 * m)
    indptr = np.arange(0, m * m + 1, m, dtype=np.int64)
    indices = np.tile(np.arange(m, dtype=np.int64), m)
    blocks = np.array([W[3 * a:3 * a + 3, 3 * c:3 * c + 3] for a in range(m) for c in range(m)])
    diag = np.arange(m, dtype=np.int64) * (m + 1)
    B = rng.normal(size=(m, 3))
    B[0::2, 0] -= 1.0                                     # most contacts closing
    kind = np.tile([coulomb.KIND, rolling.KIND], n).astype(np.int8)
    param = np.zeros((m, 3))
    param[0::2, 0] = mu
    param[1::2] = np.stack([np.full(n, mu_s), np.full(n, mu_r), 2.0 * np.arange(n)], axis=1)
    return W, indptr, indices, blocks, diag, B, kind, param


def test_row_solve_is_the_exact_minimum_and_the_kernel_equals_its_twin():
    """Over random W, b and bounds: the kernel's reaction is the twin's, the law's residual
    vanishes at it, and no admissible point has a lower 1/2 r^T W r + b^T r."""
    rng = np.random.default_rng(3)
    outcome = OUTCOMES.index("rolling")
    for trial in range(300):
        W = spd(rng)
        b = rng.normal(size=3) * rng.choice([0.1, 1.0, 10.0])
        R = np.array([[abs(rng.normal()) * (trial % 7 != 0), 0.0, 0.0]])  # r_N 0 at times
        p = np.array([rng.choice([0.0, 0.2, 1.0]), rng.choice([0.0, 0.3, 2.0]), 0.0])
        got, code = kernels.row_solve(rolling.KIND, W, b, p, None, 0, R)
        want, wcode = laws.row_solve(rolling.KIND, W, b, p, None, 0, R)
        assert code == wcode == outcome
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        s, rho = p[0] * R[0, 0], p[1] * R[0, 0]
        assert abs(got[0]) <= s * (1 + 1e-14) and np.hypot(*got[1:]) <= rho * (1 + 1e-14)
        u = W @ got + b
        assert laws.residual_sq(rolling.KIND, p, got, u, R) <= 1e-24 * (1 + b @ b)
        f = 0.5 * got @ W @ got + b @ got
        z = rng.normal(size=(200, 3))
        trial_points = np.stack([np.clip(z[:, 0], -s, s), z[:, 1], z[:, 2]], axis=1)
        nt = np.hypot(z[:, 1], z[:, 2])
        trial_points[:, 1:] *= np.minimum(1.0, rho / np.maximum(nt, 1e-300))[:, None]
        values = 0.5 * np.einsum("ki,ij,kj->k", trial_points, W, trial_points) + trial_points @ b
        assert (values >= f - 1e-12 * (1 + abs(f))).all()


def test_where_spin_and_rolling_decouple_the_kernel_equals_its_twin_to_the_bit():
    """W without a spin-rolling coupling (a sphere's: W = E (J_A^-1 + J_B^-1) E^T): the
    kernel solves the disc once and reuses it at the clipped spin (rolling.pxd's _spin_at);
    its reaction is the twin's, which solves it three times, to the bit, zeros' signs
    included, on disc problems isotropic and not, with the spin clipped in most trials."""
    rng = np.random.default_rng(7)
    clipped = 0
    for trial in range(2000):
        W = np.zeros((3, 3))
        W[0, 0] = rng.uniform(0.5, 2.0)
        if trial % 2:
            W[1:, 1:] = spd(rng, 2)
        else:
            W[1, 1] = W[2, 2] = rng.uniform(0.5, 2.0)
        b = rng.normal(size=3) * rng.choice([0.1, 1.0, 10.0])
        if trial % 5 == 0:
            b[1] = 0.0
        if trial % 7 == 0:
            b[2] = -0.0
        R = np.array([[abs(rng.normal()), 0.0, 0.0]])
        p = np.array([rng.choice([0.05, 0.2, 1.0]), rng.choice([0.0, 0.3, 2.0]), 0.0])
        got, _ = kernels.row_solve(rolling.KIND, W, b, p, None, 0, R)
        want, _ = laws.row_solve(rolling.KIND, W, b, p, None, 0, R)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        clipped += abs(got[0]) >= p[0] * R[0, 0] * (1 - 1e-12)
    assert clipped > 1000


def test_sweeps_residuals_and_newton_parts_equal_their_twins():
    """Contacts and their rolling rows in one sweep: compiled and Python give the same
    iterates, outcome counts, residual, Newton parts, Phi, A, B, the coupling C and the
    projection."""
    W, indptr, indices, blocks, diag, B, kind, param = pairs_problem(6, 1)
    n = len(B)
    order = np.arange(n, dtype=np.int64)
    R1, R2 = np.zeros((n, 3)), np.zeros((n, 3))
    c1, c2 = np.zeros(len(OUTCOMES), np.int64), np.zeros(len(OUTCOMES), np.int64)
    for _ in range(5):
        kernels.gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R1, order,
                                   1.0, c1)
        twins.gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R2, order,
                                 1.0, c2)
    np.testing.assert_allclose(R1, R2, rtol=1e-12, atol=1e-14)
    assert (c1 == c2).all() and c1[OUTCOMES.index("rolling")] == 5 * 6
    assert np.abs(R1[1::2]).max() > 0                    # the rolling rows act
    U1, U2 = np.empty((n, 3)), np.empty((n, 3))
    np.testing.assert_allclose(
        kernels.delassus_residual(indptr, indices, blocks, B, kind, param, R1, U1),
        twins.delassus_residual(indptr, indices, blocks, B, kind, param, R1, U2), rtol=1e-12)
    rho = np.full(n, 0.7)
    got, want = np.empty((n, 6)), np.empty((n, 6))
    kernels.newton_parts(kind, param, R1, U1, U1 + 0.1, B, rho, 2 * rho, got)
    twins.newton_parts(kind, param, R1, U1, U1 + 0.1, B, rho, 2 * rho, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    for V in (U1, U1 + 0.3, -U1):
        out = [np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3)), np.empty((n, 3))]
        ref = [np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3)), np.empty((n, 3))]
        kernels.alart_curnier(kind, param, R1, V, rho, 2 * rho, *out)
        twins.alart_curnier(kind, param, R1, V, rho, 2 * rho, *ref)
        for a, b in zip(out, ref):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    Z1, Z2 = R1 * 3.0 + 0.1, R1 * 3.0 + 0.1
    kernels.project_admissible(kind, param, Z1)
    twins.project_admissible(kind, param, Z2)
    np.testing.assert_allclose(Z1, Z2, rtol=0, atol=1e-14)


def test_the_coupling_column_is_the_derivative_in_the_contacts_normal_impulse():
    """C = dPhi/dr_N of the rolling rows (Newton's block (rolling row, contact row)) against
    central differences, at points inside and beyond both bounds."""
    rng = np.random.default_rng(5)
    n = 40
    kind = np.tile([coulomb.KIND, rolling.KIND], n).astype(np.int8)
    param = np.zeros((2 * n, 3))
    param[0::2, 0] = 0.5
    param[1::2] = np.stack([np.full(n, 0.2), np.full(n, 0.4), 2.0 * np.arange(n)], axis=1)
    R = rng.normal(size=(2 * n, 3))
    R[0::2, 0] = np.abs(R[0::2, 0]) + 0.1
    U = rng.normal(size=(2 * n, 3))
    rho_n, rho_t = np.full(2 * n, 0.8), np.full(2 * n, 1.3)
    Phi, A, B, C = (np.empty((2 * n, 3)), np.empty((2 * n, 3, 3)), np.empty((2 * n, 3, 3)),
                    np.empty((2 * n, 3)))
    kernels.alart_curnier(kind, param, R, U, rho_n, rho_t, Phi, A, B, C)
    eps = 1e-7
    Rp, Rm = R.copy(), R.copy()
    Rp[0::2, 0] += eps
    Rm[0::2, 0] -= eps
    fd = (laws.phi_rows(kind, param, Rp, U, rho_n, rho_t, False)
          - laws.phi_rows(kind, param, Rm, U, rho_n, rho_t, False)) / (2 * eps)
    np.testing.assert_allclose(C[1::2], fd[1::2], atol=1e-6)
    assert (C[0::2] == 0).all() and np.abs(C[1::2]).max() > 0.1


@pytest.mark.parametrize("warm", [0, 10])
def test_gauss_seidel_and_newton_agree_and_meet_the_law(warm):
    W, indptr, indices, blocks, diag, B, kind, param = pairs_problem(5, 7)
    sols = {}
    for name, solver in (("gs", GaussSeidel(tol=1e-12, max_iter=100000)),
                         ("newton", SemismoothNewton(tol=1e-12, warm_sweeps=warm))):
        R = np.zeros((len(B), 3))
        report = solver.solve(Problem.rows(indptr, indices, blocks, diag, B, kind, param), R)
        assert report.converged, (name, report.residual)
        U = (W @ R.reshape(-1)).reshape(-1, 3) + B
        rn = np.maximum(R[0::2, 0], 0.0)
        roll, u = R[1::2], U[1::2]
        assert (np.abs(roll[:, 0]) <= 0.3 * rn * (1 + 1e-9) + 1e-14).all()
        assert (np.hypot(roll[:, 1], roll[:, 2]) <= 0.5 * rn * (1 + 1e-9) + 1e-14).all()
        inside = np.hypot(roll[:, 1], roll[:, 2]) < 0.5 * rn * (1 - 1e-6)
        assert np.abs(u[inside, 1:]).max(initial=0) <= 1e-9       # held where not at bound
        sols[name] = R
    assert (sols["gs"][1::2] != 0).any()
    np.testing.assert_allclose(sols["gs"], sols["newton"], atol=1e-8 * np.abs(sols["gs"]).max())


def incline(theta, mu_r, R=0.1, h=1e-3, solver=None, mu=0.9, output=None):
    """A sphere at rest on an incline of angle theta (a half-space through the origin), with
    rolling resistance mu_r; its Simulation."""
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    model = ps.Model(gravity=(0.0, 0.0, -G))
    model.surface("s", "s", friction=mu, rolling=mu_r)
    model.half_space((0, 0, 0), n, "s")
    model.sphere(R * n, R, "s", density=1000.0)
    return ps.Simulation(model, step=h, solver=solver or GaussSeidel(tol=1e-14, max_iter=10000),
                         progress=0, quiet=True, verify_every=0, output=output)


@pytest.mark.parametrize("theta, mu_r", [(0.3, 0.02), (0.5, 0.0), (0.25, 0.01)])
def test_a_sphere_rolls_down_an_incline_at_the_analytic_acceleration(theta, mu_r):
    """R tan(theta) > mu_r: rolling without slip at a = g (sin - mu_r/R cos) / (1 + 2/5), to
    1e-9; the energy balance closes with what rolling dissipates."""
    R = 0.1
    sim = incline(theta, mu_r, R)
    rows = [sim.step() for _ in range(200)]
    down = np.array([np.cos(theta), 0.0, np.sin(theta)])
    a = -(sim.owned.v[0] @ down) / sim.time
    exact = G * (np.sin(theta) - mu_r / R * np.cos(theta)) / 1.4
    assert a == pytest.approx(exact, rel=1e-9)
    assert sim.owned.w[0, 1] * R == pytest.approx(sim.owned.v[0] @ down, rel=1e-9)  # no slip
    dissipated = rows[-1]["dissipated"]
    moved = -(sim.owned.x[0] - R * np.array([-np.sin(theta), 0, np.cos(theta)])) @ down
    assert dissipated == pytest.approx(mu_r / R * sim.owned.mass[0] * G * np.cos(theta)
                                       * moved, rel=1e-6)
    assert abs(rows[-1]["energy_error"]) <= 1e-12 * sim.owned.mass[0] * G * R


@pytest.mark.parametrize("solver", [None, SemismoothNewton(tol=1e-13)], ids=["gs", "newton"])
def test_a_sphere_rests_on_an_incline_while_its_rolling_resistance_holds(solver):
    """R tan(theta) <= mu_r: at rest (the companion row holds the rotation below its bound),
    and so does the steepest incline, R tan(theta) = mu_r (1 - 1e-6)."""
    R = 0.1
    for mu_r in (0.02, R * np.tan(0.15) / (1 - 1e-6)):
        sim = incline(0.15, mu_r, R, solver=solver)
        for _ in range(100):
            sim.step()
        assert np.abs(sim.owned.v[0]).max() <= 1e-13 and np.abs(sim.owned.w[0]).max() <= 1e-12
        c = sim.contacts
        assert list(c.origin) == [CONTACT, ROLLING] and c.geometry[1] == ROTATION
        assert c.k1[0] == c.k1[1] and contact_of(c.k2[1]) == c.k2[0]
        assert laws.status(c.kind, c.param, c.R)[1] == STATUS.index("sticking")


def test_a_spinning_sphere_stops_at_the_analytic_time():
    """Spin w0 about the floor's normal, spinning resistance mu_s: w falls at mu_s m g / I
    and stops at t* = I w0 / (mu_s m g), within a step; its rolling rows say 'rolling' (at
    the bound) until then."""
    R, mu_s, w0, h = 0.05, 0.002, 20.0, 1e-3
    model = ps.Model(gravity=(0.0, 0.0, -G))
    model.surface("s", "s", friction=0.5, spinning=mu_s)
    model.half_space((0, 0, 0), (0, 0, 1), "s")
    model.sphere((0, 0, R), R, "s", density=2000.0, angular_velocity=(0, 0, w0))
    sim = ps.Simulation(model, step=h, solver=GaussSeidel(tol=1e-14, max_iter=1000),
                        progress=0, quiet=True, verify_every=0)
    m, inertia = sim.owned.mass[0], sim.owned.inertia[0, 2]
    stop = inertia * w0 / (mu_s * m * G)
    spins, statuses = [], []
    while sim.time < 1.5 * stop:
        sim.step()
        spins.append(sim.owned.w[0, 2])
        c = sim.contacts
        statuses.append(laws.status(c.kind, c.param, c.R)[1])
    t = h * np.arange(1, len(spins) + 1)
    moving = t < stop - h
    np.testing.assert_allclose(np.array(spins)[moving], w0 - mu_s * m * G / inertia * t[moving],
                               rtol=1e-9)
    assert (np.abs(np.array(spins)[t >= stop]) <= 1e-12).all()
    stopped = t[np.flatnonzero(np.abs(spins) <= 1e-12)[0]]
    assert stop <= stopped < stop + h
    assert set(np.array(statuses)[moving]) == {STATUS.index("rolling")}
    assert set(np.array(statuses)[t > stop + h]) == {STATUS.index("sticking")}


@pytest.mark.parametrize("solver", [None, SemismoothNewton(tol=1e-13)], ids=["gs", "newton"])
def test_a_turntable_spins_a_sphere_up_to_its_own_rate(solver):
    """A sphere at rest on the axis of a floor turning at Omega about its normal (a turning
    obstacle, Model.move with an angle): the rolling row's U is the spin relative to the
    floor's, so spinning resistance mu_s drags the sphere's spin up at mu_s m g / I until it
    turns with the floor at Omega, then holds it there; the sphere stays in place (its point
    on the axis does not move) and rolling resistance takes no part."""
    R, mu_s, Omega, h = 0.05, 0.002, 3.0, 1e-3
    model = ps.Model(gravity=(0.0, 0.0, -G))
    model.surface("s", "s", friction=0.5, spinning=mu_s, rolling=0.01)
    model.half_space((0, 0, 0), (0, 0, 1), "s", name="table")
    model.move("table", angle=lambda t: Omega * t, rate=lambda t: Omega, axis=(0, 0, 1),
               centre=(0, 0, 0))
    model.sphere((0, 0, R), R, "s", density=2000.0)
    sim = ps.Simulation(model, step=h, solver=solver or GaussSeidel(tol=1e-14, max_iter=1000),
                        progress=0, quiet=True, verify_every=0)
    m, inertia = sim.owned.mass[0], sim.owned.inertia[0, 2]
    alpha = mu_s * m * G / inertia
    locked = Omega / alpha
    spins = []
    while sim.time < 1.5 * locked:
        sim.step()
        spins.append(sim.owned.w[0, 2])
    spins, t = np.array(spins), h * np.arange(1, len(spins) + 1)
    rising = t < locked - h
    np.testing.assert_allclose(spins[rising], alpha * t[rising], rtol=1e-9)
    assert np.abs(spins[t > locked + h] - Omega).max() <= 1e-11 * Omega
    assert np.abs(sim.owned.x[0] - (0, 0, R)).max() <= 1e-12
    assert np.abs(sim.owned.w[0, :2]).max() <= 1e-12 and np.abs(sim.owned.v[0]).max() <= 1e-12


def test_rolling_resistance_is_a_surface_property_with_its_checks():
    """Coefficients are lengths >= 0 per pair; a model without them keeps its fingerprint."""
    def model(**kw):
        m = ps.Model()
        m.surface("a", "b", friction=0.3, **kw)
        m.sphere((0, 0, 0), 0.1, "a", density=1.0)
        return m
    assert model().fingerprint() == model(rolling=0.0, spinning=0.0).fingerprint()
    assert model().fingerprint() != model(rolling=1e-3).fingerprint()
    with pytest.raises(InputError, match=r"surface \('a', 'b'\): rolling resistance"):
        model(rolling=-1.0)
    with pytest.raises(InputError, match="spinning"):
        model(spinning=float("nan"))


def test_solvers_and_exports_that_cannot_carry_rolling_rows_say_so():
    """The interior point has no cone for a rolling row and FCLIB's local problems hold
    frictional contacts only: both refuse by name."""
    from parsolve.io import fclib

    sim = incline(0.3, 0.02)
    seen = []
    sim.observers.append(lambda stepper, ld: seen.append(ld))
    sim.step()
    with pytest.raises(InputError, match="rolling"):
        fclib.from_local_dynamics(seen[0])
    W, indptr, indices, blocks, diag, B, kind, param = pairs_problem(2, 1)
    with pytest.raises(InputError, match="kind rolling"):
        InteriorPoint().solve(Problem.rows(indptr, indices, blocks, diag, B, kind, param),
                              np.zeros((4, 3)))
