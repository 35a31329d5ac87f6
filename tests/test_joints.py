"""Joints (parsolve/model/joints.py, parsolve/joints.py) against analytic mechanics: pendulums
by a rigid link and by a fixed point, a damped spring, prescribed motions, a hanging chain's
tensions; and bad input named."""
import math

import numpy as np
import pytest

import parsolve as ps
from parsolve.dynamics.rotation import quat_to_matrix
from parsolve.errors import ParsolveError
from parsolve.run import Simulation

G = 9.81


def elliptic_k(m):
    """K(m) = int_0^pi/2 (1 - m sin^2)^-1/2 by the arithmetic-geometric mean."""
    a, b = 1.0, math.sqrt(1.0 - m)
    while abs(a - b) > 1e-15 * a:
        a, b = 0.5 * (a + b), math.sqrt(a * b)
    return math.pi / (2.0 * a)


def pendulum_period(L, theta0):
    return 4.0 * math.sqrt(L / G) * elliptic_k(math.sin(theta0 / 2) ** 2)


def simulate(model, h, steps, every=1, tol=1e-12):
    sim = Simulation(model, step=h, solver=ps.GaussSeidel(tol=tol, max_iter=500), progress=0,
                     quiet=True, verify_every=0)
    out = []
    for k in range(steps):
        sim.step()
        if (k + 1) % every == 0:
            o = sim.owned
            out.append((sim.time, o.x.copy(), o.v.copy(), o.q.copy()))
    return sim, out


def crossings(t, x):
    """Times where x changes sign (linear interpolation)."""
    k = np.flatnonzero(np.sign(x[1:]) != np.sign(x[:-1]))
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


def model(gravity=(0.0, 0.0, -G)):
    m = ps.Model(gravity=gravity)
    m.surface("a", "a", friction=0.0)
    return m


@pytest.mark.parametrize("degrees", [10, 90])
def test_a_pendulum_by_a_rigid_link_has_the_elliptic_period(degrees):
    L, th = 1.0, math.radians(degrees)
    m = model()
    x0 = (L * math.sin(th), 0.0, -L * math.cos(th))
    m.sphere(x0, 0.05, "a", density=1000, id=0)
    m.rigid_link(0, x0, None, (0.0, 0.0, 0.0))
    exact = pendulum_period(L, th)
    h = 1e-3
    sim, out = simulate(m, h, int(0.8 * exact / h))
    t = np.array([o[0] for o in out])
    x = np.array([o[1][0] for o in out])
    tc = crossings(t, x[:, 0])
    assert len(tc) == 2
    assert 2 * (tc[1] - tc[0]) == pytest.approx(exact, rel=5e-3)
    assert np.abs(np.linalg.norm(x, axis=1) - L).max() < 1e-4 * L      # the link holds


def test_a_box_pinned_at_its_end_swings_as_a_physical_pendulum():
    """fix_point at the end of a rod: L_eq = I_pivot / (m d) = (a^2 + c^2) / (3 c) + c."""
    a, c, th = 0.02, 0.3, math.radians(30)
    m = model()
    centre = (c * math.sin(th), 0.0, -c * math.cos(th))
    m.box(centre, (a, a, c), "a", density=500, orientation=((0, 1, 0), -th))
    m.fix_point(0, (0.0, 0.0, 0.0))
    exact = pendulum_period((a * a + c * c) / (3 * c) + c, th)
    h = 1e-3
    sim, out = simulate(m, h, int(0.8 * exact / h))
    t = np.array([o[0] for o in out])
    x = np.array([o[1][0] for o in out])
    tc = crossings(t, x[:, 0])
    assert 2 * (tc[1] - tc[0]) == pytest.approx(exact, rel=5e-3)
    assert np.abs(np.linalg.norm(x, axis=1) - c).max() < 1e-4 * c       # the pivot holds


