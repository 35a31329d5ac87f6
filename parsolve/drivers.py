"""The time drivers at run time (parsolve.model.drivers): moving obstacles and time loads.
Replicated on every rank (a few signals each), applied to whatever rows a rank holds.

Moving obstacles: detection sees each at its place at the detection time (the half step);
a row with a moving obstacle gets the obstacle's velocity in its local frame at t (for the
impact law's U(t)) and at t + h (for B), which the assembly subtracts from the body side
(U = H u - w: a rheonomic row). The driver's work on the bodies, R . (w(t) + w(t+h)) / 2,
enters the energy balance as a load's work.
"""
import copy

import numpy as np


class MovingObstacles:
    def __init__(self, specs):
        self.specs = list(specs)
        self.index = np.array([m["index"] for m in self.specs], np.int64)

    def __len__(self):
        return len(self.specs)

    def at(self, obstacles, t):
        """The obstacles with the moving ones at their place at time t (a copy; the model's
        stay at their initial places)."""
        if not len(self):
            return obstacles
        moved = copy.copy(obstacles)
        moved.point = obstacles.point.copy()
        for k, m in zip(self.index, self.specs):
            moved.point[k] = obstacles.point[k] + m["displacement"](t)
        return moved

    def wall_velocity(self, rows, t):
        """(n, 3): each row's obstacle velocity at t in the row's local frame (zero for rows
        without a moving obstacle), or None when no row has one. Every signal is evaluated
        on every rank, rows or not: a callable that fails, fails everywhere at once."""
        if not len(self):
            return None
        v = {int(k): m["velocity"](t) for k, m in zip(self.index, self.specs)}
        hit = np.flatnonzero(np.isin(rows.obstacle, self.index) & (rows.b < 0)) \
            if len(rows) else []
        if not len(hit):
            return None
        world = np.array([v[int(k)] for k in rows.obstacle[hit]])
        out = np.zeros((len(rows), 3))
        out[hit] = np.einsum("nij,nj->ni", rows.frame[hit], world)
        return out


class TimeLoads:
    def __init__(self, specs):
        self.specs = list(specs)
        self.gid = np.array([s["body"] for s in self.specs], np.int64)

    def __len__(self):
        return len(self.specs)

    def _held(self, held, upto, t):
        """(row, force, torque) of each load on a held body; every signal is evaluated on
        every rank (a callable that fails, fails everywhere at once)."""
        values = [(s["force"](t), s["torque"](t)) for s in self.specs]
        for (f, T), s in zip(values, self.specs):
            for r in np.flatnonzero(held.gid[:upto] == s["body"]):
                yield r, f, T

    def apply(self, held, t_mid, h, v_free, w_free, Jinv):
        """Add h M^-1 (F(t_mid), T(t_mid)) to the held bodies' free velocities (in place)."""
        for r, f, T in self._held(held, len(held), t_mid):
            v_free[r] += h * f / held.mass[r]
            w_free[r] += h * Jinv[r] @ T

    def work(self, owned, x0, w0, t_mid, h):
        """Per owned body: the time loads' work over the step, F . dx + h T . (w0 + w) / 2."""
        out = np.zeros(owned.n_owned)
        for r, f, T in self._held(owned, owned.n_owned, t_mid):
            out[r] += f @ (owned.x[r] - x0[r]) + 0.5 * h * T @ (w0[r] + owned.w[r])
        return out
