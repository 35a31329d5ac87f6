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

from .. import laws
from ..errors import InputError
from . import kernels

GATHER_MAX = 30_000                  # unknowns: W and J met on rank 0 up to here (Workspace)
ETA_MAX = 0.1                        # the loosest Krylov tolerance (Eisenstat-Walker's cap)
LU_MAX_UNKNOWNS, LU_FALLBACK_MAX = 300_000, 1_000_000
MUMPS_FROM = 30_000
LU_RTOL = 1e-4                       # at most, GMRES on the factors of an earlier J
LU_REUSE_ITS = 10                    # refactor J when GMRES on old factors needs more
_MAX_IT, _NANORINF = -3, -9          # PETSc's KSP DIVERGED_MAX_IT, DIVERGED_NANORINF


class Workspace:
    """One Newton or interior-point solve's data: W's local block rows (global columns) and W
    as a PETSc Mat (problem.operator()), the problem's q, laws and sums, J's storage, W R and
    the linear solves (linear()), and a Gauss-Seidel fallback `sweep(R, k, counts)`.

    gather: on several ranks, up to this many unknowns over all ranks, W and J are met on
    rank 0 in the rows' canonical order (problem.canonical: parsolve.parallel.canonical) and
    W R and the linear solves are rank 0's, the vectors gathered and scattered: the same
    operations on the same numbers as on one rank, so the result does not depend on the rank
    count. Above, or for a problem without canonical keys, W and J stay distributed (MatMult
    and MUMPS over the ranks: equal to the one-rank result to the solves' tolerance only)."""

    def __init__(self, problem, gather=0, kept=None):
        """kept: a Kept whose PETSc objects this workspace reuses when W's pattern is the
        one they were made for (one rank, small problems), or None."""
        from ..platform.petsc import PETSc

        W, first, (indptr, indices, blocks) = problem.operator()
        self.W = W
        self.x = self.y = self.J = self.Wc = self.xc = self.yc = None
        self.rows = None                 # parallel.canonical.CanonicalRows when gathered
        self.kept = None                 # the Kept whose objects these are (not destroyed)
        self.csr = (indptr.astype(PETSc.IntType), indices.astype(PETSc.IntType))
        try:
            if W is None:                # one rank: W's rows are all of it
                self._single(kept, blocks)
            self._setup(problem, first, indptr, indices, blocks, gather)
        except BaseException:
            self.destroy()
            raise

    def _single(self, kept, blocks):
        """W and J on one rank from W's rows; from `kept` when it holds them for this
        pattern (their values replaced), else made (and given to `kept` when it takes them)."""
        from ..platform.petsc import PETSc

        csr, n = self.csr, len(self.csr[0]) - 1
        if kept is not None and kept.holds(csr):
            self.W, self.J, self.x, self.y = kept.W, kept.J, kept.x, kept.y
            self.kept = kept
            for M in (self.W, self.J):   # the values createBAIJ would have put there
                M.setValuesBlockedCSR(*csr, np.ascontiguousarray(blocks).reshape(-1))
                M.assemble()
            return
        self.W = _baij(csr, blocks, PETSc.COMM_SELF, n, n)
        self.J = _baij(csr, blocks, PETSc.COMM_SELF, n, n)
        self.x, self.y = self.W.createVecs()
        if kept is not None and kept.take(csr, self):
            self.kept = kept

    def _setup(self, problem, first, indptr, indices, blocks, gather):
        from ..platform.petsc import PETSc

        W = self.W
        self.q, self.sums = problem.B, problem.sums
        self.kind, self.param = problem.kind, problem.param

        def sweep(R, k, counts):
            problem.sync(R)
            problem.sweeps(R, k, counts)

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
        if self.x is None:
            self.x, self.y = W.createVecs()
        self.Jb = np.empty_like(blocks)
        # rows whose law reads a partner's normal impulse (laws.links: rolling rows, their
        # contact's): Phi_a's derivative C_a on it enters J's block (a, partner), which W's
        # pattern holds (the two rows share their bodies, so their owner)
        self.linked, self.partner = laws.links(self.kind, self.param)
        self.C = np.zeros((n, 3)) if len(self.linked) else None
        if len(self.linked):
            row = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
            key = row * self.n_global + indices
            link = self.linked * self.n_global + first + self.partner
            self.k_link = np.searchsorted(key, link)
            assert (key[self.k_link] == link).all()
        if W.getComm().getSize() > 1 and 3 * self.n_global <= gather:
            self.rows = problem.canonical(W, indptr, indices)
        if self.rows is None:
            # not W.duplicate(): its MatMult sums in another order, and on ill-conditioned J
            # (ILU factors ~1e32 on settled piles) GMRES then takes another path
            if self.J is None:
                self.J = _baij(self.csr, blocks, W.getComm(), n, self.n_global)
            return
        rows = self.rows                 # rank 0's own W and J, as one rank makes them
        Wb = rows.gather(blocks, blocks=True)

        def make():
            csr = (rows.indptr.astype(PETSc.IntType), rows.indices.astype(PETSc.IntType))
            self.J = _baij(csr, Wb, PETSc.COMM_SELF, rows.n_global, rows.n_global)
            self.Wc = _baij(csr, Wb, PETSc.COMM_SELF, rows.n_global, rows.n_global)
            self.xc, self.yc = self.Wc.createVecs()
            self.csr_root = csr

        rows.call(make)

    def apply(self, R):
        """W R, (n, 3)."""
        if self.rows is not None:
            X = self.rows.gather(R)
            if self.rows.root:
                self.xc.array[:] = X.reshape(-1)
                self.Wc.mult(self.xc, self.yc)
            return self.rows.scatter(self.yc.array.reshape(-1, 3) if self.rows.root else None)
        self.x.array[:] = R.reshape(-1)
        self.W.mult(self.x, self.y)
        return self.y.array.reshape(-1, 3).copy()

    def assemble_jacobian(self, A, B, alpha):
        """J = A + B (W + diag(alpha) I) into self.J (W's pattern, values replaced), plus the
        linked rows' C_a in the column of their partner's normal impulse."""
        kernels.jacobian_blocks(self.indptr, self.blocks, self.diag, A, B, alpha, self.Jb)
        if self.C is not None:
            self.Jb[self.k_link, :, 0] += self.C[self.linked]
        self.set_jacobian(self.Jb)

    def set_jacobian(self, Jb):
        """J's blocks (this rank's rows, W's pattern: (nnz, 3, 3)) replaced by Jb."""
        if self.rows is None:
            self.J.setValuesBlockedCSR(*self.csr, Jb.reshape(-1))
            self.J.assemble()
            return
        got = self.rows.gather(Jb, blocks=True)
        if self.rows.root:
            self.J.setValuesBlockedCSR(*self.csr_root, got.reshape(-1))
            self.J.assemble()

    def linear(self, kinds, krylov, events, package=None, pivoting=False):
        """The chain of linear solvers on J (LinearChain's arguments): a LinearSolve (the
        kept one when this workspace's objects are kept)."""
        if self.kept is not None:
            return self.kept.linear(self, kinds, krylov, events, package, pivoting)
        return LinearSolve(self, kinds, krylov, events, package, pivoting)

    def minimum(self, values):
        """The smallest of every rank's values (n,), each at most 1e300 (PETSc's minimum of a
        vector: exact, equal on every rank)."""
        self.x.array[:] = np.repeat(np.minimum(values, 1e300), 3)
        return self.x.min()[1]

    def destroy(self):
        mine = (self.Wc, self.xc, self.yc) if self.kept is not None else \
            (self.x, self.y, self.J, self.Wc, self.xc, self.yc, self.W)
        for obj in mine:
            if obj is not None:
                obj.destroy()


