"""Connectors (Exudyn's CoordinateSpringDamperExt) on body coordinates: the law's kernel and
twin, the implicit spring-damper against the analytic oscillation and its energy, friction
(Stribeck, bristles, exact Coulomb) and limit stops against their analytic behaviour, gears,
the user function, outputs, checkpoints and bad input. The comparison with Exudyn itself is in
bench/bench_connector.py."""
import numpy as np
import pytest

import parsolve as ps
from parsolve import laws
from parsolve.errors import InputError
from parsolve.laws import connector
from parsolve.laws.codes import OUTCOMES
from parsolve.run import Simulation
from parsolve.solvers import GaussSeidel, kernels


# -- the law ---------------------------------------------------------------------------------
def test_connector_row_solve_kernel_equals_twin_and_meets_the_law():
    rng = np.random.default_rng(3)
    for k in range(400):
        A = rng.normal(size=(3, 3))
        W = A @ A.T + 0.1 * np.eye(3)
        b = rng.normal(size=3)
        p = np.array([rng.normal(), -abs(rng.normal()), abs(rng.normal()) if k % 2 else 0.0])
        got, code = kernels.row_solve(connector.KIND, W, b, p)
        want, wcode = laws.row_solve(connector.KIND, W, b, p)
        assert code == wcode == OUTCOMES.index("connector")
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
        u = W @ got + b
        s = got[0] - p[0] - p[1] * u[0]                  # the friction part
        if p[2] == 0:
            assert abs(s) < 1e-12
        else:                                            # s in -c Sgn(u_N)
            assert abs(s) <= p[2] * (1 + 1e-12)
            assert abs(u[0]) < 1e-12 or abs(s + p[2] * np.sign(u[0])) < 1e-12
        assert (got[1:] == 0).all()
        assert laws.residual_sq(connector.KIND, p, got, u) < 1e-22 * (1 + b @ b)
    r0 = np.array([1.0, 2.0, 3.0])                      # 1 - g W_NN <= 0: fails, keeps r0
    for impl in (kernels.row_solve, laws.row_solve):
        r, code = impl(connector.KIND, np.eye(3), np.ones(3), np.array([0.0, 2.0, 0.0]), r0)
        assert OUTCOMES[code] == "failed" and np.array_equal(r, r0)


def test_connector_rows_in_sweeps_residuals_and_newton_parts_equal_their_twins():
    from test_laws import dense_problem, kernels_equal_twins

    W, indptr, indices, blocks, diag, B, kind, param = dense_problem(12, 5, (0, 3, 3, 1))
    param = np.hstack([param, np.zeros((12, 1))])         # (mu, c) -> three columns
    rows = np.flatnonzero(kind == connector.KIND)
    param[rows] = [[0.3, -0.5, 0.0], [-0.2, -0.1, 0.4], [0.1, 0.0, 0.2]] * 2
    kernels_equal_twins((indptr, indices, blocks, diag, B, kind, param), "connector",
                        4 * len(rows))
    # Gauss-Seidel to convergence and the semismooth Newton meet every row's law alike
    from parsolve.solvers import Problem
    from parsolve.solvers import SemismoothNewton

    sols = []
    for solver in (GaussSeidel(tol=1e-12, max_iter=20000), SemismoothNewton(tol=1e-12)):
        R = np.zeros((12, 3))
        report = solver.solve(Problem.rows(indptr, indices, blocks, diag, B, kind, param), R)
        assert report.converged
        sols.append(R)
    np.testing.assert_allclose(sols[0], sols[1], atol=1e-8)


# -- one mass on a coordinate ----------------------------------------------------------------
def mass(v0=0.0, radius=0.05, m=1.0, force=None):
    model = ps.Model(gravity=(0, 0, 0))
    model.surface("s", "s", friction=0.0)
    b = model.sphere((0, 0, 0), radius, "s", mass=m, velocity=(v0, 0, 0))
    if force is not None:
        model.load(b, force=(force, 0, 0))
    return model, b


