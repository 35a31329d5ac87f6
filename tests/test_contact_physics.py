"""Analytic contact cases: restitution, incline stick/slip/roll, a resting column, settling."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.io import read_history
from scenes import G, lattice, on_floor, run, tilted


def apexes(z):
    """Heights of the local maxima of a sampled trajectory z(t)."""
    k = np.nonzero((z[1:-1] > z[:-2]) & (z[1:-1] >= z[2:]))[0] + 1
    return z[k]


@pytest.mark.parametrize("e, h", [(0.8, 1e-3), (0.9, 1e-3), (0.5, 1e-4)])
def test_bouncing_ball_apex_ratio_is_e_squared(e, h):
    """Newton's impact law U_N+ = -e U_N- (Moreau's scheme, contacts active when the mid-step
    gap closes, as Siconos' index sets): apex ratios e^2 within 1 %. The scheme's error is
    O(h) in the contact position (at most |U_N| h/2 of penetration), so low bounces (e = 0.5)
    need h = 1e-4 for 1 %; at h = 1e-3 their third ratio is off by about 4 %."""
    m = on_floor(mu=0.0, e=e)
    r = 0.05
    m.sphere((0, 0, 1.0 + r), r, "body", density=1000)
    from parsolve.run import Simulation

    sim = Simulation(m, step=h, progress=0, quiet=True)
    z = [sim.bodies.x[0, 2] - r]
    for _ in range(int(2.5 / h)):
        sim.step()
        z.append(sim.bodies.x[0, 2] - r)
    peaks = apexes(np.array(z))
    assert len(peaks) >= 3
    heights = np.concatenate([[1.0], peaks[:3]])
    ratios = heights[1:] / heights[:-1]
    np.testing.assert_allclose(ratios, e * e, rtol=0.01)


@pytest.mark.parametrize("mu", [0.3, 0.6])
def test_box_sticks_below_the_friction_angle(mu):
    theta = np.arctan(mu) * 0.9
    m = on_floor(gravity=tilted(theta), mu=mu)
    m.box((0, 0, 0.05), (0.1, 0.1, 0.05), "body", density=1000)
    sim = run(m, 1.0, 1e-3)
    assert np.linalg.norm(sim.bodies.x[0] - [0, 0, 0.05]) < 1e-9


@pytest.mark.parametrize("mu", [0.2, 0.5])
def test_box_slides_above_the_friction_angle(mu):
    theta = np.arctan(mu) * 1.3
    m = on_floor(gravity=tilted(theta), mu=mu)
    m.box((0, 0, 0.05), (0.1, 0.1, 0.05), "body", density=1000)
    sim = run(m, 1.0, 1e-3)
    a = 2 * sim.bodies.x[0, 0] / sim.time ** 2
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert abs(a - expected) / expected < 0.005
    assert abs(sim.bodies.x[0, 2] - 0.05) < 1e-6          # no sinking, no tipping


@pytest.mark.parametrize("k", [None, 2 / 3])
def test_sphere_rolls_without_slipping_when_friction_suffices(k):
    """A free sphere on an incline does not stick: it rolls with a = g sin(theta) / (1 + k),
    J = k m r^2 (5/7 g sin(theta) for a solid ball, k = 2/5; 3/5 for a given shell's 2/3) as
    long as mu >= k / (1 + k) tan(theta), its contact point at rest (v = w x r)."""
    theta, mu, r, mass = 0.3, 0.5, 0.05, 0.5
    m = on_floor(gravity=tilted(theta), mu=mu)
    m.sphere((0, 0, r), r, "body", mass=mass,
             inertia=None if k is None else k * mass * r * r)
    sim = run(m, 1.0, 1e-3)
    a = 2 * sim.bodies.x[0, 0] / sim.time ** 2
    expected = G * np.sin(theta) / (1 + (0.4 if k is None else k))
    assert abs(a - expected) / expected < 0.005
    slip = sim.bodies.v[0] + np.cross(sim.bodies.w[0], [0, 0, -r])
    assert np.linalg.norm(slip) < 1e-8


def test_sphere_slides_when_friction_cannot_roll_it():
    """mu < 2/7 tan(theta): the sphere slides with a = g (sin - mu cos) and spins up."""
    theta, mu, r = 0.6, 0.1, 0.05
    m = on_floor(gravity=tilted(theta), mu=mu)
    m.sphere((0, 0, r), r, "body", density=1000)
    sim = run(m, 1.0, 1e-3)
    a = 2 * sim.bodies.x[0, 0] / sim.time ** 2
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert abs(a - expected) / expected < 0.005
    # angular acceleration from the friction torque: J dw/dt = mu m g cos r
    wy = sim.bodies.w[0, 1]
    assert abs(wy - mu * G * np.cos(theta) * r / (0.4 * r * r) * sim.time) < 1e-3 * abs(wy)


def test_column_of_spheres_stays_at_rest():
    r, n = 0.05, 10
    m = on_floor(mu=0.5)
    x0 = np.stack([np.zeros(n), np.zeros(n), r + 2 * r * np.arange(n)], axis=1)
    m.spheres(x0, r, "body", density=1000)
    sim = run(m, 1.0, 1e-3)
    assert sim.step_count == 1000
    drift = np.abs(sim.bodies.x - x0).max()
    assert drift < 1e-6
    assert all(row["converged"] for row in sim.history)
    # the bottom contact carries the weight of the whole column: R_N = n m g h
    mass = sim.bodies.mass[0]
    floor = sim.contacts.k2 < 2 ** 20 * 64
    np.testing.assert_allclose(sim.contacts.R[floor, 0], n * mass * G * 1e-3, rtol=1e-6)


def _gas(n, gravity, tmp_path, mu=0.3):
    r = 0.01
    m = ps.Model(gravity=gravity)
    m.surface("grain", "grain", friction=mu, restitution=0.0)
    m.surface("grain", "wall", friction=mu, restitution=0.0)
    m.box_walls((0, 0, 0), (0.2, 0.2, 0.2), "wall", top=True)
    rng = np.random.default_rng(1)
    x = lattice(n, r, 0.2 / 7, (0.004, 0.004, 0.004), 7)
    m.spheres(x, r, "grain", density=2500, velocities=rng.normal(0, 0.5, (n, 3)),
              angular_velocities=rng.normal(0, 5.0, (n, 3)))
    return m


def test_inelastic_gas_cools_and_its_energy_never_rises(tmp_path):
    """No gravity, e = 0, mu > 0: every collision dissipates; the kinetic energy never rises
    beyond round-off and the solver tolerance (proof: dE = R.U+ - 1/2 R.W R <= 0)."""
    m = _gas(300, (0, 0, 0), tmp_path)
    out = tmp_path / "gas.h5"
    sim = run(m, 0.5, 1e-3, tol=1e-10, output=str(out))
    h = read_history(str(out))
    E = np.concatenate([[sim.history[0]["kinetic_energy"]], h["kinetic_energy"]])
    rises = np.diff(E)
    assert rises.max() <= 1e-9 * E[0]
    assert E[-1] < 0.5 * E[0]
    assert h["contacts"].max() > 0


def test_settling_under_gravity_comes_to_rest(tmp_path):
    m = _gas(200, (0, 0, -G), tmp_path)
    sim = run(m, 1.0, 2e-3, tol=1e-8, max_iter=500)
    ke = [row["kinetic_energy"] for row in sim.history]
    pe = sim.history[0]["potential_energy"]
    assert ke[-1] < 1e-6 * (max(ke) + abs(pe))
    assert (sim.bodies.x[:, 2] > 0.005).all()           # nobody fell through the floor


def test_stack_of_boxes_stays_at_rest_on_four_corners():
    """Three boxes stacked face to face on the floor: each interface has four corner contacts,
    the stack stays put, and the floor carries the whole weight."""
    m = on_floor(mu=0.6)
    h = 0.05
    for k in range(3):
        m.box((0, 0, h + 2 * h * k), (0.1, 0.08, h), "body", density=1000)
    sim = run(m, 0.5, 1e-3)
    assert np.abs(sim.bodies.x[:, 2] - (h + 2 * h * np.arange(3))).max() < 1e-6
    assert np.abs(sim.bodies.x[:, :2]).max() < 1e-9
    c = sim.contacts
    assert len(c) == 12
    floor = c.b < 0
    weight = sim.bodies.mass.sum() * G * 1e-3
    np.testing.assert_allclose(c.R[floor, 0].sum(), weight, rtol=1e-6)


def test_box_slides_on_a_box_above_the_friction_angle():
    mu = 0.3
    theta = np.arctan(mu) * 1.3
    m = on_floor(gravity=tilted(theta), mu=0.9)          # the base sticks to the floor
    m.surface("top", "body", friction=mu)
    m.surface("top", "floor", friction=mu)
    base = m.box((0, 0, 0.05), (1.0, 0.5, 0.05), "body", mass=1e6)  # heavy base, sticks
    m.box((0, 0, 0.15), (0.1, 0.1, 0.05), "top", density=1000)
    sim = run(m, 0.5, 1e-3)
    a = 2 * sim.bodies.x[1, 0] / sim.time ** 2
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert abs(a - expected) / expected < 0.005
    assert abs(sim.bodies.x[base, 0]) < 1e-9


def test_tilted_box_dropped_on_a_box_comes_to_rest_on_it():
    from parsolve.dynamics.rotation import axis_angle

    m = on_floor(mu=0.5)
    m.box((0, 0, 0.05), (0.3, 0.3, 0.05), "body", density=1000)
    m.box((0.02, -0.01, 0.25), (0.05, 0.04, 0.03), "body", density=1000,
          orientation=axis_angle((1, 0.5, 0.2), 0.7))
    sim = run(m, 1.5, 1e-3, tol=1e-8)
    b = sim.bodies
    assert b.kinetic_energy().sum() < 1e-8
    # it lies on a face: its lowest vertex rests on the top of the lower box
    from parsolve.contact.detect import _box_vertices
    from parsolve.dynamics.rotation import quat_to_matrix

    v = _box_vertices(b, np.array([1]), quat_to_matrix(b.q[1:2]))[0]
    assert abs(v[:, 2].min() - 0.1) < 1e-3
    assert np.sort(v[:, 2])[3] - v[:, 2].min() < 1e-3      # four vertices at the bottom


def test_the_compiled_frames_equal_their_twin_bit_for_bit():
    """kernels/contact.pyx's frames_from_normals against contact/twins.py, ties included."""
    import pytest
    from parsolve._kernels import compiled
    from parsolve.contact import twins

    modules = compiled("contact")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(0)
    n = rng.normal(size=(5000, 3))
    n /= np.linalg.norm(n, axis=1)[:, None]
    n[:60] = np.eye(3)[rng.integers(0, 3, 60)] * rng.choice([-1, 1], (60, 1))
    n[60:90] = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    np.testing.assert_array_equal(modules[0].frames_from_normals(n), twins.frames_from_normals(n))
