"""The energy balance in the history: E(0) + work of the loads = E(t) + energy dissipated by the
contacts, with the dissipation computed independently from the reactions, R . (U(t) +
U(t+h)) / 2. The midpoint scheme satisfies it exactly for translations, so the balance error
stays at round-off and the solver's tolerance."""
import numpy as np

import parsolve as ps
from tests.scenes import G, on_floor, run, spheres_in_box, tilted


def test_a_sliding_block_dissipates_mu_m_g_cos_theta_times_the_distance():
    theta, mu = np.radians(30.0), 0.3
    m = on_floor(gravity=tilted(theta), mu=mu)
    m.box((0, 0, 0.05), (0.1, 0.1, 0.05), "body", density=1000)
    sim = run(m, 0.0, 1e-3, tol=1e-12)
    x0, mass = sim.owned.x[0].copy(), sim.owned.mass[0]
    sim.run(0.3)
    distance = sim.owned.x[0, 0] - x0[0]
    expected = mu * mass * G * np.cos(theta) * distance
    assert distance > 0.05
    np.testing.assert_allclose(sim.history[-1]["dissipated"], expected, rtol=1e-9)
    assert abs(sim.history[-1]["energy_error"]) < 1e-12 * sim.energy["initial"] + 1e-12


def test_a_frictionless_elastic_bounce_dissipates_nothing():
    m = on_floor(mu=0.0, e=1.0)
    m.sphere((0, 0, 0.5), 0.05, "body", density=1000)
    sim = run(m, 1.0, 1e-3, tol=1e-12)
    assert sum(r["contacts"] for r in sim.history) >= 1             # it did bounce
    e0 = sim.energy["initial"]
    assert abs(sim.history[-1]["dissipated"]) < 1e-12 * e0
    assert max(abs(r["energy_error"]) for r in sim.history) < 1e-12 * e0


def test_a_load_s_work_enters_the_balance():
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("b", "b", friction=0.0)
    b = m.sphere((0, 0, 0), 0.1, "b", density=1000)
    m.load(b, force=(2.0, 0, 0), torque=(0, 0, 0.5))
    sim = run(m, 0.5, 1e-3)
    o = sim.owned
    inertia, t = 0.4 * o.mass[0] * 0.1 ** 2, 0.5
    # force . displacement + torque . angle, the angle of a constant torque being t^2 T / 2J
    np.testing.assert_allclose(sim.history[-1]["work_loads"], 2.0 * o.x[0, 0]
                               + 0.5 * 0.5 ** 2 * t ** 2 / inertia, rtol=1e-9)
    assert abs(sim.history[-1]["energy_error"]) < 1e-12 * sim.history[-1]["work_loads"]


def test_a_granular_gas_in_a_box_keeps_its_balance_to_the_solver_tolerance():
    """Frictional, inelastic spheres thrown in a box: D grows, the balance holds."""
    m = spheres_in_box(120, 4, (0.0, 0.0, -G), 0.4, 0.3, 0.3, 0.5, (0.4, 0.1, 0.3),
                       (0.02, 0.025), 0.01, 1.0)
    sim = run(m, 0.2, 1e-3, tol=1e-10, max_iter=5000)
    e0 = sim.energy["initial"]
    d = [r["dissipated"] for r in sim.history]
    assert d[-1] > 0.2 * e0 and all(b >= a - 1e-12 * e0 for a, b in zip(d, d[1:]))
    assert max(abs(r["energy_error"]) for r in sim.history) < 1e-6 * e0