def run(model, h, steps, every=1, **options):
    sim = Simulation(model, step=h, progress=0, quiet=True, verify_every=0,
                     solver=GaussSeidel(tol=1e-12, max_iter=200), **options)
    out = []
    for k in range(steps):
        sim.step()
        if (k + 1) % every == 0:
            g = sim.outputs("connectors")
            out.append([sim.time, sim.owned.v[0, 0]] + [g[n][0] for n in
                                                        ("displacement", "velocity", "force",
                                                         "friction_mode", "limit_stop_state",
                                                         "last_sticking_position")])
    return sim, np.array(out)


def test_a_spring_damper_follows_the_damped_oscillation():
    """1 kg, k = 400 N/m, d = 2 N s/m, v(0) = 1 m/s: q(t) = v0 e^(-z w t) sin(w_d t) / w_d
    over 2 s within 1e-3 of the amplitude at h = 1e-3 (the trapezoidal rule's error falls as
    h^2: bench/bench_connector.py measures 2.4e-6 at h = 1e-4), and q is the body's
    displacement exactly."""
    k, d = 400.0, 2.0
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b, (1, 0, 0)), stiffness=k, damping=d)
    sim, out = run(model, 1e-3, 2000)
    t, q = out[:, 0], out[:, 2]
    w0, z = np.sqrt(k), d / (2 * np.sqrt(k))
    wd = w0 * np.sqrt(1 - z * z)
    exact = np.exp(-z * w0 * t) * np.sin(wd * t) / wd
    assert np.abs(q - exact).max() < 1e-3 / wd
    assert sim.owned.x[0, 0] == pytest.approx(q[-1], abs=1e-15)
    np.testing.assert_allclose(out[:, 3], out[:, 1], atol=1e-15)       # v is the body's


@pytest.mark.parametrize("stiffness_ratio", [0.01, 10.0, 1e4])
def test_an_undamped_spring_keeps_its_energy_at_any_stiffness(stiffness_ratio):
    """The implicit trapezoidal rule: no stability limit on k h^2 / m (10 and 10^4 run as
    0.01 does), and the energy m v^2 / 2 + k q^2 / 2 is conserved to round-off."""
    k, h = 100.0, np.sqrt(stiffness_ratio / 100.0)
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b), stiffness=k)
    _, out = run(model, h, 200)
    energy = 0.5 * out[:, 1] ** 2 + 0.5 * k * out[:, 2] ** 2
    np.testing.assert_allclose(energy, 0.5, rtol=1e-11)


@pytest.mark.parametrize("friction", ["stribeck", "coulomb", "bristle"])
def test_friction_alone_never_adds_energy_and_stops_the_mass(friction):
    params = dict(f_dynamic_friction=2.0, f_static_friction_offset=1.0,
                  exponential_decay_static=0.05, f_viscous_friction=0.5)
    kw = {"stribeck": dict(friction_proportional_zone=1e-3),
          "coulomb": dict(friction="coulomb"),
          "bristle": dict(sticking_stiffness=1e5, sticking_damping=600.0)}[friction]
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b), **params, **kw)
    _, out = run(model, 1e-3, 600)
    energy = 0.5 * out[:, 1] ** 2
    rise = 1e-12
    if friction == "bristle":        # with the bristles' spring energy while they stick; on
        energy = energy + np.where(out[:, 5] == 0, 0.5 * 1e5 * (out[:, 2] - out[:, 7]) ** 2,
                                   0.0)
        # Exudyn's re-sticking sets x_lsp so that the bristle force k (q - x_lsp) + d v starts
        # at the last slip force: a spring energy (3 N + d |v|)^2 / 2k, |v| <= a h = 5 mm/s
        rise = (3.0 + 600.0 * 5e-3) ** 2 / (2 * 1e5)
    assert (np.diff(energy) <= rise).all() and energy[0] < 0.5
    # it stops as a block under 2 N ... 3.5 N of friction stops (the bristles, sticking at
    # the start as in Exudyn, first take half the speed in one step), and stays at rest
    assert np.abs(out[-100:, 1]).max() < 1e-3
    start = 0.5 if friction == "bristle" else 1.0
    assert start / 3.5 < np.argmax(np.abs(out[:, 1]) < 1e-3) * 1e-3 < start / 2.0


