"""Rheonomic constraints (Siconos' notes, the cam-follower): moving obstacles, cams and time
loads. Newton's impact law acts on the velocity relative to the moving obstacle."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run import Simulation

G = 9.81
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def floor_model(displacement, velocity=None, e=0.8, gravity=(0.0, 0.0, -G)):
    m = ps.Model(gravity=gravity)
    m.surface("a", "a", friction=0.0, restitution=e)
    m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
    m.move("floor", displacement, velocity)
    return m


def bounce(m, h, steps, rate):
    """Steps of a one-ball model: per impact (R_N > 0 while approaching), the ball's
    velocity before and after, the floor's velocity at the step's ends and the gap."""
    sim = Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-14, max_iter=50), progress=0,
                     quiet=True, verify_every=0)
    out, z = [], []
    for k in range(steps):
        t, v0 = sim.time, sim.owned.v[0, 2]
        sim.step()
        c, v1 = sim.contacts, sim.owned.v[0, 2]
        z.append((sim.time, sim.owned.x[0, 2]))
        if len(c) and c.R[0, 0] > 0 and v0 - rate(t) < 0:
            out.append((t, v0, v1, rate(t), rate(t + h), float(c.gap[0])))
    return np.array(out), np.array(z)


def test_a_ball_on_a_vibrating_floor_bounces_off_it_with_newtons_law():
    """A floor moving as A sin(w t): at each impact the ball leaves with
    v+ = (1 + e) c' - e v- relative to the floor's velocity at the step's ends (Moreau's
    discretisation of eq. 11.2: v(t+h) - c'(t+h) = -e (v(t) - c'(t))), to 1e-10."""
    A, w, e, h = 0.01, 2 * math.pi * 8, 0.8, 1e-3
    m = floor_model(lambda t: (0, 0, A * math.sin(w * t)),
                    lambda t: (0, 0, A * w * math.cos(w * t)), e)
    m.sphere((0, 0, 0.1), 0.05, "a", density=1000)
    rate = lambda t: A * w * math.cos(w * t)               # noqa: E731
    hits, z = bounce(m, h, 1500, rate)
    assert len(hits) >= 6
    t, v0, v1, c0, c1, gap = hits.T
    law = v1 - c1 + e * (v0 - c0) + np.maximum(gap, 0.0) / h
    assert np.abs(law).max() < 1e-10 * max(1.0, np.abs(v0).max())
    assert (np.abs(c0) > 0.1 * A * w).sum() >= 3           # impacts on a moving floor
    floor = A * np.sin(w * z[:, 0])
    assert (z[:, 1] - 0.05 - floor).min() > -2e-3           # above it, to O(h |v|)


def test_on_a_floor_moving_at_constant_speeds_the_analytic_law_holds_exactly():
    """A triangle-wave floor (a displacement spline: constant velocity between knots on the
    steps): every impact gives (1 + e) c' - e v- to round-off."""
    e, h = 0.5, 1e-3
    knots = np.arange(12) / 10.0
    heights = np.where(np.arange(len(knots)) % 2 == 0, 0.0, 0.02)
    spline = (knots, np.stack([0 * knots, 0 * knots, heights], axis=1))
    m = floor_model(spline, e=e)
    m.sphere((0, 0, 0.08), 0.05, "a", density=1000)
    slope = np.diff(heights) / np.diff(knots)
    rate = lambda t: slope[min(np.searchsorted(knots, t, "right") - 1, len(slope) - 1)]  # noqa
    hits, _ = bounce(m, h, 1000, rate)
    assert len(hits) >= 5
    t, v0, v1, c0, c1, gap = hits.T
    same = c0 == c1
    assert same.sum() >= 5
    analytic = (1 + e) * c1[same] - e * v0[same] - np.maximum(gap[same], 0) / h
    np.testing.assert_allclose(v1[same], analytic, rtol=0, atol=1e-12)


def test_a_block_on_a_rising_floor_is_carried_without_sinking():
    """A floor moving up at V under a block at rest: from the first step's end the block
    rises with it (half a step behind: x = V (t - h/2)); the overlap does not grow."""
    V, h = 0.3, 1e-3
    m = floor_model(([0.0, 10.0], [[0, 0, 0], [0, 0, 10 * V]]), e=0.0)
    m.box((0, 0, 0.05), (0.1, 0.1, 0.05), "a", density=1000)
    sim = Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-12, max_iter=100), progress=0,
                     quiet=True, verify_every=0)
    worst = []
    for _ in range(500):
        sim.step()
        worst.append(-sim.contacts.gap.min())
    assert sim.owned.v[0, 2] == pytest.approx(V, abs=1e-9)
    assert sim.owned.x[0, 2] - 0.05 == pytest.approx(V * (sim.time - 0.5 * h), abs=1e-9)
    assert max(worst[-100:]) <= max(worst[:100]) + 1e-12


