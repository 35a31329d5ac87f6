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

    def impose(self, held, t, h, v_free, w_free, Jinv):
        """Set the held kinematic bodies' free velocities to their signals at t + h and zero
        their inverse inertia (in place); returns the inverse masses of all held bodies."""
        inv_mass = 1.0 / held.mass
        if not len(self):
            return inv_mass
        rows = np.flatnonzero(np.isin(held.gid, self.gid))
        for r in rows:
            k = self.specs[int(np.flatnonzero(self.gid == held.gid[r])[0])]
            v_free[r] = k["velocity"](t + h)
            w_free[r] = k["angular_velocity"](t + h)
        inv_mass[rows] = 0.0
        Jinv[rows] = 0.0
        return inv_mass

    def start(self, held, t):
        """The held kinematic bodies' velocities at t (before the first half step)."""
        for r in np.flatnonzero(np.isin(held.gid, self.gid)):
            k = self.specs[int(np.flatnonzero(self.gid == held.gid[r])[0])]
            held.v[r] = k["velocity"](t)
            held.w[r] = k["angular_velocity"](t)