class Kept:
    """PETSc objects a solver keeps from one solve to the next on one rank: W and J (BAIJ,
    the pattern they were made for), W's vectors, and the chain of linear solvers on J with
    its vectors. A step whose W has the same pattern replaces their values and keeps the
    objects (a mechanism's pattern holds step after step): making and destroying them cost
    a small problem more than its solve. The LU is factored afresh at each solve's first
    linear solve (LinearChain.refresh), from the same ordering of the same pattern, so the
    iterates are those of new objects bit for bit. Problems above MUMPS_FROM unknowns keep
    nothing (their factors would stay in memory between steps)."""

    def __init__(self):
        self.csr = None
        self.W = self.J = self.x = self.y = None
        self.chain = self.lx = self.lrhs = None
        self.kinds = None

    def holds(self, csr):
        """Whether the kept W and J have the pattern csr (indptr, block columns)."""
        return self.csr is not None and all(map(np.array_equal, self.csr, csr))

    def take(self, csr, work):
        """Keep a workspace's new W, J and vectors for the pattern csr (releasing what was
        kept); returns whether they are kept."""
        if 3 * (len(csr[0]) - 1) > MUMPS_FROM:
            return False
        self.release()
        self.csr = tuple(a.copy() for a in csr)
        self.W, self.J, self.x, self.y = work.W, work.J, work.x, work.y
        return True

    def linear(self, work, kinds, krylov, events, package, pivoting):
        """The kept LinearSolve on work.J (a workspace of this Kept's objects) for these
        arguments: its chain made on first use, then refreshed."""
        key = (tuple(kinds), tuple(krylov), package, pivoting)
        if self.chain is None or self.kinds != key:
            self._release_chain()
            self.chain = LinearChain(work.J, kinds, krylov, events, package, pivoting)
            self.lx, self.lrhs = work.J.createVecs()
            self.kinds = key
        self.chain.events = events
        self.chain.refresh()
        return LinearSolve(work, kinds, krylov, events, kept=(self.chain, self.lx, self.lrhs))

    def _release_chain(self):
        for obj in (self.chain, self.lx, self.lrhs):
            if obj is not None:
                obj.destroy()
        self.chain = self.lx = self.lrhs = None
        self.kinds = None

    def release(self):
        """Destroy what is kept."""
        self._release_chain()
        for obj in (self.W, self.J, self.x, self.y):
            if obj is not None:
                obj.destroy()
        self.csr = None
        self.W = self.J = self.x = self.y = None