def test_a_time_load_and_the_energy_balance_count_the_drivers_work():
    """A body pushed by F(t) = F0 t: v(t) = F0 t^2 / (2 m) to the scheme's order, and a ball
    bouncing (e = 1) on a vibrating floor: the balance E(0) + W(loads, floor) - E(t) -
    dissipated closes to round-off."""
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("a", "a", friction=0.0)
    m.sphere((0, 0, 0), 0.1, "a", mass=2.0)
    m.load(0, force=lambda t: (3.0 * t, 0, 0))
    sim = Simulation(m, step=1e-3, progress=0, quiet=True, verify_every=0)
    for _ in range(1000):
        row = sim.step()
    assert sim.owned.v[0, 0] == pytest.approx(3.0 / 4.0, rel=1e-6)
    assert row["work_loads"] == pytest.approx(0.5 * 2.0 * sim.owned.v[0, 0] ** 2, rel=1e-6)
    A, w = 0.01, 2 * math.pi * 8
    m = floor_model(lambda t: (0, 0, A * math.sin(w * t)),
                    lambda t: (0, 0, A * w * math.cos(w * t)), e=1.0)
    m.sphere((0, 0, 0.1), 0.05, "a", density=1000)
    sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(tol=1e-14, max_iter=50),
                     progress=0, quiet=True, verify_every=0)
    rows = [sim.step() for _ in range(800)]
    assert max(abs(r["energy_error"]) for r in rows) < 1e-9
    assert max(abs(r["work_loads"]) for r in rows) > 1e-3     # the floor did work


@pytest.mark.parametrize("command, match", [
    (lambda m: m.move("ceiling", (0, 0, 1)), "no obstacle named 'ceiling'"),
    (lambda m: m.move("floor", lambda t: (0, 0, t)), "needs its velocity"),
    (lambda m: m.move("floor", ([0, 1, 1], [[0, 0, 0]] * 3)), "times must increase"),
    (lambda m: m.cam((0, 0, 0), (0, 0, 1), math.sin, 1.0, "a"), "needs its slope"),
    (lambda m: m.cam((0, 0, 0), (0, 0, 0), math.sin, 1.0, "a", slope=math.cos),
     "zero vector"),
    (lambda m: m.cam((0, 0, 0), (0, 0, 1), ([0, 1, 0.5], [0, 1, 2]), 1.0, "a"),
     "thetas must increase"),
    (lambda m: m.load(0, force=lambda t: (1, 2)), "callable raised"),
    (lambda m: m.load(5, force=lambda t: (1, 0, 0)), "load on an unknown body"),
])
def test_bad_drivers_are_named(command, match):
    m = ps.Model()
    m.surface("a", "a", friction=0.0)
    m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
    m.sphere((0, 0, 0.2), 0.05, "a", density=1000)
    with pytest.raises(InputError, match=match):
        command(m)
        sim = Simulation(m, step=1e-3, progress=0, quiet=True, verify_every=0)
        sim.step()


# -- the cam-follower (examples/cam_follower.py) ---------------------------------------------
def cam_example():
    sys.path.insert(0, EXAMPLES)
    try:
        import cam_follower
    finally:
        sys.path.remove(EXAMPLES)
    return cam_follower


def event_driven(cf, duration, dt=1e-5):
    """An independent reference: RK4 of the free flight m u'' = -k u - c u' between impacts,
    each impact located by bisection on u - c(t) and resolved by eq. 11.2."""
    omega = 2 * math.pi * cf.RPM / 60.0
    c = lambda t: cf.lift(omega * t + math.pi / 2)                   # noqa: E731
    dc = lambda t: cf.slope(omega * t + math.pi / 2) * omega         # noqa: E731

    def rk4(u, v, dt):
        f = lambda u, v: (v, -(cf.STIFFNESS * u + cf.DAMPING * v) / cf.MASS)  # noqa: E731
        k1 = f(u, v)
        k2 = f(u + 0.5 * dt * k1[0], v + 0.5 * dt * k1[1])
        k3 = f(u + 0.5 * dt * k2[0], v + 0.5 * dt * k2[1])
        k4 = f(u + dt * k3[0], v + dt * k3[1])
        return (u + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
                v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))

    t, u, v = 0.0, c(0.0) + cf.U0, cf.V0 + dc(0.0)
    hits = []
    while t < duration:
        u1, v1 = rk4(u, v, dt)
        if u1 - c(t + dt) < 0:
            lo, hi = 0.0, dt                                # bisection on the crossing
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                um, _ = rk4(u, v, mid)
                lo, hi = (mid, hi) if um - c(t + mid) >= 0 else (lo, mid)
            u, v = rk4(u, v, lo)
            t += lo
            v = (1 + cf.E) * dc(t) - cf.E * v
            hits.append(t)
            u = max(u, c(t))
            continue
        t, u, v = t + dt, u1, v1
    return np.array(hits)