def test_bristles_stick_below_the_breakaway_force_and_slide_above_it():
    """A constant 2.5 N against f_dynamic 2 N + static offset 1 N: the block sticks on the
    bristle spring (q = F / k_mu); at 4 N it breaks away and slides at (F - f_slip) / m,
    f_slip tending to 2 N as the static offset decays."""
    kmu = 1e5
    params = dict(f_dynamic_friction=2.0, f_static_friction_offset=1.0,
                  sticking_stiffness=kmu, sticking_damping=2 * np.sqrt(kmu),
                  exponential_decay_static=0.01)
    model, b = mass(force=2.5)
    model.connector(None, model.coordinate(b), **params)
    _, out = run(model, 1e-3, 300)
    assert (out[:, 5] == 0).all()                                   # stuck throughout
    assert out[-1, 2] == pytest.approx(2.5 / kmu, rel=1e-6)
    model, b = mass(force=4.0)
    model.connector(None, model.coordinate(b), **params)
    _, out = run(model, 1e-3, 500)
    assert out[-1, 5] == pytest.approx(2.0, rel=1e-3)              # sliding at f_dynamic
    acc = np.diff(out[-100:, 1]) / 1e-3
    np.testing.assert_allclose(acc, 2.0, rtol=1e-3)


def test_a_limit_stop_hit_by_a_moving_mass():
    """v = 1 m/s into a stop at 0.01 m of stiffness 1e4 N/m, no damping: the contact starts
    at t = 0.01 s, lasts half a period pi / 100 s and returns the mass at -1 m/s."""
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b), use_limit_stops=True, limit_stops_upper=0.01,
                    limit_stops_lower=-1.0, limit_stops_stiffness=1e4)
    h = 1e-4
    _, out = run(model, h, 600)
    on = np.flatnonzero(out[:, 6] != 0)
    t_in, t_out = out[on[0], 0], out[on[-1] + 1, 0]
    assert t_in == pytest.approx(0.01, abs=1.5 * h)
    assert t_out - t_in == pytest.approx(np.pi / 100, abs=3 * h)
    assert out[-1, 1] == pytest.approx(-1.0, abs=5e-3)
    assert out[:, 2].max() == pytest.approx(0.01 + 1.0 / 100, rel=5e-3)   # 0.01 + v0 / w


def test_a_gear_between_a_rotation_and_a_translation():
    """A spring on q = f1 x_1 - f0 phi_0 (a block's translation and a wheel's rotation about
    its body axis): q oscillates at w^2 = k (f1^2 / m + f0^2 / I) and the momenta exchanged
    keep f0 I phi' / ... : m x' / f1 + I phi' / f0 = 0 (the gear's impulses)."""
    model = ps.Model(gravity=(0, 0, 0))
    model.surface("s", "s", friction=0.0)
    wheel = model.sphere((0, 0, 0), 0.1, "s", mass=2.0)
    block = model.sphere((0.5, 0, 0), 0.05, "s", mass=1.0, velocity=(0.3, 0, 0))
    I = 0.4 * 2.0 * 0.1 ** 2
    f0, f1, k = 0.1, 2.0, 50.0
    model.connector(model.coordinate(wheel, (0, 0, 1), rotation=True, frame="body"),
                    model.coordinate(block, (1, 0, 0)), stiffness=k, factor0=f0, factor1=f1)
    sim, out = run(model, 1e-3, 800)
    w = np.sqrt(k * (f1 ** 2 / 1.0 + f0 ** 2 / I))
    v0 = f1 * 0.3
    np.testing.assert_allclose(out[:, 2], v0 * np.sin(w * out[:, 0]) / w, atol=2e-3 * v0 / w)
    o = sim.owned
    vb, ww = o.v[1, 0], o.w[0, 2]
    assert 1.0 * (vb - 0.3) / f1 + I * ww / f0 == pytest.approx(0.0, abs=1e-12)


def test_a_user_force_acts_as_the_spring_damper_it_computes():
    def uf(t, index, q, v, k, d, offset, v_offset, fd, fso, vexp, fv, vreg):
        return k * (q - offset) + d * (v - v_offset)

    outs = []
    for user in (None, uf):
        model, b = mass(v0=1.0)
        model.connector(None, model.coordinate(b), stiffness=400.0, damping=2.0, offset=0.01,
                        spring_force_user_function=user)
        outs.append(run(model, 1e-3, 300)[1])
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-7)


