"""Projection on constraints (Siconos' notes, "Projection on constraints"): after a step, move
the positions so that the bilateral constraints hold, HE(q) = 0, and contacts do not
interpenetrate, HI(q) >= 0.

The velocity-level step leaves drift (a bilateral row's free term removes only part of it per
step, and the midpoint rule moves points along tangents, off a rigid link's circle) and keeps
the overlaps a generator made. The correction q1 = q0 + M^-1 grad(h) Lambda solves the mixed
LCP of the constraints linearised at the step's end q0,

    0 <= HI(q0) + W Lambda_I  _|_  Lambda_I >= 0,     0 = HE(q0) + W Lambda_E,

with W = H M^-1 H^T (mass-weighted: heavy bodies move less). HE(q0) are the positional joints'
violations at the end positions (fixed point, fixed direction, rigid link: their rows built
again there; springs and prescribed motions constrain no position); HI(q0) the gaps of the
contacts detected again at the end positions, within the step's margin plus twice the largest
violation (the step's gaps carried to the end, g + h/2 U_N(t+h), decide whether to project at
all). It is a step's problem with
positions for velocities: contacts as frictionless rows (mu = 0: the LCP), joints as bilateral
rows, solved by projected Gauss-Seidel over the same colours and exact sums as a step, so the
correction does not depend on the ranks either. The rotation part of M^-1 H^T Lambda turns the
orientations by the exponential map, so |Q| = 1 holds by construction (the notes' eq. 10.7).
"""
import numpy as np

from ..assembly import LocalDynamics
from ..dynamics.rotation import rotate_spatial
from ..laws import bilateral
from ..solvers import GaussSeidel, Problem
from ..tables.keys import CONTACT


class Projection:
    """threshold [m]: project when a violation exceeds it (default: 1e-4 times the smallest
    body radius): the velocity-level step conserves a pendulum's energy to 1e-4 over 20 periods,
    projecting at every step dissipates it (the next step's constraint then removes the normal
    part of a velocity that was tangent to the old position); tol: the residual of the
    position problem (relative, as a step's); max_iter: its sweep cap."""

    def __init__(self, threshold=None, tol=1e-10, max_iter=1000):
        self.threshold = threshold
        self.solver = GaussSeidel(tol=tol, max_iter=max_iter)

    @staticmethod
    def violation(contacts, U_end, constraints, h):
        """The largest violation of this rank's rows at the step's end: the step's contacts
        (their gaps carried to the end, g + h/2 U_N(t+h)) and the positional constraints
        `constraints` (bilateral rows made at the end positions)."""
        touch = contacts.origin == CONTACT
        gap_end = contacts.gap[touch] + 0.5 * h * U_end[touch, 0]
        return float(max(np.maximum(-gap_end, 0.0).max(initial=0.0),
                         np.abs(_constraint_violation(constraints, h)).max(initial=0.0)))

    def apply(self, b, rows, h, inv_mass, sums, schedule, worst):
        """Correct the held bodies b (positions at t + h, in place) with the rows this rank
        owns in sweep order (contacts at the end positions, then constraints); sums: the
        exact sums over ranks; schedule(ld, du): the sweep's order and exchange. Returns
        (sweeps, residual, worst)."""
        n = len(rows)
        constraint = rows.origin != CONTACT
        violation = np.zeros((n, 3))
        violation[~constraint, 0] = rows.gap[~constraint]
        violation[constraint] = _constraint_violation(rows.take(np.flatnonzero(constraint)), h)
        m = bilateral.components(rows.param)
        param = np.zeros((n, 2))                 # contacts frictionless, rigid: mu = c = 0
        param[constraint, 0] = m[constraint]
        Jinv = b.inverse_inertia_world()
        Jinv[inv_mass == 0.0] = 0.0              # kinematic bodies are not moved
        zero = np.zeros((len(b), 3))
        pld = LocalDynamics(rows, b, zero, zero, Jinv, h, inv_mass=inv_mass)
        pld.B, pld.kind, pld.param = violation, np.ascontiguousarray(rows.kind), param
        du = np.zeros((len(b), 6))
        report = self.solver.solve(Problem.coupled(pld, du, schedule(pld, du), sums=sums),
                                   np.zeros((n, 3)))
        b.x[:] += du[:, :3]
        b.q[:] = rotate_spatial(b.q, du[:, 3:], 1.0)
        return report.iterations, report.residual, worst


def _constraint_violation(rows, h):
    """The positional constraints' violations e(t+h) = h * shift (bilateral rows), (n, 3)."""
    m = bilateral.components(rows.param)
    return h * bilateral.shift(rows.param) * (np.arange(3)[None, :] < m[:, None])