def test_the_cam_follower_impacts_as_the_event_driven_reference(tmp_path):
    """examples/cam_follower.py (Siconos' CamFollower: 358 rpm, e = 0.8) run as users run it:
    the first impact within one step of the free flight's crossing of the cam (RK4); as
    many impacts in the first 0.95 s as the event-driven reference finds (the first three
    within three steps: the time-stepping lags the events by O(h) per impact), and every
    one obeys eq. 11.2 relative to the cam."""
    cf = cam_example()
    h = 5e-4
    out = str(tmp_path / "cam.h5")
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "run",
                        os.path.join(EXAMPLES, "cam_follower.py"), "--output", out, "--",
                        "--duration", "1.0", "--step", str(h)],
                       cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert os.path.exists(str(tmp_path / "cam.png"))
    from parsolve.io.hdf5 import h5py_module

    with h5py_module().File(out, "r") as f:
        g = {k: f["impacts"][k][()] for k in f["impacts"]}
        u = f["sensors/follower/u"][()][:, 0, 0]
        cam = f["sensors/follower/cam"][()][:, 0, 0]
    reference = event_driven(cf, 1.0)
    assert abs(g["time"][0] - reference[0]) <= h
    assert (g["time"] < 0.95).sum() == (reference < 0.95).sum() >= 12
    np.testing.assert_allclose(g["time"][:3], reference[:3], atol=3 * h)
    law = g["v_post"] - g["cam_post"] + cf.E * (g["v_pre"] - g["cam_pre"])
    assert np.abs(law).max() < 1e-10 * np.abs(g["v_pre"]).max()
    assert (g["impulse"] > 0).all()
    # never below the cam by more than the scheme's O(h |v-|)
    assert (u - cam).min() > -h * np.abs(g["v_pre"] - g["cam_pre"]).max()


DRIVEN = """
import math
import parsolve as ps
m = ps.Model()
m.surface("a", "a", friction=0.3, restitution=0.6)
m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
m.move("floor", lambda t: (0, 0, 0.01 * math.sin(40 * t)),
       lambda t: (0, 0, 0.4 * math.cos(40 * t)))
m.cam((2.0, 0, 0.5), (0, 0, -1), ([0.0, 2.0, 4.0], [0.0, 0.05, 0.02]), 30.0, "a", name="cam")
for i in range(10):
    m.sphere((0.11 * i, 0.01 * (i % 3), 0.052 + 0.002 * i), 0.05, "a", density=1000, id=i)
m.sphere((2.0, 0, 0.4), 0.05, "a", density=1000, id=10)
m.load(10, force=lambda t: (0, 0, 30.0 + 5 * math.sin(20 * t)))
m.run(0.06, 1e-3, output="res.h5", frames=0.03, progress=0,
      solver=ps.GaussSeidel(tol=1e-12, max_iter=300))
"""


def test_moving_obstacles_restart_on_another_rank_count_bit_for_bit(tmp_path):
    """The drivers read the clock: a run checkpointed at 1 rank and continued at 2 ends
    where the whole run ends, bit for bit (balls on a vibrating floor, a ball pushed up
    against a cam by a time load)."""
    from test_restart import assert_restart_continues

    assert_restart_continues(tmp_path, DRIVEN)


FAILING = """
import parsolve as ps
m = ps.Model()
m.surface("a", "a", friction=0.3)
m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
for i in range(20):
    m.sphere((0.11 * i, 0, 0.05), 0.05, "a", density=1000, id=i)
def valve(t):
    if t > 0.005:
        raise ValueError("valve force table ends")
    return (0, 0, 1.0)
m.load(19, force=valve)
m.run(0.02, 1e-3, output="res.h5", progress=0)
"""


def test_a_failing_signal_is_named_on_every_rank(tmp_path):
    """A time load's callable that raises mid-run, on a body one rank holds: every rank
    evaluates the signals, so every rank stops with the same named error (exit 2), none
    waits in a collective."""
    from test_restart import run

    (tmp_path / "model.py").write_text(FAILING)
    out = run(tmp_path, 2, timeout=120)
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "error (all ranks): load on body 19: force: the callable raised at t = 0.0055" in text
