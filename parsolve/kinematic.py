"""Kinematic bodies at run time: bodies moved by a prescribed velocity history (Model.kinematic)
instead of their dynamics. In the step they are bodies of infinite mass: their free velocity
is the prescribed one at the step's end, their inverse mass and inertia zero, so reactions move
the others and not them, and their positions follow the midpoint rule,
x(t+h) = x(t) + h/2 (v(t) + v(t+h)): a velocity spline with knots on the steps is integrated
exactly. Replicated on every rank (a few signals); applied to whichever rows a rank holds.
"""
import numpy as np


class Kinematics:
    def __init__(self, specs):
        self.specs = list(specs)
        self.gid = np.array([k["body"] for k in self.specs], np.int64)

    def __len__(self):
        return len(self.specs)

    def _held(self, held):
        """(row, spec) for each kinematic body among the held rows."""
        where = {int(g): k for k, g in enumerate(self.gid)}
        for r in np.flatnonzero(np.isin(held.gid, self.gid)):
            yield r, self.specs[where[int(held.gid[r])]]

    def impose(self, held, t, h, v_free, w_free, Jinv):
        """Set the held kinematic bodies' free velocities to their signals at t + h and zero
        their inverse inertia (in place); returns the inverse masses of all held bodies."""
        inv_mass = 1.0 / held.mass
        for r, k in self._held(held) if len(self) else ():
            v_free[r] = k["velocity"](t + h)
            w_free[r] = k["angular_velocity"](t + h)
            inv_mass[r] = 0.0
            Jinv[r] = 0.0
        return inv_mass

    def start(self, held, t):
        """The held kinematic bodies' velocities at t (before the first half step)."""
        for r, k in self._held(held) if len(self) else ():
            held.v[r] = k["velocity"](t)
            held.w[r] = k["angular_velocity"](t)
