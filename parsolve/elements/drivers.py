"""Motions and forces given as functions of time: moving obstacles (rheonomic constraints: a
vibrating floor, a piston face, a cam, a turning drum, a mixer's blade, a tilting box) and
time-dependent loads (a follower's valve force).

A moving obstacle follows a rigid motion: a translation by displacement(t), with velocity(t)
its derivative, and optionally a turn by angle(t) about an axis through a centre (a point of
the obstacle at t = 0, carried by the displacement), with rate(t) the angle's derivative: a
point y of the obstacle at t = 0 is at c + d(t) + Rot(t) (y - c) at t, and the obstacle's
velocity at a point p is v(t) + omega(t) x (p - c - d(t)), omega = rate(t) axis. Every kind of
obstacle moves so (half-spaces, whose normal turns too; fixed boxes, spheres, polyhedra,
meshes). Contacts with it are rheonomic rows: their U is the body point's
velocity minus the obstacle's, so Newton's impact law acts on the relative velocity,
v+ - c'(t) = -e (v- - c'(t)) (Siconos' notes on the cam-follower, eq. 11.2). A cam is the
follower-axis form of that system: a half-space of normal n (the follower's direction of lift)
whose offset along n is the lift profile c(theta), theta = omega t + phase, on a shaft turning
at omega (the constraint u >= c(t) of the notes' valve train).

At run time both are elements (MovingObstacles, TimeLoads), replicated on every rank (a few
signals each) and applied to whatever rows a rank holds. Detection sees a moving obstacle at
its place at the detection time (the half step); a row with a moving obstacle gets the
obstacle's velocity in its local frame at t (for the impact law's U(t)) and at t + h (for B),
which the assembly subtracts from the body side (U = H u - w: a rheonomic row; for a turning
one, the velocity of its point where the row's point is). The driver's
work on the bodies, R . (w(t) + w(t+h)) / 2, enters the energy balance as a load's work, and
so does a time load's. Every signal is evaluated on every rank, rows or not: a callable that
fails, fails everywhere at once.
"""
import copy
import math

import numpy as np

from ..dynamics.rotation import axis_angle_to_quat, quat_mul, quat_to_matrix
from ..errors import InputError, everywhere
from ..tables.checks import finite, unit
from ..tables.keys import POINT, ROTATION
from .base import Element
from .signals import MotionSignal, Signal