def test_an_inactive_connector_exerts_nothing_and_keeps_counting():
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b), stiffness=400.0, active_connector=False)
    _, out = run(model, 1e-3, 100)
    assert (out[:, 1] == 1.0).all() and out[-1, 2] == pytest.approx(0.1, rel=1e-12)


def test_outputs_in_the_results_file_and_a_restart_continues_bit_for_bit(tmp_path):
    from parsolve.io.describe import describe
    import h5py

    def make():
        model, b = mass(v0=1.0, force=1.0)
        model.connector(None, model.coordinate(b), stiffness=100.0, f_dynamic_friction=1.5,
                        sticking_stiffness=1e5, sticking_damping=300.0,
                        use_limit_stops=True, limit_stops_upper=0.08, limit_stops_lower=-0.1,
                        limit_stops_stiffness=1e4, limit_stops_damping=10.0, name="axis")
        return model

    full = Simulation(make(), step=1e-3, progress=0, quiet=True, verify_every=0,
                      output=str(tmp_path / "full.h5"))
    full.run(0.4)
    with h5py.File(tmp_path / "full.h5", "r") as f:
        c = f["connectors"]
        assert c["displacement"].shape == (400, 1) and c["force"].shape == (400, 1)
        assert list(np.asarray(c["friction_mode"][:, 0] != 0).astype(int)).count(1) > 0
        assert np.isclose(c["displacement"][-1, 0], full.owned.x[0, 0], atol=1e-15)
    assert "connectors: (1,) over 400 steps" in describe(str(tmp_path / "full.h5"))
    first = Simulation(make(), step=1e-3, progress=0, quiet=True, verify_every=0,
                       checkpoint_dir=str(tmp_path / "ck"), checkpoint_every=150)
    first.run(0.15)
    ckpt = sorted((tmp_path / "ck").glob("*.h5"))[-1]
    second = Simulation(make(), step=1e-3, progress=0, quiet=True, verify_every=0,
                        restart=str(ckpt))
    second.run(0.4)
    np.testing.assert_array_equal(second.owned.x, full.owned.x)
    np.testing.assert_array_equal(second.owned.v, full.owned.v)
    np.testing.assert_array_equal(second.contacts.state, full.contacts.state)


@pytest.mark.parametrize("args, culprit", [
    (dict(f_dynamic_friction=-1.0), "f_dynamic_friction must be >= 0"),
    (dict(limit_stops_stiffness=-1.0), "limit_stops_stiffness must be >= 0"),
    (dict(sticking_stiffness=-1.0), "sticking_stiffness must be >= 0"),
    (dict(exponential_decay_static=0.0), "exponential_decay_static must be > 0"),
    (dict(use_limit_stops=True, limit_stops_lower=1.0, limit_stops_upper=0.0),
     "limit_stops_lower 1 > limit_stops_upper 0"),
    (dict(f_dynamic_friction=1.0), "the bristle model"),
    (dict(stiffnes=1.0), "unknown parameter 'stiffnes'"),
    (dict(friction="lugre"), "friction must be one of"),
    (dict(stiffness=float("nan")), "stiffness: not a finite number"),
])
def test_bad_connectors_are_named(args, culprit):
    model, b = mass()
    with pytest.raises(InputError, match="connector 'c'") as e:
        model.connector(None, model.coordinate(b), name="c", **args)
    assert culprit in str(e.value)


def test_bad_coordinates_and_user_functions_are_named():
    model, b = mass()
    with pytest.raises(InputError, match="both coordinates are the ground"):
        model.connector(None, None)
    with pytest.raises(InputError, match="both coordinates are of body 0"):
        model.connector(model.coordinate(b), model.coordinate(b, rotation=True))
    with pytest.raises(InputError, match="frame must be"):
        model.coordinate(b, frame="local")
    with pytest.raises(InputError, match="m1 must be model.coordinate"):
        model.connector(None, 3)
    model.connector(None, model.coordinate(7), name="far")
    with pytest.raises(InputError, match="connector 'far': a coordinate of unknown body 7"):
        Simulation(model, step=1e-3, progress=0, quiet=True)
    for bad, what in ((lambda *a: 1 / 0, "raised"), (lambda *a: float("inf"), "returned inf")):
        model, b = mass()
        model.connector(None, model.coordinate(b), spring_force_user_function=bad, name="uf")
        sim = Simulation(model, step=1e-3, progress=0, quiet=True)
        with pytest.raises(InputError, match=f"connector 'uf': spring_force_user_function {what}"):
            sim.step()


