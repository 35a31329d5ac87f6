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

from .assembly import LocalDynamics
from .dynamics.rotation import rotate_spatial
from .interactions import Interactions
from .joints import POSITIONAL
from .solvers import GaussSeidel, Problem


class Projection:
    """threshold [m]: project when a violation exceeds it (default: 1e-4 times the smallest
    body radius): the velocity-level step conserves a pendulum's energy to 1e-4 over 20 periods,
    projecting at every step dissipates it (the next step's constraint then removes the normal
    part of a velocity that was tangent to the old position); tol: the residual of the
    position problem (relative, as a step's); max_iter: its sweep cap."""

    def __init__(self, threshold=None, tol=1e-10, max_iter=1000):
        self.threshold = threshold
        self.solver = GaussSeidel(tol=tol, max_iter=max_iter)

    def apply(self, b, contacts, U_end, joints, t, h, inv_mass, own, domain, comm,
              threshold, detect, moving):
        """Correct the held bodies b (positions at t + h, in place). contacts: the step's rows
        with U_end their velocities at t + h; own(rows): the rows this rank owns in sweep
        order, the colours and the cells (Stepper._own); threshold: self.threshold's default;
        detect(extra): the contacts at b's positions within the step's margin + extra;
        moving(rows): rows without those between two driven sides. Returns (sweeps,
        residual, the largest violation before, over all ranks)."""
        threshold = self.threshold if self.threshold is not None else threshold
        touch = contacts.k2 >= 0                                 # contacts, not joints
        gap_end = contacts.gap[touch] + 0.5 * h * U_end[touch, 0]
        joint_rows = moving(joints.rows(b, t, h, types=POSITIONAL)[0])
        worst = comm.max(float(max(np.maximum(-gap_end, 0.0).max(initial=0.0),
                                   np.abs(_joint_violation(joint_rows, h)).max(initial=0.0))))
        if worst <= threshold:
            return 0, 0.0, worst
        # the contacts at the end positions (exact gaps) within twice the worst violation: a
        # correction that large reaches pairs the step's margin did not see (pushing two
        # voussoirs apart closes the joints beyond them)
        rows, colours, cells = own(Interactions.concat([detect(2.0 * worst), joint_rows]))
        n = len(rows)
        joint = rows.k2 < 0
        violation = np.zeros((n, 3))
        violation[~joint, 0] = rows.gap[~joint]
        violation[joint] = _joint_violation(rows.take(np.flatnonzero(joint)), h)
        m = rows.param[:, 0].astype(int)
        param = np.zeros((n, 1))                 # contacts frictionless: mu = 0
        param[joint, 0] = m[joint]
        Jinv = b.inverse_inertia_world()
        Jinv[inv_mass == 0.0] = 0.0              # kinematic bodies are not moved
        zero = np.zeros((len(b), 3))
        pld = LocalDynamics(rows, b, zero, zero, Jinv, h, comm, inv_mass=inv_mass)
        pld.B, pld.kind, pld.param = violation, np.ascontiguousarray(rows.kind), param
        du = np.zeros((len(b), 6))
        schedule = domain.schedule(b, pld.inc_body, pld.con, colours, cells, du)
        report = self.solver.solve(Problem.coupled(pld, du, schedule, sums=domain.sums),
                                   np.zeros((n, 3)))
        pld.destroy()
        b.x[:] += du[:, :3]
        b.q[:] = rotate_spatial(b.q, du[:, 3:], 1.0)

        return report.iterations, report.residual, worst


def _joint_violation(rows, h):
    """The positional joints' violations e(t+h) = h * shift (parsolve/joints.py), (n, 3)."""
    m = rows.param[:, 0].astype(int)
    return h * rows.param[:, 1:4] * (np.arange(3)[None, :] < m[:, None])