class MovingObstacles(Element):
    NAME = "moving"
    RHEONOMIC = True

    def __init__(self, specs):
        super().__init__(specs)
        self.index = np.array([m["index"] for m in self.specs], np.int64)

    def obstacles(self, obstacles, t):
        """The obstacles with the moving ones at their pose at time t (a copy; the model's
        stay at their initial places; `moving` lists the moved rows, for the frames)."""
        if not len(self):
            return obstacles
        moved = copy.copy(obstacles)
        moved.point = obstacles.point.copy()
        moved.moving = self.index
        turning = any("turn" in m for m in self.specs)
        if turning:
            moved.normal, moved.q = obstacles.normal.copy(), obstacles.q.copy()
        for k, m in zip(self.index, self.specs):
            d = m["displacement"](t)
            if "turn" not in m:                      # a translation: as it always was
                moved.point[k] = obstacles.point[k] + d
                continue
            turn = m["turn"]
            q = axis_angle_to_quat(turn["axis"], turn["angle"](t))[None]
            R = quat_to_matrix(q)[0]
            c = turn["centre"]
            moved.point[k] = c + d + _turned(R, obstacles.point[k] - c)
            moved.normal[k] = _turned(R, obstacles.normal[k])
            qk = quat_mul(q, obstacles.q[k][None])[0]
            moved.q[k] = qk / math.sqrt(float(qk[0] * qk[0] + qk[1] * qk[1] + qk[2] * qk[2]
                                                 + qk[3] * qk[3]))
        return moved

    def wall(self, rows, t):
        """(n, 3): each row's obstacle velocity at t in the row's local frame (zero for rows
        without a moving obstacle), or None when no row has one: at a point row v(t), plus
        omega(t) x (p - c(t)) at the row's point p for a turning one; at a rolling row (the
        rotation geometry) omega(t), zero for one that only translates."""
        if not len(self):
            return None
        v = {int(k): m["velocity"](t) for k, m in zip(self.index, self.specs)}
        spin = {int(k): (m["turn"]["rate"](t) * m["turn"]["axis"],
                         m["turn"]["centre"] + m["displacement"](t))
                for k, m in zip(self.index, self.specs) if "turn" in m}
        moved = (np.isin(rows.obstacle, self.index) & (rows.b < 0)) if len(rows) else \
            np.zeros(0, bool)
        hit = np.flatnonzero(moved & (rows.geometry == POINT)) if len(rows) else []
        turned = np.flatnonzero(moved & (rows.geometry == ROTATION)
                                & np.isin(rows.obstacle, list(spin))) if spin else []
        if len(turned):
            out = np.zeros((len(rows), 3))
            omega = np.array([spin[int(k)][0] for k in rows.obstacle[turned]])
            out[turned] = np.einsum("nij,nj->ni", rows.frame[turned], omega)
            if not len(hit):
                return out
        if not len(hit):
            return None
        obstacle = rows.obstacle[hit]
        world = np.array([v[int(k)] for k in obstacle])
        for k, (omega, c) in spin.items():
            at = np.flatnonzero(obstacle == k)
            if len(at):
                world[at] += np.cross(omega, rows.point[hit[at]] - c)
        if not len(turned):
            out = np.zeros((len(rows), 3))
        out[hit] = np.einsum("nij,nj->ni", rows.frame[hit], world)
        return out


class TimeLoads(Element):
    NAME = "time_loads"

    def __init__(self, specs):
        super().__init__(specs)
        self.gid = np.array([s["body"] for s in self.specs], np.int64)

    def bodies(self):
        return np.unique(self.gid)

    def set_up(self, found):
        missing = [int(g) for g in self.gid if g not in found]
        if missing:
            raise everywhere(InputError(f"load on an unknown body (bodies "
                                        f"{self.gid.tolist()})"))

    def _held(self, held, upto, t):
        """(row, force, torque) of each load on a held body."""
        values = [(s["force"](t), s["torque"](t)) for s in self.specs]
        for (f, T), s in zip(values, self.specs):
            for r in np.flatnonzero(held.gid[:upto] == s["body"]):
                yield r, f, T

    def drive(self, held, t, h, v_free, w_free, Jinv, inv_mass):
        """Add h M^-1 (F, T) at the step's midpoint t + h / 2 to the held bodies' free
        velocities."""
        if not len(self):
            return
        for r, f, T in self._held(held, len(held), t + 0.5 * h):
            v_free[r] += h * f / held.mass[r]
            w_free[r] += h * Jinv[r] @ T

    def work(self, owned, x0, w0, t_mid, h):
        """Per owned body: the time loads' work over the step, F . dx + h T . (w0 + w) / 2."""
        if not len(self):
            return None
        out = np.zeros(owned.n_owned)
        for r, f, T in self._held(owned, owned.n_owned, t_mid):
            out[r] += f @ (owned.x[r] - x0[r]) + 0.5 * h * T @ (w0[r] + owned.w[r])
        return out


