"""The local dynamics of one step: U = B + W R (seed 001), W = H M^-1 H^T.

W is available in two forms here: applied through the bodies (U = B + H du, du = M^-1 H^T R;
the Gauss-Seidel sweep's form, O(1) per relaxation) with its diagonal blocks W_aa; and as
block-CSR rows whose pattern is the linked-interaction map (built on first use). The parallel
layer makes it a PETSc matrix over the ranks (parallel/operators.py: the residual check, the
FCLIB export and the global Newton).
"""
import numpy as np

from .. import laws
from .operators import apply_H, apply_HT, block_matvec, delassus, local_blocks_of


class LocalDynamics:
    def __init__(self, contacts, bodies, v_free, w_free, Jinv, h, t=0.0, inv_mass=None,
                 wall=(None, None)):
        if len(contacts):
            self._assemble(contacts, bodies, v_free, w_free, Jinv, h, t, inv_mass, wall)
        else:
            self._empty(bodies, wall)

    def _empty(self, bodies, wall):
        """No rows (a ball in flight): the empty arrays _assemble makes, without its calls."""
        self.n, self.nbodies = 0, len(bodies)
        self.con = self.body = self.inc_body = np.zeros(0, np.int64)
        self.inc_ptr = np.zeros(1, np.int64)
        self.H, self.K, self.Wdiag = np.zeros((0, 3, 6)), np.zeros((0, 6, 3)), np.zeros((0, 3, 3))
        self._gid, self._rows, self.wall = bodies.gid, None, wall
        self.B_free, self.U_before, self.shift, self.B = (np.zeros((0, 3)) for _ in range(4))
        self.kind, self.param, self.mu = np.zeros(0, np.int8), np.zeros((0, 1)), np.zeros(0)

    def _assemble(self, contacts, bodies, v_free, w_free, Jinv, h, t, inv_mass, wall):
        nc = len(contacts)
        self.n = nc
        self.nbodies = len(bodies)
        inv_mass = 1.0 / bodies.mass if inv_mass is None else inv_mass    # 0: kinematic
        self._gid = bodies.gid
        self._rows = None
        # the incidences, K = M^-1 H^T, W's diagonal blocks, B = H u_free + each row's shift
        # from its law (impacts and closing gaps for contacts, targets and drift corrections
        # for joints), at the step's time t, and U(t) = H u(t): the relative velocity before
        # the step (the impact law's U_N^-, and the energy balance's work of the reactions,
        # R . (U(t) + U(t+h)) / 2)
        (self.con, self.body, self.H, self.inc_ptr, self.K, self.Wdiag, self.B_free,
         self.U_before) = local_blocks_of(contacts, bodies, inv_mass, Jinv, v_free, w_free)
        self.inc_body = self.body
        # wall: rheonomic rows' obstacle velocities (local frame) at t and t + h, or None:
        # U = H u - w, the velocity relative to a moving obstacle
        self.wall = wall
        if wall[1] is not None:
            self.B_free -= wall[1]
        U_before = self.U_before
        if wall[0] is not None:
            U_before -= wall[0]
        self.shift = laws.free_term(contacts, U_before, t, h)
        self.B = self.B_free + self.shift
        self.kind = np.ascontiguousarray(contacts.kind)
        self.param = laws.solve_params(contacts.kind, contacts.param)   # what the solves read
        self.mu = np.ascontiguousarray(contacts.param[:, 0])            # contacts' (FCLIB)

    @property
    def rows(self):
        """W as block CSR (indptr, indices, blocks, diag); the pattern is the linked map."""
        if self._rows is None:
            self._rows = delassus(self.con, self.body, self.H, self.K, self._gid, self.n)
        return self._rows

    indptr = property(lambda self: self.rows[0])
    indices = property(lambda self: self.rows[1])
    blocks = property(lambda self: self.rows[2])
    diag = property(lambda self: self.rows[3])

    def velocity_change(self, R):
        """du = M^-1 H^T R per body, (nbodies, 6): (linear, angular) world frame."""
        du = np.zeros((self.nbodies, 6))
        np.add.at(du, self.body, np.einsum("mkj,mj->mk", self.K, R[self.con]))
        return du

    @property
    def linked(self):
        """The linked-interaction map: contacts sharing a body with each contact (W's pattern)."""
        return self.indptr, self.indices

    def impulses(self, R):
        """H^T R per body: (impulse, angular impulse), world frame."""
        return apply_HT(self.con, self.body, self.H, R, self.nbodies)

    def velocity(self, R):
        """U = B_free + W R (the physical relative velocity at t+h, without the shifts)."""
        return self.B_free + self.matvec(R)

    def velocity_after(self, bodies):
        """U(t+h) = H u(t+h) (- w(t+h)) from the bodies' updated velocities (ghosts
        included)."""
        U = apply_H(self.con, self.body, self.H, bodies.v, bodies.w, self.n)
        return U if self.wall[1] is None else U - self.wall[1]

    def matvec(self, R):
        return block_matvec(self.indptr, self.indices, self.blocks, R)
