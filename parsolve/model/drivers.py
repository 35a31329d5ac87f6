"""Motions and forces given as functions of time: moving obstacles (rheonomic constraints: a
vibrating floor, a piston face, a cam) and time-dependent loads (a follower's valve force).

A moving obstacle translates: its point is point0 + displacement(t), its velocity(t) the
displacement's derivative. Contacts with it are rheonomic rows: their U is the body point's
velocity minus the obstacle's, so Newton's impact law acts on the relative velocity,
v+ - c'(t) = -e (v- - c'(t)) (Siconos' notes on the cam-follower, eq. 11.2). A cam is the
follower-axis form of that system: a half-space of normal n (the follower's direction of lift)
whose offset along n is the lift profile c(theta), theta = omega t + phase, on a shaft turning
at omega (the constraint u >= c(t) of the notes' valve train).
"""
import numpy as np

from ..errors import InputError
from .checks import finite, unit
from .joints import MotionSignal


class DriverCommands:
    """Model commands of the time drivers (a mixin: the lists live in self.moving and
    self.time_loads)."""

    def move(self, obstacle, displacement, velocity=None):
        """Translate the obstacle named `obstacle` by displacement(t) [m] (a 3-vector
        signal: a callable of t, or a linear spline (times, values (n, 3))) with velocity(t)
        [m/s] its derivative: required for a callable (the contacts use it exactly), the
        spline's slopes by default."""
        names = self.obstacles.names
        if obstacle not in names:
            raise InputError(f"move: no obstacle named {obstacle!r} (the model has "
                             f"{', '.join(map(repr, names)) or 'none'})")
        moving = self.__dict__.setdefault("moving", [])
        what = f"moving obstacle {obstacle!r}"
        if any(m["name"] == obstacle for m in moving):
            raise InputError(f"{what}: already moves")
        d = MotionSignal(f"{what}: displacement", displacement)
        if velocity is None:
            if d.f is not None:
                raise InputError(f"{what}: a callable displacement needs its velocity= (the "
                                 "contacts use the obstacle's velocity exactly)")
            velocity = _spline_slopes(d)
        moving.append({"name": obstacle, "index": names.index(obstacle), "displacement": d,
                       "velocity": MotionSignal(f"{what}: velocity", velocity)})
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
        self.__dict__["moving"][-1]["cam"] = {"speed": omega, "phase": phase,
                                              "profile": getattr(profile, "__qualname__",
                                                                 repr(profile))}
        return name

    def _time_load(self, body, force, torque):
        """Model.load with a signal: force(t) [N], torque(t) [N m], world frame, applied at
        each step's midpoint time."""
        what = f"load on body {body}"
        self.__dict__.setdefault("time_loads", []).append(
            {"body": int(body), "force": MotionSignal(f"{what}: force", force),
             "torque": MotionSignal(f"{what}: torque", torque)})

    def drivers_state(self):
        """What defines the moving obstacles and time loads, for the model's fingerprint."""
        out = [{"moving": m["name"], "displacement": m["displacement"].state(),
                "velocity": m["velocity"].state(), "cam": m.get("cam")}
               for m in self.__dict__.get("moving", [])]
        out += [{"load": t["body"], "force": t["force"].state(), "torque": t["torque"].state()}
                for t in self.__dict__.get("time_loads", [])]
        return out


def is_signal(value):
    """A time signal (a callable, or a spline (times, values)) rather than a constant."""
    return callable(value) or (isinstance(value, tuple) and len(value) == 2
                               and np.ndim(value[1]) == 2)


def _spline_slopes(d):
    """The velocity of a displacement spline: its slope on each interval, as a step spline
    (values at each knot's right; zero beyond the ends)."""
    t, x = d.times, d.values
    if len(t) < 2:
        return np.zeros(3)
    slope = np.diff(x, axis=0) / np.diff(t)[:, None]

    def velocity(s):
        k = np.searchsorted(t, s, side="right") - 1
        return slope[k] if 0 <= k < len(slope) else np.zeros(3)
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
