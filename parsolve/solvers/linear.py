"""The linear algebra of the global solvers (Newton, the interior point): W and J as PETSc
matrices over the ranks, and the chain of PETSc solvers for J d = rhs.

Linear solves cannot fail silently. J d = -Phi is solved by a chain of PETSc solvers tried in
order until one succeeds ("lu": a direct LU by MUMPS, any rank count; "gmres": GMRES with the
3 x 3 point-block Jacobi preconditioner, right-preconditioned, to an Eisenstat-Walker
tolerance). linear="auto" chooses LU first up to LU_MAX_UNKNOWNS unknowns over all ranks,
GMRES first above; the other is the fallback (LU only below LU_FALLBACK_MAX unknowns). A solve
fails when PETSc reports divergence (a failed preconditioner or factorisation, a breakdown) or
the direction is not finite; a GMRES that reaches its iteration cap returns its iterate and is
counted as "ksp_capped". Every such event is counted in the report's `events` (names in
`event_names`), equal on every rank: all decisions read PETSc's reductions or sums that are
exact over ranks, so every rank takes the same branches.

PETSc options: the first solver of the chain reads the unprefixed options of the PETSc
database (`-ksp_type`, `-pc_type`, `-ksp_gmres_restart`, `-ksp_max_it`, `-ksp_monitor`,
`-ksp_converged_reason`, ...; pass them with PARSOLVE_PETSC_OPTIONS="-pc_type ilu"), after
the defaults set here; the fallbacks read none. An explicit `-ksp_rtol` replaces the adaptive
(Eisenstat-Walker) tolerance.
"""
import functools
import math

import numpy as np

from ..errors import InputError
from . import kernels

ETA_MAX = 0.1                        # the loosest Krylov tolerance (Eisenstat-Walker's cap)
LU_MAX_UNKNOWNS, LU_FALLBACK_MAX = 300_000, 1_000_000
MUMPS_FROM = 30_000
LU_RTOL = 1e-4                       # at most, GMRES on the factors of an earlier J
LU_REUSE_ITS = 10                    # refactor J when GMRES on old factors needs more
_MAX_IT, _NANORINF = -3, -9          # PETSc's KSP DIVERGED_MAX_IT, DIVERGED_NANORINF


class Workspace:
    """One Newton solve's data: W's local block rows (global columns) and W as a PETSc Mat,
    the problem's q, laws and sums, J's storage, and a Gauss-Seidel fallback
    `sweep(R, k, counts)`."""

    def __init__(self, W, indptr, indices, blocks, first, problem):
        from ..petsc import PETSc

        self.W, self.q, self.sums = W, problem.B, problem.sums
        self.kind, self.param = problem.kind, problem.param

        def sweep(R, k, counts):
            problem.sync(R)
            for _ in range(k):
                problem.sweep(R, counts)

        self.sweep = sweep
        self.indptr, self.indices, self.blocks = indptr, indices, blocks
        n = len(self.q)
        self.diag = np.flatnonzero(indices == first + np.repeat(np.arange(n), np.diff(indptr)))
        if len(self.diag) != n:
            raise RuntimeError("W lacks a diagonal block")
        Wd = blocks[self.diag]
        self.rho_n = 1.0 / Wd[:, 0, 0]
        self.rho_t = 2.0 / (Wd[:, 1, 1] + Wd[:, 2, 2])
        self.scale = np.trace(Wd, axis1=1, axis2=2) / 3.0     # alpha = sigma * scale
        self.n_global = W.getSize()[0] // 3
        self.x, self.y = W.createVecs()
        self.Jb = np.empty_like(blocks)
        n_global = W.getSize()[0] // 3
        self.csr = (indptr.astype(PETSc.IntType), indices.astype(PETSc.IntType))
        # not W.duplicate(): its MatMult sums in another order, and on ill-conditioned J
        # (ILU factors ~1e32 on settled piles) GMRES then takes another path
        self.J = PETSc.Mat().createBAIJ(
            size=((3 * n, 3 * n_global), (3 * n, 3 * n_global)), bsize=3, comm=W.getComm(),
            csr=self.csr + (blocks.reshape(-1),))
        self.J.assemble()

    def apply(self, R):
        """W R, (n, 3)."""
        self.x.array[:] = R.reshape(-1)
        self.W.mult(self.x, self.y)
        return self.y.array.reshape(-1, 3).copy()

    def assemble_jacobian(self, A, B, alpha):
        """J = A + B (W + diag(alpha) I) into self.J (W's pattern, values replaced)."""
        kernels.jacobian_blocks(self.indptr, self.blocks, self.diag, A, B, alpha, self.Jb)
        self.J.setValuesBlockedCSR(*self.csr, self.Jb.reshape(-1))
        self.J.assemble()

    def destroy(self):
        for obj in (self.x, self.y, self.J):
            obj.destroy()



