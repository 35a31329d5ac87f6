"""Joints (bilateral constraints), as Solfec defines them: commands that restrain the absolute
motion of a point of a body, or the relative motion of points of two bodies. Each joint becomes
one 3-D row of U = B + W R per step, whose law (parsolve.laws) is:

- fix_point (Solfec's FIX_POINT): U = 0, the bilateral law with 3 equalities;
- fix_direction (FIX_DIRECTION): U_N = 0 along a fixed world direction, R_T = 0;
- prescribe (SET_DISPLACEMENT / SET_VELOCITY / SET_ACCELERATION): U_N = velo(t) along a fixed
  direction, R_T = 0; velo is the velocity signal, the displacement signal differentiated over
  the step or the acceleration signal integrated from 0;
- rigid_link (PUT_RIGID_LINK): U_N = 0 along the line through the two points, R_T = 0;
- spring (PUT_SPRING): R_N = h user_force(d, d') along that line, R_T = 0, d the stretch (the
  spring law, implicit in the step's end velocity, so it is stable for any stiffness).

Points are given in world coordinates in the initial configuration and move with their bodies.
`other=None` means the world (a fixed point of space). Joint rows carry the key
(gid of the body, -1 - joint index), apart from every contact's. A kinematic body (kinematic)
follows a prescribed linear and angular velocity history.
"""
import numpy as np

from ..errors import InputError
from .checks import finite, positive, unit

TYPES = ("fix_point", "fix_direction", "prescribe", "rigid_link", "spring")


class Signal:
    """A scalar signal of time: a linear spline through (times, values), constant beyond its
    ends, or a Python callable f(t) -> float."""

    def __init__(self, what, spec):
        self.what = what
        if callable(spec):
            self.f, self.times, self.values = spec, None, None
            return
        try:
            times, values = (np.asarray(x, float) for x in spec)
        except (TypeError, ValueError):
            raise InputError(f"{what}: give (times, values) or a callable of t, got "
                             f"{spec!r}") from None
        if times.ndim != 1 or times.shape != values.shape or len(times) < 1:
            raise InputError(f"{what}: times and values must be 1-D of one length, got "
                             f"{times.shape} and {values.shape}")
        finite(f"{what}: times", times)
        finite(f"{what}: values", values)
        if (np.diff(times) <= 0).any():
            k = int(np.flatnonzero(np.diff(times) <= 0)[0])
            raise InputError(f"{what}: times must increase, got {times[k]:g} then "
                             f"{times[k + 1]:g}")
        self.f, self.times, self.values = None, times, values

    def __call__(self, t):
        if self.f is None:
            return float(np.interp(t, self.times, self.values))
        try:
            v = float(self.f(t))
        except Exception as exc:
            raise InputError(f"{self.what}: the callable raised at t = {t:g}: {exc!r}") from None
        if not np.isfinite(v):
            raise InputError(f"{self.what}: the callable returned {v} at t = {t:g}")
        return v

    def integral(self, t):
        """The integral from 0 to t (exact for a spline; trapezoids of 64 pieces for a
        callable)."""
        if self.f is not None:
            s = np.linspace(0.0, t, 65)
            v = np.array([self(x) for x in s])
            return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(s)))
        knots = np.concatenate([[0.0], self.times[(self.times > 0) & (self.times < t)], [t]])
        v = np.interp(knots, self.times, self.values)
        return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(knots)))

    def state(self):
        """What defines it, for the model's fingerprint."""
        if self.f is not None:
            return getattr(self.f, "__qualname__", repr(self.f))
        return [self.times.tolist(), self.values.tolist()]