def test_a_bob_fixed_at_a_far_point_swings_as_a_physical_pendulum():
    """Solfec's FIX_POINT takes any point: a sphere (r = 0.3 m) on a massless rod, fixed at
    the pivot 1 m from its centre, swings with the period of the physical pendulum, L_eq =
    L + 2 r^2 / (5 L) (the simple pendulum's is 1.8 % shorter), its rotation welded to the
    rod's; the cells grow to hold the joint's reach (3 L)."""
    L, r, th = 1.0, 0.3, math.radians(30)
    m = model()
    m.sphere((L * math.sin(th), 0.0, -L * math.cos(th)), r, "a", density=1000, id=0)
    m.fix_point(0, (0.0, 0.0, 0.0))
    exact = pendulum_period(L + 0.4 * r * r / L, th)
    h = 1e-3
    sim, out = simulate(m, h, int(0.8 * exact / h))
    t = np.array([o[0] for o in out])
    x = np.array([o[1][0] for o in out])
    v = np.array([o[2][0] for o in out])
    tc = crossings(t, x[:, 0])
    assert 2 * (tc[1] - tc[0]) == pytest.approx(exact, rel=1e-5)
    assert np.abs(np.linalg.norm(x, axis=1) - L).max() < 2e-6 * L     # the pivot holds
    rod = np.cross(x[-1], v[-1]) / L ** 2                  # the rod's angular velocity
    np.testing.assert_allclose(sim.owned.w[0], rod, atol=1e-5 * np.linalg.norm(rod))
    assert sim.cell >= 3 * L


def test_a_spring_damper_oscillates_at_the_damped_frequency_and_decays():
    """m x'' = -k x - c x' along the spring: omega_d = sqrt(k/m - (c/2m)^2), decay c/(2m)."""
    k, c, r = 200.0, 0.8, 0.05
    mass = 1000 * 4 / 3 * math.pi * r ** 3
    m = model(gravity=(0.0, 0.0, 0.0))
    m.sphere((0.3, 0, 0), r, "a", density=1000, velocity=(0.5, 0, 0), id=0)
    m.spring(0, (0.3, 0, 0), None, (0.0, 0, 0), lambda d, v: -k * d - c * v)
    h = 2e-4
    wd = math.sqrt(k / mass - (c / (2 * mass)) ** 2)
    sim, out = simulate(m, h, int(3 * 2 * math.pi / wd / h))
    t = np.array([o[0] for o in out])
    d = np.array([o[1][0, 0] for o in out]) - 0.3
    tc = crossings(t, d)
    period = 2 * np.mean(np.diff(tc))
    assert period == pytest.approx(2 * math.pi / wd, rel=5e-3)
    peaks = [np.abs(d[(t > a) & (t < b)]).max() for a, b in zip(tc[:-1], tc[1:])]
    decay = -np.polyfit(0.5 * (tc[:-1] + tc[1:]), np.log(peaks), 1)[0]
    assert decay == pytest.approx(c / (2 * mass), rel=2e-2)