class DriverCommands:
    """Model commands of the time drivers (a mixin: the specs in model.elements["moving"] and
    model.elements["time_loads"])."""

    def move(self, obstacle, displacement=None, velocity=None, angle=None, rate=None,
             axis=(0.0, 0.0, 1.0), centre=None):
        """Move the obstacle named `obstacle` (any kind: a half-space, a fixed box, sphere or
        polyhedron, a mesh) rigidly: translate it by displacement(t) [m] (a 3-vector signal:
        a callable of t, or a linear spline (times, values (n, 3)); none: it stays) with
        velocity(t) [m/s] its derivative, and turn it by angle(t) [rad] (a scalar signal:
        a callable, or a spline (times, values)) about the unit `axis` through `centre` (a
        point at t = 0, default the obstacle's point; the displacement carries it) with
        rate(t) [rad/s] the angle's derivative. A derivative is required for a callable
        (the contacts use it exactly), the spline's slopes by default. A drum:
        move("drum", angle=lambda t: w * t, rate=lambda t: w, axis=(1, 0, 0),
        centre=(0, 0, 0.5))."""
        names = self.obstacles.names
        if obstacle not in names:
            raise InputError(f"move: no obstacle named {obstacle!r} (the model has "
                             f"{', '.join(map(repr, names)) or 'none'})")
        moving = self.elements.setdefault(MovingObstacles.NAME, [])
        what = f"moving obstacle {obstacle!r}"
        if any(m["name"] == obstacle for m in moving):
            raise InputError(f"{what}: already moves")
        if angle is None and (rate is not None or centre is not None):
            raise InputError(f"{what}: rate= and centre= belong to a turn: give its angle=")
        if displacement is None and angle is None:
            raise InputError(f"{what}: give a displacement, an angle or both")
        if displacement is None:
            if velocity is not None:
                raise InputError(f"{what}: a velocity needs its displacement")
            displacement = velocity = (0.0, 0.0, 0.0)
        d = MotionSignal(f"{what}: displacement", displacement)
        velocity = _rate(what, d, velocity, "displacement", "velocity", "velocity")
        spec = {"name": obstacle, "index": names.index(obstacle), "displacement": d,
                "velocity": MotionSignal(f"{what}: velocity", velocity)}
        if angle is not None:
            k = names.index(obstacle)
            spec["turn"] = _turn(what, angle, rate, axis, self.obstacles.point[k]
                                 if centre is None else centre)
        moving.append(spec)
        return obstacle

    def cam(self, point, normal, profile, speed, material, phase=0.0, slope=None, name=None):
        """A cam on a shaft turning at `speed` [rad/s] under a follower that moves along the
        unit `normal`: a half-space through `point` whose offset along the normal is the lift
        profile c(theta) [m], theta = speed t + phase. profile: a callable of theta with its
        derivative `slope` dc/dtheta (a callable), or a table (thetas, lifts) over one turn,
        interpolated linearly and periodically (its slopes by default). Returns the name."""
        n = unit(f"cam {name or ''}: normal", normal)
        p = finite(f"cam {name or ''}: point", point, (3,))
        omega = float(finite(f"cam {name or ''}: speed", speed))
        phase = float(finite(f"cam {name or ''}: phase", phase))
        name = name or f"cam {len(self.obstacles)}"
        lift, dlift = _profile(f"cam {name!r}", profile, slope)
        self.half_space(p, n, material, name=name)
        self.move(name, lambda t: lift(omega * t + phase) * n,
                  velocity=lambda t: dlift(omega * t + phase) * omega * n)
        self.elements[MovingObstacles.NAME][-1]["cam"] = {"speed": omega, "phase": phase,
                                              "profile": getattr(profile, "__qualname__",
                                                                 repr(profile))}
        return name

    def _time_load(self, body, force, torque):
        """Model.load with a signal: force(t) [N], torque(t) [N m], world frame, applied at
        each step's midpoint time."""
        what = f"load on body {body}"
        self.elements.setdefault(TimeLoads.NAME, []).append(
            {"body": int(body), "force": MotionSignal(f"{what}: force", force),
             "torque": MotionSignal(f"{what}: torque", torque)})