class LinearChain:
    """J d = rhs by PETSc solvers tried in order until one succeeds (module docstring); each
    built when first needed, the first from the PETSc options database. Counts its events
    into `events` and returns the KSP iterations it spent."""

    def __init__(self, J, kinds, krylov, events, package=None, pivoting=False):
        self.J, self.kinds, self.krylov, self.events = J, kinds, krylov, events
        self.package = package           # the LU's (None: lu_package's choice)
        self.pivoting = pivoting         # MUMPS: room for delayed pivots, null pivots kept
        self.ksps = [None] * len(kinds)
        self.fixed_rtol = None
        self.factored = False            # the LU solver holds factors of an earlier J

    def solve(self, rhs, x, rtol):
        """(solved, KSP iterations); x holds the direction when solved."""
        its = 0
        for i, kind in enumerate(self.kinds):
            if i:
                self.events[f"{kind}_fallback"] += 1
            ksp = self._ksp(i)
            if kind == "lu":                   # as exact as LU alone: J is near singular
                reason, k = self._factored(ksp, rhs, x, min(rtol, LU_RTOL))
            else:
                reason, k = run_ksp(ksp, rhs, x, self.fixed_rtol or rtol)
            its += k
            if reason > 0:
                return True, its
            if reason == _MAX_IT and kind == "gmres":
                self.events["ksp_capped"] += 1               # GMRES's iterate: still a direction
                return True, its
            self.events["ksp_failed"] += 1
        return False, its

    def _factored(self, ksp, rhs, x, rtol):
        """GMRES preconditioned by the LU factors of an earlier J (a chord: J changes little
        between Newton steps, the factors are the cost), refactored when that takes more
        than LU_REUSE_ITS iterations or fails: near the solution one factorisation serves
        many steps."""
        pc = ksp.getPC()
        fresh = not self.factored                        # PCSetUp factors the current J
        reason, its = run_ksp(ksp, rhs, x, rtol)
        if not fresh and not (reason > 0 and its <= LU_REUSE_ITS):
            pc.setReusePreconditioner(False)             # factor the current J
            reason, k = run_ksp(ksp, rhs, x, rtol)
            its += k
            fresh = True
        self.events["lu_factorisations"] += fresh
        pc.setReusePreconditioner(True)
        self.factored = reason > 0
        return reason, its

    def refresh(self):
        """J changed entirely (an interior-point iteration): the next LU solve factors it
        afresh instead of trying the old factors first."""
        for kind, ksp in zip(self.kinds, self.ksps):
            if kind == "lu" and ksp is not None:
                ksp.getPC().setReusePreconditioner(False)
        self.factored = False

    def _ksp(self, i):
        if self.ksps[i] is None:
            self.ksps[i] = self._make(self.kinds[i], options=(i == 0))
        return self.ksps[i]

    def _make(self, kind, options):
        from ..petsc import PETSc

        ksp = PETSc.KSP().create(comm=self.J.getComm())
        ksp.setOperators(self.J)
        pc = ksp.getPC()
        ksp_type, pc_type = self.krylov if kind == "gmres" else ("gmres", "lu")
        ksp.setType(ksp_type)
        pc.setType(pc_type)
        ksp.setPCSide(PETSc.PC.Side.RIGHT)
        ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
        if ksp_type == "gmres":
            ksp.setGMRESRestart(100)
        ksp.setTolerances(rtol=ETA_MAX, atol=0.0, max_it=500 if kind == "gmres" else
                          2 * LU_REUSE_ITS)
        if kind == "lu":
            package = self.package or lu_package(self.J.getComm().getSize(),
                                                  self.J.getSize()[0])
            pc.setFactorSolverType(package)
            if package == "petsc":
                pc.setFactorOrdering("nd")                # 3-4x faster than MUMPS on a wall
            else:
                pc.setFactorSetUpSolverType()
                pc.getFactorMatrix().setMumpsIcntl(7, 5)  # METIS: 1.4x faster than AMF
                if self.pivoting:                         # ICNTL(14): 100 % more work
                    pc.getFactorMatrix().setMumpsIcntl(14, 100)   # space (INFOG(1) -9
                    pc.getFactorMatrix().setMumpsIcntl(24, 1)     # otherwise); null pivots
        if options:
            try:
                ksp.setFromOptions()
            except PETSc.Error as exc:
                ksp.destroy()
                raise InputError(f"SemismoothNewton: bad PETSc option ({exc})") from None
            opts = PETSc.Options()
            if opts.hasName("ksp_rtol"):
                self.fixed_rtol = opts.getReal("ksp_rtol")
            if ksp.getPC().getType() != "lu":
                self.kinds = ("gmres",) + tuple(self.kinds[1:])   # no factors to reuse
        return ksp

    def destroy(self):
        for ksp in self.ksps:
            if ksp is not None:
                ksp.destroy()



def run_ksp(ksp, rhs, x, rtol):
    """One KSP solve to rtol: (PETSc's converged reason, iterations), the reason
    DIVERGED_NANORINF when x is not finite (a global norm: every rank agrees)."""
    ksp.setTolerances(rtol=rtol)
    ksp.solve(rhs, x)
    reason = ksp.getConvergedReason()
    return reason if math.isfinite(x.norm()) else _NANORINF, ksp.getIterationNumber()



def lu_package(ranks, unknowns):
    """PETSc's own LU on one rank up to MUMPS_FROM unknowns (BAIJ block kernels, nested
    dissection: 3-4 times faster than MUMPS on a brick wall's dense W), MUMPS above (4 times
    faster on a 23,000-contact pile) and on more ranks (Debian's PETSc has it; it takes BAIJ
    at any rank count, SuperLU_dist only AIJ)."""
    return "petsc" if ranks == 1 and unknowns <= MUMPS_FROM else "mumps"



@functools.lru_cache(maxsize=None)
def type_names(kind):
    """The names a PETSc type class lists (PETSc.KSP.Type, PETSc.PC.Type), read once."""
    return frozenset(v for k, v in vars(kind).items() if k.isupper() and isinstance(v, str))