@pytest.mark.parametrize("signal", ["velocity", "displacement", "acceleration"])
def test_a_prescribed_point_follows_its_signal(signal):
    """The velocity ramps 0 -> 0.02 m/s over [0, 0.1] s, then holds: given as the velocity
    spline, as its integral sampled on the steps (a displacement spline: the point ends each
    step on it) or as its derivative (an acceleration spline, integrated). The midpoint scheme
    integrates these exactly: positions and velocities to round-off, while the body falls
    freely across the direction."""
    h = 0.01
    steps = np.arange(0, 31) * h
    want_v = np.interp(steps, [0.0, 0.1, 1.0], [0.0, 0.02, 0.02])
    want_x = np.where(steps <= 0.1, 0.1 * steps ** 2, 0.001 + 0.02 * (steps - 0.1))
    spec = {"velocity": ([0.0, 0.1, 1.0], [0.0, 0.02, 0.02]),
            "displacement": (steps, want_x),
            "acceleration": ([0.0, 0.1, 0.1 + 1e-12, 1.0], [0.2, 0.2, 0.0, 0.0])}[signal]
    m = model(gravity=(0.0, 0.0, -G))
    m.sphere((0, 0, 1), 0.05, "a", density=1000, id=0)
    m.prescribe(0, (0, 0, 1), (1, 0, 0), **{signal: spec})
    sim, out = simulate(m, h, 30)
    vx = np.array([o[2][0, 0] for o in out])
    xx = np.array([o[1][0, 0] for o in out])
    if signal == "displacement":             # the velocity that ends each step on the spline
        want_v = 2 * np.diff(want_x) / h - np.concatenate([[0.0], vx[:-1]])
    else:
        want_v = want_v[1:]
    tol = 1e-9 if signal == "acceleration" else 1e-12
    np.testing.assert_allclose(vx, want_v, rtol=0, atol=tol)
    np.testing.assert_allclose(xx, want_x[1:], rtol=0, atol=tol)
    z = np.array([o[1][0, 2] for o in out])
    assert z[-1] == pytest.approx(1 - 0.5 * G * 0.3 ** 2, rel=1e-3)   # free across it


def spinning_corner(h, steps, push):
    """A box spinning at 10 rad/s about z, its corner's x prescribed as the corner's free
    circular motion plus push * t. Returns the largest miss of the signal at a step's end, and
    the largest change of the angular velocity in a step."""
    om, half = 10.0, np.array([0.2, 0.1, 0.05])
    m = model(gravity=(0.0, 0.0, 0.0))
    m.box((0, 0, 0), half, "a", density=1000, angular_velocity=(0, 0, om), id=0)
    arm, phase = math.hypot(half[0], half[1]), math.atan2(half[1], half[0])

    def signal(t):
        return arm * (math.cos(om * t + phase) - math.cos(phase)) + push * t

    m.prescribe(0, half, (1, 0, 0), displacement=signal)
    sim = Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-14, max_iter=500), progress=0,
                     quiet=True, verify_every=0)
    miss, turn = 0.0, 0.0
    for _ in range(steps):
        w0 = sim.owned.w[0].copy()
        sim.step()
        o = sim.owned
        corner = o.x[0] + quat_to_matrix(o.q[:1])[0] @ half
        miss = max(miss, abs(corner[0] - half[0] - signal(sim.time)))
        turn = max(turn, float(np.linalg.norm(o.w[0] - w0)))
    return miss, turn, float(np.linalg.norm(half))


@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_a_prescribed_displacement_holds_on_a_turning_body(h):
    """The second half step turns a point on an arc (the exponential map), not along its
    velocity: the target velocity takes the arc at the step's start's angular velocity, so a
    corner of a spinning box ends each of 500 steps on its signal to round-off (before: 2.8e-6
    m at 1 ms, 7e-7 at 0.5 ms). Where the joint's own impulse turns the body (a signal off the
    free motion), the miss is bounded by h^2/4 |w| |dw| |r| per step and does not pile up."""
    miss, turn, r = spinning_corner(h, 500, 0.0)
    assert miss < 2e-15
    miss, turn, r = spinning_corner(h, 500, 0.01)
    assert turn > 0.1                                   # the joint turns the body
    assert 1e-12 < miss < h * h / 4 * 10.0 * turn * r