def test_a_block_guided_on_a_rail_by_joints_oscillates_on_its_connector():
    """A 1-DOF guided body is five fix_direction joints (a prismatic joint along x: y and z
    held at two points, z at a third): under gravity pulling down and sideways the block
    moves along x only, at w^2 = k / m on its connector to the ground."""
    model = ps.Model(gravity=(0.0, -3.0, -9.81))
    model.surface("s", "s", friction=0.0)
    b = model.sphere((0, 0, 0), 0.1, "s", mass=2.0, velocity=(0.5, 0, 0))
    for point, direction in ((( 0.05, 0, 0), (0, 1, 0)), ((-0.05, 0, 0), (0, 1, 0)),
                             (( 0.05, 0, 0), (0, 0, 1)), ((-0.05, 0, 0), (0, 0, 1)),
                             ((0, 0.05, 0), (0, 0, 1))):
        model.fix_direction(b, point, direction)
    k = 200.0
    model.connector(None, model.coordinate(b, (1, 0, 0)), stiffness=k)
    sim, out = run(model, 1e-3, 500)
    w = np.sqrt(k / 2.0)
    np.testing.assert_allclose(out[:, 2], 0.5 * np.sin(w * out[:, 0]) / w, atol=1e-3 * 0.5 / w)
    assert np.abs(sim.owned.x[0, 1:]).max() < 1e-9 and np.abs(sim.owned.w[0]).max() < 1e-9


@pytest.mark.parametrize("e", [1.0, 0.5, 0.0])
def test_rigid_limit_stops_rebound_by_newtons_restitution(e):
    """Beyond Exudyn: limit_stops_model="rigid", two unilateral rows (mu = 0) that close at
    the half step as contacts do: a mass at 1 m/s leaves the stop at -e m/s, having passed
    it by less than one step's travel."""
    model, b = mass(v0=1.0)
    model.connector(None, model.coordinate(b), use_limit_stops=True, limit_stops_upper=0.01,
                    limit_stops_lower=-1.0, limit_stops_model="rigid",
                    limit_stops_restitution=e)
    h = 1e-4
    _, out = run(model, h, 300)
    assert out[-1, 1] == pytest.approx(-e, abs=1e-12)
    assert 0.01 - 1e-12 <= out[:, 2].max() <= 0.01 + h * 1.0
    assert out[np.argmax(out[:, 1] < 0.999), 0] == pytest.approx(0.01, abs=1.5 * h)  # hit
    with pytest.raises(InputError, match="limit_stops_restitution must lie in"):
        model.connector(None, model.coordinate(b), limit_stops_restitution=1.5)
    with pytest.raises(InputError, match="'c': the name is taken"):
        model.connector(None, model.coordinate(b), name="c")
        model.connector(None, model.coordinate(b), name="c")


def test_the_ground_on_either_side_and_the_newton_solver_agree():
    """m1 = the ground makes q = -f0 x: the same restoring spring as m0 = the ground (q = x),
    with q mirrored; the semismooth Newton solves the connector rows as Gauss-Seidel does."""
    from parsolve.solvers import SemismoothNewton

    outs = []
    for side, solver in (("m1", None), ("m0", None), ("m1", SemismoothNewton(tol=1e-12))):
        model, b = mass(v0=1.0)
        x = model.coordinate(b)
        model.connector(*((None, x) if side == "m1" else (x, None)), stiffness=400.0,
                        damping=2.0, f_dynamic_friction=0.5, friction_proportional_zone=1e-2)
        sim = Simulation(model, step=1e-3, progress=0, quiet=True, verify_every=0,
                         **({"solver": solver} if solver else {}))
        q = []
        for _ in range(150):
            sim.step()
            q.append(sim.outputs("connectors")["displacement"][0])
        outs.append((np.array(q), sim.owned.x[0, 0]))
    np.testing.assert_allclose(outs[1][0], -outs[0][0], rtol=0, atol=1e-12)
    assert outs[1][1] == pytest.approx(outs[0][1], abs=1e-12)
    np.testing.assert_allclose(outs[2][0], outs[0][0], rtol=0, atol=1e-9)
