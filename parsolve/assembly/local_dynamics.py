"""The local dynamics of one step: U = B + W R (seed 001), with W also as a PETSc block matrix.

W is kept twice on purpose: as block-CSR numpy arrays, which the Gauss-Seidel kernel sweeps,
and as a PETSc BAIJ matrix (block size 3) on the run's communicator, with each rank owning the
rows of its contacts: the operator the residual check, the global Newton and the distributed
solvers apply.
"""
import numpy as np

from .operators import apply_H, apply_HT, delassus, incidences
from .petsc_delassus import delassus_matrix


class LocalDynamics:
    def __init__(self, contacts, bodies, v_free, w_free, Jinv, h, comm=None):
        nc = len(contacts)
        self.n = nc
        self.nbodies = len(bodies)
        self.con, self.body, self.H = incidences(contacts, bodies)
        inv_mass = 1.0 / bodies.mass
        (self.indptr, self.indices, self.blocks,
         self.diag) = delassus(self.con, self.body, self.H, bodies.gid, inv_mass, Jinv, nc)
        # B = H u_free; Newton's impact law and closing gaps enter through B's normal part:
        # the solver enforces U_N + e min(U_N(t), 0) + max(gap, 0)/h >= 0.
        self.B_free = apply_H(self.con, self.body, self.H, v_free, w_free, nc)
        U_before = apply_H(self.con, self.body, self.H, bodies.v, bodies.w, nc)
        self.shift = np.zeros((nc, 3))
        self.shift[:, 0] = contacts.e * np.minimum(U_before[:, 0], 0.0) \
            + np.maximum(contacts.gap, 0.0) / h
        self.B = self.B_free + self.shift
        self.mu = np.ascontiguousarray(contacts.mu)
        self.comm = comm
        self._petsc = None

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

    def matvec(self, R):
        out = np.zeros((self.n, 3))
        rows = np.repeat(np.arange(self.n), np.diff(self.indptr))
        np.add.at(out, rows, np.einsum("kij,kj->ki", self.blocks, R[self.indices]))
        return out

    def petsc(self):
        """W as a PETSc BAIJ matrix (block size 3) on the run's communicator."""
        if self._petsc is None:
            from ..petsc import PETSc

            comm = PETSc.COMM_SELF if self.comm is None else self.comm.petsc()
            self._petsc = delassus_matrix(self.indptr, self.indices, self.blocks, comm)
        return self._petsc

    def destroy(self):
        if self._petsc is not None:
            self._petsc.destroy()
            self._petsc = None