class MotionSignal:
    """A 3-vector signal of time: a constant, a linear spline (times, values (n, 3)) constant
    beyond its ends, or a callable f(t) -> 3 numbers."""

    def __init__(self, what, spec):
        self.what = what
        self.f = spec if callable(spec) else None
        if self.f is not None:
            return
        if isinstance(spec, tuple) and len(spec) == 2 and np.ndim(spec[1]) == 2:
            times = finite(f"{what}: times", spec[0])
            values = finite(f"{what}: values", spec[1], (len(times), 3))
            if (np.diff(times) <= 0).any():
                raise InputError(f"{what}: times must increase")
        else:
            times, values = np.zeros(1), finite(what, spec, (3,))[None]
        self.times, self.values = times, values

    def __call__(self, t):
        if self.f is None:
            return np.array([np.interp(t, self.times, self.values[:, i]) for i in range(3)])
        try:
            v = np.asarray(self.f(t), float).reshape(3)
        except Exception as exc:
            raise InputError(f"{self.what}: the callable raised at t = {t:g}: {exc!r}") from None
        if not np.isfinite(v).all():
            raise InputError(f"{self.what}: the callable returned {v.tolist()} at t = {t:g}")
        return v

    def state(self):
        if self.f is not None:
            return getattr(self.f, "__qualname__", repr(self.f))
        return [self.times.tolist(), self.values.tolist()]