def test_a_hanging_chain_carries_the_weight_below_each_link():
    n, L, r = 10, 0.12, 0.05
    m = model()
    pivot = np.zeros(3)
    for i in range(n):
        m.sphere((0, 0, -L * (i + 1)), r, "a", density=1000, id=i)
    m.rigid_link(0, (0, 0, -L), None, pivot)
    for i in range(1, n):
        m.rigid_link(i, (0, 0, -L * (i + 1)), i - 1, (0, 0, -L * i))
    h = 1e-3
    sim, _ = simulate(m, h, 5)
    c = sim.contacts
    joints = c.k2 < 0
    assert joints.sum() == n and (~joints).sum() == 0
    order = np.argsort(-1 - c.k2[joints])                 # joint index
    tension = -c.R[joints][order, 0] / h                  # R_N on the lower body: upwards
    weight = sim.owned.mass[0] * G
    np.testing.assert_allclose(tension, weight * (n - np.arange(n)), rtol=1e-6)


@pytest.mark.parametrize("command, match", [
    (lambda m: m.fix_point(7, (0, 0, 0)), "unknown body 7"),
    (lambda m: m.fix_direction(0, (0, 0, 0), (0, 0, 0)), "zero vector"),
    (lambda m: m.prescribe(0, (0, 0, 0), (1, 0, 0), velocity=([0, 1, 1], [0, 1, 2])),
     "times must increase"),
    (lambda m: m.prescribe(0, (0, 0, 0), (1, 0, 0)), "exactly one of"),
    (lambda m: m.rigid_link(0, (0, 0, 0), None, (0, 0, 0)), "points coincide"),
    (lambda m: m.spring(0, (0, 0, 0), None, (1, 0, 0), lambda d, v: float("nan")),
     "returned nan"),
    (lambda m: m.spring(0, (0, 0, 0), None, (1, 0, 0), lambda d, v: 1 / 0),
     "force raised"),
    (lambda m: m.prescribe(0, (0, 0, 0), (1, 0, 0), velocity=lambda t: [1, 2]),
     "callable raised"),
    (lambda m: m.guide(0, (0, 0, 0), 0.05, free=("w",)), "unknown free motion 'w'"),
    (lambda m: m.guide(0, (0, 0, 0), 0.05, free=("x", "y")), "rotation about z cannot"),
    (lambda m: m.guide(0, (0, 0, 0), 0.05, free=("x",), velocity={"x": 1.0}),
     "a driven axis is one of the locked"),
    (lambda m: m.guide(0, (0, 0, 0), 0.0), "span"),
])
def test_bad_joints_are_named(command, match):
    m = model()
    m.sphere((0, 0, 0), 0.1, "a", density=1000, id=0)
    with pytest.raises(ParsolveError, match=match):
        command(m)
        simulate(m, 1e-3, 2)