def state(model):
    """What defines the moving obstacles and time loads, for the model's fingerprint."""
    out = [{"moving": m["name"], "displacement": m["displacement"].state(),
            "velocity": m["velocity"].state(), "cam": m.get("cam"),
            **({"turn": {"angle": m["turn"]["angle"].state(), "rate": m["turn"]["rate"].state(),
                         "axis": m["turn"]["axis"].tolist(),
                         "centre": m["turn"]["centre"].tolist()}} if "turn" in m else {})}
           for m in model.elements.get(MovingObstacles.NAME, [])]
    out += [{"load": t["body"], "force": t["force"].state(), "torque": t["torque"].state()}
            for t in model.elements.get(TimeLoads.NAME, [])]
    return out


def _turned(R, y):
    """R y in plain arithmetic (no BLAS: the same bits on every CPU)."""
    return R[:, 0] * y[0] + R[:, 1] * y[1] + R[:, 2] * y[2]


def _rate(what, signal, given, name, keyword, quantity):
    """The rate of `signal`: `given`, or the slopes of its spline where it is given as
    points; a callable needs its rate given (the contacts use the obstacle's `quantity`
    exactly, no difference quotient)."""
    if given is not None:
        return given
    if signal.f is not None:
        raise InputError(f"{what}: a callable {name} needs its {keyword}= (the contacts use "
                         f"the obstacle's {quantity} exactly)")
    return _spline_slopes(signal)


def _turn(what, angle, rate, axis, centre):
    """A turn's spec: angle and rate (scalar signals), the unit axis, the centre."""
    a = Signal(f"{what}: angle", angle)
    rate = _rate(what, a, rate, "angle", "rate", "angular velocity")
    return {"angle": a, "rate": Signal(f"{what}: rate", rate),
            "axis": unit(f"{what}: axis", axis), "centre": finite(f"{what}: centre", centre,
                                                                  (3,))}


def _spline_slopes(d):
    """The derivative of a spline signal (a displacement's (n, 3) values, or an angle's
    (n,)): its slope on each interval, as a step signal (values at each knot's right; zero
    beyond the ends)."""
    t, x = d.times, d.values
    zero = np.zeros(x.shape[1:]) if x.ndim > 1 else 0.0
    if len(t) < 2:
        return zero if x.ndim > 1 else (lambda s: 0.0)
    slope = np.diff(x, axis=0) / (np.diff(t)[:, None] if x.ndim > 1 else np.diff(t))

    def velocity(s):
        k = np.searchsorted(t, s, side="right") - 1
        return slope[k] if 0 <= k < len(slope) else zero
    return velocity


def _profile(what, profile, slope):
    """(c, dc/dtheta) as callables of theta."""
    if callable(profile):
        if slope is None or not callable(slope):
            raise InputError(f"{what}: a callable profile needs its slope= dc/dtheta "
                             "(a callable)")
        return profile, slope
    try:
        theta, lift = (np.asarray(a, float) for a in profile)
    except (TypeError, ValueError):
        raise InputError(f"{what}: profile is a callable of theta or a table "
                         "(thetas, lifts)") from None
    if theta.ndim != 1 or theta.shape != lift.shape or len(theta) < 2 or \
            not np.isfinite(theta).all() or not np.isfinite(lift).all():
        raise InputError(f"{what}: profile table (thetas, lifts) of equal lengths >= 2, "
                         "finite")
    if (np.diff(theta) <= 0).any() or theta[-1] - theta[0] >= 2 * np.pi:
        raise InputError(f"{what}: profile thetas must increase within one turn")
    knots = np.append(theta, theta[0] + 2 * np.pi)
    values = np.append(lift, lift[0])
    slopes = np.diff(values) / np.diff(knots)

    def c(a):
        return float(np.interp((a - theta[0]) % (2 * np.pi) + theta[0], knots, values))

    def dc(a):
        u = (a - theta[0]) % (2 * np.pi) + theta[0]
        return float(slopes[min(np.searchsorted(knots, u, side="right") - 1, len(slopes) - 1)])
    return c, dc
