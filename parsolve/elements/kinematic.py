"""Kinematic bodies: bodies moved by a prescribed velocity history (Model.kinematic) instead of
their dynamics: a piston, a shear plate, a rotating drum. In the step they are bodies of
infinite mass: their free velocity is the prescribed one at the step's end, their inverse mass
and inertia zero, so reactions move the others and not them, and their positions follow the
midpoint rule, x(t+h) = x(t) + h/2 (v(t) + v(t+h)): a velocity spline with knots on the steps
is integrated exactly. A row between two driven sides (two kinematic bodies, or one and an
obstacle) has nothing to move and is dropped.
"""
import numpy as np

from ..errors import InputError, everywhere
from ..tables.checks import body_id
from .base import Element
from .signals import MotionSignal


class Kinematics(Element):
    NAME = "kinematics"

    def __init__(self, specs):
        super().__init__(specs)
        self.gid = np.array([k["body"] for k in self.specs], np.int64)
        self._where = {int(g): k for k, g in enumerate(self.gid)}

    def bodies(self):
        return self.gid

    def set_up(self, found):
        missing = [int(g) for g in self.gid if g not in found]
        if missing:
            raise everywhere(InputError(f"kinematic body {missing[0]}: not in the model"))

    def _held(self, held):
        """(row, spec) for each kinematic body among the held rows."""
        for r in np.flatnonzero(np.isin(held.gid, self.gid)):
            yield r, self.specs[self._where[int(held.gid[r])]]

    def start(self, held, t):
        """The held kinematic bodies' velocities at t (before the first half step)."""
        for r, k in self._held(held):
            held.v[r] = k["velocity"](t)
            held.w[r] = k["angular_velocity"](t)

    def drive(self, held, t, h, v_free, w_free, Jinv, inv_mass):
        """The held kinematic bodies' free velocities: their signals at t + h; their inverse
        mass and inertia zero."""
        for r, k in self._held(held):
            v_free[r] = k["velocity"](t + h)
            w_free[r] = k["angular_velocity"](t + h)
            inv_mass[r] = 0.0
            Jinv[r] = 0.0

    def keep(self, rows, held):
        driven = np.isin(held.gid, self.gid)
        return ~(driven[rows.a] & ((rows.b < 0) | driven[np.maximum(rows.b, 0)]))


class KinematicCommands:
    """The kinematic command of parsolve.Model."""

    def kinematic(self, body, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0)):
        """Drive `body` by its velocity history instead of its dynamics (a piston, a shear
        plate, a rotating drum): velocity [m/s] of its mass centre and angular velocity [rad/s]
        (world frame), each a constant 3-vector, a spline (times, values (n, 3)) or a callable
        of t. Contacts and joints act on the others as on an infinitely heavy body; gravity
        and loads do not move it. The energy balance does not count its driver's work."""
        kin = self.elements.setdefault(Kinematics.NAME, [])
        what = f"kinematic body {body!r}"
        gid = body_id(what, body)
        if any(k["body"] == gid for k in kin):
            raise InputError(f"{what}: is already kinematic")
        kin.append({"body": gid, "velocity": MotionSignal(f"{what}: velocity", velocity),
                    "angular_velocity": MotionSignal(f"{what}: angular_velocity",
                                                     angular_velocity)})


def state(model):
    """What defines the kinematic bodies, for the model's fingerprint."""
    return [{"kinematic": k["body"], "velocity": k["velocity"].state(),
             "angular_velocity": k["angular_velocity"].state()}
            for k in model.elements.get(Kinematics.NAME, [])]