def test_guided_bodies_keep_only_their_free_motions():
    """guide(): a block on a rail along x under a skew gravity accelerates at g_x and nothing
    else moves; a wheel hinged about z (free=("rz",)) under a torque turns at tau / I_zz
    about its axis; a block driven along x and free along z falls freely while its x
    follows the signal. The guides' reactions carry the rest: on the rail, the weight's
    y and z components."""
    g = np.array([3.0, -2.0, -G])
    m = ps.Model(gravity=g)
    m.surface("a", "a", friction=0.0)
    half = np.array([0.2, 0.1, 0.05])
    rail = m.box((0, 0, 0), half, "a", density=1000, id=0)
    wheel = m.box((2, 0, 0), (0.1, 0.1, 0.1), "a", density=1000, id=1)
    piston = m.box((4, 0, 0), (0.1, 0.1, 0.1), "a", density=1000, id=2)
    m.guide(rail, (0, 0, 0), 0.05, free=("x",), name="rail")
    m.guide(wheel, (2, 0, 0), 0.05, free=("rz",), name="hinge")
    m.load(wheel, torque=(0.0, 0.0, 0.3))
    m.guide(piston, (4, 0, 0), 0.05, free=("z",), velocity={"x": lambda t: 2.0 * t},
            name="piston")
    sim, out = simulate(m, 1e-3, 100)
    t, x, v = out[-1][0], out[-1][1], out[-1][2]
    o = sim.owned
    np.testing.assert_allclose(v[0], [g[0] * t, 0, 0], atol=1e-9)
    np.testing.assert_allclose(o.w[0], 0.0, atol=1e-9)
    I_zz = o.mass[1] * (0.2 ** 2 + 0.2 ** 2) / 12.0
    np.testing.assert_allclose(o.w[1], [0, 0, 0.3 / I_zz * t], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(x[1], [2, 0, 0], atol=1e-9)
    np.testing.assert_allclose(x[2], [4 + t ** 2, g[1] * 0, 0.5 * g[2] * t ** 2],
                               rtol=1e-9, atol=1e-9)
    names = [j["name"] for j in m.elements["joints"] if j["name"].startswith("rail.")]
    assert names == [f"rail.{i}" for i in range(5)]        # y, z, and 3 for the rotations
    c = sim.contacts
    mine = np.isin(c.k2, [-1 - k for k, j in enumerate(m.elements["joints"])
                          if j["name"].startswith("rail.")])
    force = np.einsum("kji,kj->i", c.frame[mine], c.R[mine]) / 1e-3
    np.testing.assert_allclose(force, -o.mass[0] * g * [0, 1, 1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("solver", ["newton", "hybrid"])
def test_newton_and_hybrid_solve_joints_as_gauss_seidel_does(solver):
    """Every joint is a law of the global Newton too (Solfec's Newton lacked the rigid link):
    a chain with a spring and a prescribed end, stepped by each solver, agrees."""
    def chain():
        m = model()
        for i in range(5):
            m.sphere((0.12 * i, 0, 0), 0.05, "a", density=1000, id=i)
        m.fix_point(0, (0, 0, 0))
        for i in range(1, 4):
            m.rigid_link(i, (0.12 * i, 0, 0), i - 1, (0.12 * (i - 1), 0, 0))
        m.spring(4, (0.48, 0, 0), 3, (0.36, 0, 0), lambda d, v: -5e3 * d - 2.0 * v)
        m.prescribe(4, (0.48, 0, 0), (1, 0, 0), velocity=([0, 1], [0.1, 0.1]))
        return m

    runs = {}
    for name in ("gs", solver):
        s = ps.make_solver(name, tol=1e-12, max_iter=2000)
        sim = Simulation(chain(), step=1e-3, solver=s, progress=0, quiet=True, verify_every=0)
        for _ in range(40):
            row = sim.step()
            assert row["converged"]
        runs[name] = sim.owned.x.copy()
    np.testing.assert_allclose(runs[solver], runs["gs"], rtol=0, atol=1e-9)
    assert runs["gs"][4, 0] == pytest.approx(0.48 + 0.1 * (0.04 - 0.0005), abs=1e-12)  # at rest at 0


CHAIN = """
import parsolve as ps
m = ps.Model()
m.surface("a", "a", friction=0.4)
L = 0.125
for i in range(12):
    m.sphere((L * i, 0, 0), 0.05, "a", density=1000, id=i)
m.rigid_link(0, (0, 0, 0), None, (-L, 0, 0))
for i in range(1, 12):
    if i == 6:
        m.spring(i, (L * i, 0, 0), i - 1, (L * (i - 1), 0, 0), lambda d, v: -3e4 * d - 4 * v)
    else:
        m.rigid_link(i, (L * i, 0, 0), i - 1, (L * (i - 1), 0, 0))
m.prescribe(11, (11 * L, 0, 0), (0, 0, 1), velocity=([0, 0.04], [0, 0.4]))
m.spheres([(0.3, 0.0, 0.3), (0.9, 0.01, 0.25)], 0.04, "a", density=500)
m.run(0.06, 1e-3, output="res.h5", frames=0.03, progress=0,
      solver=ps.GaussSeidel(tol=1e-10, max_iter=500))
"""


def test_joints_restart_on_another_rank_count_bit_for_bit(tmp_path):
    """Joint rows are interactions: their reactions are checkpointed with the contacts' and
    their signals read the clock, so a restart at 2 ranks continues the serial run exactly;
    the results' frames carry each joint's reaction (status bilateral or spring)."""
    from test_restart import assert_restart_continues

    whole = assert_restart_continues(tmp_path, CHAIN)
    from parsolve.io.hdf5 import h5py_module
    from parsolve.laws.codes import STATUS

    with h5py_module().File(whole, "r") as f:
        g = f["frames/000002/contacts"]
        k2, status = g["k2"][()], g["status"][()]
    joints = k2 < 0
    assert joints.sum() == 13
    assert set(status[joints]) == {STATUS.index("bilateral"), STATUS.index("spring")}


def test_a_sphere_on_a_kinematic_belt_slides_then_rolls_at_two_sevenths():
    """A belt (a box driven at V along x) under a resting sphere: friction accelerates the
    centre at mu g while it slips; it rolls without slipping from v = 2/7 V on. The belt
    follows its velocity signal exactly, whatever the contact does to it."""
    mu, V, r = 0.3, 1.0, 0.05
    m = ps.Model()
    m.surface("a", "a", friction=mu)
    m.box((0, 0, -0.05), (2.0, 0.5, 0.05), "a", density=1000, id=0)
    m.sphere((0, 0, r), r, "a", density=1000, id=1)
    m.kinematic(0, velocity=([0.0, 0.01, 10.0], [[0, 0, 0], [V, 0, 0], [V, 0, 0]]))
    h = 1e-3
    sim, out = simulate(m, h, 200, tol=1e-10)
    t = np.array([o[0] for o in out])
    vs = np.array([o[2][1, 0] for o in out])
    vb = np.array([o[2][0] for o in out])
    np.testing.assert_allclose(vb[:, 0], np.interp(t, [0, 0.01, 10], [0, V, V]), atol=1e-14)
    assert np.abs(vb[:, 1:]).max() == 0.0
    t_roll = 2 * V / (7 * mu * G) + 0.005            # the ramp's midpoint, then mu g
    slip = (t > 0.02) & (t < t_roll - 0.01)
    accel = np.polyfit(t[slip], vs[slip], 1)[0]
    assert accel == pytest.approx(mu * G, rel=1e-3)
    np.testing.assert_allclose(vs[t > t_roll + 0.01], 2 * V / 7, rtol=1e-6)
    x = np.array([o[1][0, 0] for o in out])
    want = np.where(t <= 0.01, 50 * t ** 2, 0.005 + V * (t - 0.01))
    np.testing.assert_allclose(x, want, atol=1e-13)
    assert np.array_equal(out[-1][1][0, 1:], [0.0, -0.05])   # gravity does not move it


def test_projection_keeps_a_link_on_its_circle_and_removes_overlaps():
    """Projection on constraints (off by default): a rigid-link pendulum stays within the
    threshold of its circle at h = 5 ms, where the velocity-level step alone drifts 15 times
    more; two spheres made 20 % overlapping are pushed apart in one step (the velocity-level
    step only stops them from going deeper)."""
    def pendulum(projection):
        m = model()
        th, L = math.radians(60), 1.0
        x0 = (L * math.sin(th), 0.0, -L * math.cos(th))
        m.sphere(x0, 0.05, "a", density=1000, id=0)
        m.rigid_link(0, x0, None, (0.0, 0.0, 0.0))
        sim = Simulation(m, step=5e-3, solver=ps.GaussSeidel(tol=1e-12, max_iter=100),
                         progress=0, quiet=True, verify_every=0, projection=projection)
        drift = []
        for _ in range(400):
            sim.step()
            drift.append(abs(np.linalg.norm(sim.owned.x[0]) - L))
        return max(drift)

    threshold = 1e-4 * 0.05
    assert pendulum(True) <= threshold * (1 + 1e-9)
    assert pendulum(None) > 15 * threshold

    def pair(projection):
        m = model(gravity=(0.0, 0.0, 0.0))
        m.spheres([(0, 0, 0), (0.16, 0, 0)], 0.1, "a", density=1000)
        sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(tol=1e-12, max_iter=100),
                         progress=0, quiet=True, verify_every=0, projection=projection,
                         guards="off")
        sim.step()
        x = sim.owned.x
        return 0.2 - np.linalg.norm(x[1] - x[0]), x

    overlap, x = pair(True)
    assert 0 <= overlap <= threshold and np.allclose(x[0] + x[1], (0.16, 0, 0), atol=1e-15)
    assert pair(None)[0] == pytest.approx(0.04, rel=1e-9)


def test_a_step_with_joint_rows_is_not_exported_to_fclib():
    """FCLIB's local format holds frictional contacts only: a joint row is refused by name."""
    from parsolve.errors import InputError
    from parsolve.io import fclib

    m = model()
    m.sphere((0.3, 0, 0), 0.05, "a", density=1000, id=0)
    m.rigid_link(0, (0.3, 0, 0), None, (0, 0, 0))
    sim = Simulation(m, step=1e-3, progress=0, quiet=True, verify_every=0)
    box = {}
    sim.local_dynamics_hook = lambda s, ld: box.update(ld=ld)
    sim.step()
    with pytest.raises(InputError, match="1 bilateral"):
        fclib.from_local_dynamics(box["ld"])


def test_the_compiled_joint_rows_equal_their_twin_bit_for_bit():
    """kernels/joints.pyx against parsolve/elements/twins.py on random rows (to the world and
    between bodies, signed zeros, unrotated and still bodies, few rows and many; the rows'
    frames and shifts of every form, directions along an axis): every output, the signs of
    zeros included."""
    from parsolve._kernels import compiled
    from parsolve.elements import twins

    modules = compiled("joints")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    kernel = modules[0]
    rng = np.random.default_rng(7)
    for trial in range(400):
        nb, nj = (int(rng.integers(1, 30)), int(rng.integers(1, 40))) if trial % 20 \
            else (2000, 3000)
        x = rng.normal(size=(nb, 3)) * 10.0 ** rng.uniform(-3, 3, (nb, 1))
        q = rng.normal(size=(nb, 4))
        q /= np.linalg.norm(q, axis=1)[:, None]
        v, w = rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3))
        pa, pb = rng.normal(size=(nj, 3)), rng.normal(size=(nj, 3))
        for arr in (x, q, v, w, pa, pb):
            arr[rng.random(arr.shape) < 0.15] = -0.0
            arr[rng.random(arr.shape) < 0.1] = 0.0
        if trial % 7 == 0:
            q[:], w[:] = (1.0, 0.0, 0.0, 0.0), 0.0
        use = np.flatnonzero(rng.random(nj) < 0.6)
        a = rng.integers(0, nb, len(use))
        b = np.where(rng.random(len(use)) < 0.5, rng.integers(0, nb, len(use)), -1)
        if trial % 5 == 0:
            b[:] = -1
        # the rows' forms (points, directions, lines, links), directions, rest lengths
        form = rng.integers(0, 4, len(use))
        direction = rng.normal(size=(len(use), 3))
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        direction[rng.random(direction.shape) < 0.1] = 0.0          # an axis, ties
        rest = rng.uniform(0.0, 2.0, len(use))
        h = float(10.0 ** rng.uniform(-5, -1))
        rows = (x, q, v, w, a, b, use, pa, pb, form, direction, rest, h)
        with np.errstate(invalid="ignore", divide="ignore"):    # coincident points: NaN
            got, want = kernel.joint_rows(*rows), twins.joint_rows(*rows)
        assert len(got) == len(want) == 8
        for g, wnt in zip(got, want):
            assert g.shape == wnt.shape
            np.testing.assert_array_equal(g.view(np.int64), wnt.view(np.int64))