class JointCommands:
    """The joint commands of parsolve.Model (a mixin: Model keeps its list in self.joints)."""

    def _joint(self, kind, body, point, other=None, other_point=None, name=None, **extra):
        joints = self.__dict__.setdefault("joints", [])
        name = name or f"{kind} {len(joints)}"
        if any(j["name"] == name for j in joints):
            raise InputError(f"joint {name!r}: the name is taken")
        spec = {"type": kind, "name": name, "body": self._joint_body(name, body),
                "point": finite(f"joint {name!r}: point", point, (3,)),
                "other": -1 if other is None else self._joint_body(name, other),
                "other_point": None}
        if other_point is not None:
            spec["other_point"] = finite(f"joint {name!r}: other_point", other_point, (3,))
        if spec["other"] == spec["body"]:
            raise InputError(f"joint {name!r}: joins body {spec['body']} to itself")
        spec.update(extra)
        joints.append(spec)
        return name

    @staticmethod
    def _joint_body(name, body):
        if isinstance(body, (bool, np.bool_)) or not float(body).is_integer() or int(body) < 0:
            raise InputError(f"joint {name!r}: a body is given by its id (an integer >= 0), "
                             f"got {body!r}")
        return int(body)

    def fix_point(self, body, point, other=None, other_point=None, name=None):
        """Solfec's FIX_POINT: the body's point (world coordinates now) stays where it is, or
        stays on `other`'s point (default: the same point)."""
        return self._joint("fix_point", body, point, other, other_point, name)

    def fix_direction(self, body, point, direction, other=None, other_point=None, name=None):
        """Solfec's FIX_DIRECTION: the body's point does not move along `direction` (a fixed
        world direction), relative to the world or to `other`'s point."""
        d = unit(f"joint {name or 'fix_direction'}: direction", direction)
        return self._joint("fix_direction", body, point, other, other_point, name, direction=d)

    def prescribe(self, body, point, direction, velocity=None, displacement=None,
                  acceleration=None, name=None):
        """Solfec's SET_VELOCITY / SET_DISPLACEMENT / SET_ACCELERATION: the body's point moves
        along the world `direction` with the given signal, (times, values) of a linear spline
        or a callable of t [m/s, m, m/s^2]. Exactly one signal."""
        given = {k: v for k, v in (("velocity", velocity), ("displacement", displacement),
                                   ("acceleration", acceleration)) if v is not None}
        label = name or f"prescribe {len(self.__dict__.get('joints', []))}"
        if len(given) != 1:
            raise InputError(f"joint {label!r}: give exactly one of velocity, displacement, "
                             f"acceleration (got {sorted(given) or 'none'})")
        (signal, spec), = given.items()
        d = unit(f"joint {label!r}: direction", direction)
        return self._joint("prescribe", body, point, None, None, name, direction=d,
                           signal=signal, value=Signal(f"joint {label!r}: {signal}", spec))

    def rigid_link(self, body, point, other, other_point, name=None):
        """Solfec's PUT_RIGID_LINK: the distance between the body's point and `other`'s point
        (world coordinates now; other None: a point of space) stays what it is."""
        return self._joint("rigid_link", body, point, other, other_point, name)

    def spring(self, body, point, other, other_point, force, name=None):
        """Solfec's PUT_SPRING: a force force(d, ddot) [N] along the line through the two
        points, d the stretch (the distance minus the initial distance), positive pushing the
        points apart; e.g. lambda d, v: -k * d - c * v."""
        if not callable(force):
            raise InputError(f"joint {name or 'spring'}: force must be a callable of (d, ddot)")
        return self._joint("spring", body, point, other, other_point, name, force=force)

    def guide(self, body, point, span, free=(), velocity=None, name=None):
        """A body on guides: a block on a rail (free=("x",)), a shear plate pressed by its
        load (free=("z",), velocity={"x": V}), a piston, a hinge (free=("rz",)). Only the
        world-axis motions in `free` ("x", "y", "z", "rx", "ry", "rz") follow the dynamics;
        each other translation is held, or driven by `velocity[axis]` (a signal as for
        prescribe), and each other rotation is held. Made of Solfec's joints, named
        "NAME.i": a fix_direction (or prescribe) along every locked axis through `point`
        (the body's centre, say), and for every locked rotation one more along a locked
        axis d, at `span` [m] from the point along d x r (so the two rows hold r). A rotation
        about r can be locked only while a translation across r is. Returns NAME;
        sensor(joints=[NAME]) reads the joints' reactions."""
        axes = ("x", "y", "z")
        label = name or f"guide {len(self.__dict__.get('joints', []))}"
        free = (free,) if isinstance(free, str) else tuple(free)
        velocity = dict(velocity or {})
        for a in free:
            if a not in axes + ("rx", "ry", "rz"):
                raise InputError(f"guide {label!r}: unknown free motion {a!r}: choose from "
                                 "x, y, z, rx, ry, rz")
        for a in velocity:
            if a not in axes or a in free:
                raise InputError(f"guide {label!r}: velocity along {a!r}: a driven axis is "
                                 "one of the locked translations x, y, z")
        c = finite(f"guide {label!r}: point", point, (3,))
        s = float(positive(f"guide {label!r}: span", span))
        locked = [k for k, a in enumerate(axes) if a not in free]
        e = np.eye(3)
        rows = [(c, k) for k in locked]
        for r, a in enumerate(axes):
            if "r" + a in free:
                continue
            across = [k for k in locked if k != r]
            if not across:
                raise InputError(f"guide {label!r}: rotation about {a} cannot be held while "
                                 f"every translation across it is free ({free})")
            d = across[0]
            rows.append((c + s * np.cross(e[d], e[r]), d))
        for i, (p, d) in enumerate(rows):
            jname = f"{label}.{i}"
            if axes[d] in velocity:
                self.prescribe(body, p, e[d], velocity=velocity[axes[d]], name=jname)
            else:
                self.fix_direction(body, p, e[d], name=jname)
        return label

    def kinematic(self, body, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0)):
        """Drive `body` by its velocity history instead of its dynamics (a piston, a shear
        plate, a rotating drum): velocity [m/s] of its mass centre and angular velocity [rad/s]
        (world frame), each a constant 3-vector, a spline (times, values (n, 3)) or a callable
        of t. Contacts and joints act on the others as on an infinitely heavy body; gravity
        and loads do not move it. The energy balance does not count its driver's work."""
        kin = self.__dict__.setdefault("kinematics", [])
        what = f"kinematic body {body!r}"
        gid = self._joint_body(what, body)
        if any(k["body"] == gid for k in kin):
            raise InputError(f"{what}: is already kinematic")
        kin.append({"body": gid, "velocity": MotionSignal(f"{what}: velocity", velocity),
                    "angular_velocity": MotionSignal(f"{what}: angular_velocity",
                                                     angular_velocity)})

    def joints_state(self):
        """What defines the joints and the kinematic bodies, for the model's fingerprint."""
        out = [{"kinematic": k["body"], "velocity": k["velocity"].state(),
                "angular_velocity": k["angular_velocity"].state()}
               for k in self.__dict__.get("kinematics", [])]
        for j in self.__dict__.get("joints", []):
            s = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in j.items()
                 if k not in ("value", "force")}
            if "value" in j:
                s["value"] = j["value"].state()
            if "force" in j:
                s["force"] = getattr(j["force"], "__qualname__", repr(j["force"]))
            out.append(s)
        return out