class LinearSolve:
    """J d = rhs on a Workspace's J by a LinearChain; with the workspace's rows met on rank 0,
    the chain runs there and its outcome and events reach every rank."""

    def __init__(self, work, kinds, krylov, events, package=None, pivoting=False, kept=None):
        """kept: a Kept's (chain, x, rhs) to solve with (not destroyed here), or None."""
        self.work, self.events = work, events
        self.kept = kept is not None
        self.chain = self.rhs = self.x = None
        if self.kept:
            self.chain, self.x, self.rhs = kept
        elif work.J is not None:
            self.chain = LinearChain(work.J, kinds, krylov, events, package, pivoting)
            self.x, self.rhs = work.J.createVecs()

    def solve(self, rhs, rtol):
        """(solved, KSP iterations, d (n, 3)) for the right-hand side rhs (n, 3); d holds the
        direction when solved."""
        rows = self.work.rows
        if rows is None:
            self.rhs.array[:] = rhs.reshape(-1)
            solved, its = self.chain.solve(self.rhs, self.x, rtol)
            return solved, its, self.x.array.reshape(-1, 3).copy()
        got = rows.gather(rhs)

        def run():
            self.rhs.array[:] = got.reshape(-1)
            return self.chain.solve(self.rhs, self.x, rtol) + (dict(self.events),)

        solved, its, events = rows.call(run)
        self.events.update(events)
        return solved, its, rows.scatter(self.x.array.reshape(-1, 3) if rows.root else None)

    def refresh(self):
        """J changed entirely: LinearChain.refresh."""
        if self.chain is not None:
            self.chain.refresh()

    def destroy(self):
        if self.kept:
            return
        for obj in (self.chain, self.x, self.rhs):
            if obj is not None:
                obj.destroy()


def _baij(csr, blocks, comm, n, n_global):
    """A BAIJ matrix (block size 3) of n local block rows (n_global over comm) given as
    block CSR (indptr, global block columns) and blocks."""
    from ..platform.petsc import PETSc

    M = PETSc.Mat().createBAIJ(
        size=((3 * n, 3 * n_global), (3 * n, 3 * n_global)), bsize=3, comm=comm,
        csr=csr + (np.ascontiguousarray(blocks).reshape(-1),))
    M.assemble()
    return M


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
        from ..platform.petsc import PETSc

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
