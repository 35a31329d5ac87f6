"""Global semismooth Newton on the Alart-Curnier function, over PETSc; and the hybrid solver.

Per contact a, with u = W r + q, normal first and rho_N, rho_T > 0 (Alart and Curnier 1991):

    Phi_N = r_N - max(0, r_N - rho_N u_N)
    Phi_T = r_T - P_D(r_T - rho_T u_T),   D the disc of radius mu max(0, r_N - rho_N u_N).

Phi(r) = 0 is Signorini-Coulomb's law, the same solution set as the De Saxce residual of
DESIGN.md section 2 (which is what every report states). rho is taken from each contact's
diagonal block, rho_N = 1 / W_NN and rho_T = 2 / (W_T1T1 + W_T2T2), so Phi has the units of r
and nobody tunes it. The generalised Jacobian is J = A + B W with A = dPhi/dr, B = dPhi/du
3 x 3 block diagonal; J is assembled as a PETSc BAIJ matrix (block size 3) with W's pattern, so
any PETSc solver applies to it. W may be unsymmetric.

Proximal point (Acary, Bremond and Huber 2018: on rigid sets only the proximal-point Newton
solved everything). W is singular where contacts outnumber the bodies' freedoms (four corner
contacts per box face, crystal beds), and so is J on sticking contacts. Newton therefore solves
a sequence of regularised problems u = W r + q + alpha (r - r_k) around an anchor r_k, with
alpha_a = sigma w_a (w_a the mean diagonal of W_aa, sigma dimensionless): J + alpha B is
nonsingular, and its solution is a point where the original residual is O(sigma |r - r_k|).
sigma follows the residual (sigma = min(SIGMA_MAX, SIGMA_C err), none below SIGMA_MIN), so
Newton is pure near the solution and converges superlinearly there. An inner loop takes Newton
steps on one regularised problem until its merit falls to KAPPA^2 of the anchor's, then moves
the anchor to the iterate. A step whose line search fails raises sigma tenfold (the floor
decays tenfold per anchor afterwards); at SIGMA_MAX, Gauss-Seidel sweeps are taken instead.

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

Line search: Armijo backtracking on the merit 1/2 |Phi|^2 of the regularised problem,
monotone within one anchor by default; memory = M > 1 makes it non-monotone (Grippo, Lampariello
and Lucidi 1986: the reference is the largest merit of the anchor's last M iterates). An earlier
non-monotone reference across anchors let Newton cycle between active sets on settled piles.
merit="fb" takes the steps on a second merit instead, Fischer-Burmeister's 1/2 |phi|^2 of the
cones' complementarity form (Fukushima, Luo and Tseng 2002; Siconos' FischerBurmeister
solvers), continuously differentiable where Alart-Curnier's has kinks at the stick-slip and
contact-separation switches: psi(t) <= reference - sigma t psi(0).

PETSc options: the first solver of the chain reads the unprefixed options of the PETSc
database (`-ksp_type`, `-pc_type`, `-ksp_gmres_restart`, `-ksp_max_it`, `-ksp_monitor`,
`-ksp_converged_reason`, ...; pass them with PARSOLVE_PETSC_OPTIONS="-pc_type ilu"), after
the defaults set here; the fallbacks read none. An explicit `-ksp_rtol` replaces the adaptive
(Eisenstat-Walker) tolerance.
"""
import functools
import math
import time

import numpy as np

from .. import laws
from ..errors import InputError
from . import kernels
from .gauss_seidel import CODE_NAMES, NCODES, GaussSeidel, SolveReport
from .residual import residual_from_parts
from .soc import desaxce, fischer_burmeister

_GAMMA, _ETA_MAX, _ETA_MIN = 0.9, 0.1, 1e-12          # Eisenstat-Walker, choice 2
_SIGMA, _MIN_STEP = 1e-4, 2.0 ** -12                   # Armijo line search
# proximal weight sigma (dimensionless, relative to W's diagonal): SIGMA_C times the residual,
# zero below SIGMA_MIN, at most SIGMA_MAX (J + alpha B is then B-dominated: a short step)
SIGMA_C, SIGMA_MIN, SIGMA_MAX, SIGMA_UP, SIGMA_RAISED = 1e-2, 1e-6, 1e4, 10.0, 1e-5
KAPPA, INNER_MAX = 0.1, 20           # inner loop: merit to KAPPA^2 of the anchor's, or steps
LU_MAX_UNKNOWNS, LU_FALLBACK_MAX = 300_000, 1_000_000
MUMPS_FROM = 30_000
LU_RTOL = 1e-4                       # at most, GMRES on the factors of an earlier J
LU_REUSE_ITS = 10                    # refactor J when GMRES on old factors needs more
PROBE_STEPS, PROBE_CONTRACTION = 10, 0.1   # NewtonProbe: steps, residual ratio per step
SWEEPS_PER_STEP = 10                 # Hybrid: Gauss-Seidel sweeps per Newton step it forgoes
_MAX_IT, _NANORINF = -3, -9          # PETSc's KSP DIVERGED_MAX_IT, DIVERGED_NANORINF
LINEAR_SOLVERS = ("auto", "lu", "gmres")
MERITS = ("ac", "fb")                # the line search's: Alart-Curnier's, Fischer-Burmeister's
NEWTON_EVENTS = ("ksp_failed", "ksp_capped", "lu_fallback", "gmres_fallback", "gs_fallback",
                 "lu_factorisations", "proximal_steps", "sigma_raised")


class _Workspace:
    """One Newton solve's data: W's local block rows (global columns) and W as a PETSc Mat,
    the problem's q, laws and sums, J's storage, and a Gauss-Seidel fallback
    `sweep(R, k, counts)`."""

    def __init__(self, W, indptr, indices, blocks, first, problem):
        from ..platform.petsc import PETSc

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
        # rows whose law reads a partner's normal impulse (laws.links: rolling rows, their
        # contact's): Phi_a's derivative C_a on it enters J's block (a, partner), which W's
        # pattern holds (the two rows share their bodies)
        self.linked, partner = laws.links(self.kind, self.param)
        self.partner = partner
        self.C = np.zeros((n, 3)) if len(self.linked) else None
        if len(self.linked):
            row = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
            key = row * self.n_global + indices
            self.k_link = np.searchsorted(key, self.linked * self.n_global + first + partner)
            assert (key[self.k_link] == self.linked * self.n_global + first + partner).all()
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
        """J = A + B (W + diag(alpha) I) into self.J (W's pattern, values replaced), plus the
        linked rows' C_a in the column of their partner's normal impulse."""
        kernels.jacobian_blocks(self.indptr, self.blocks, self.diag, A, B, alpha, self.Jb)
        if self.C is not None:
            self.Jb[self.k_link, :, 0] += self.C[self.linked]
        self.J.setValuesBlockedCSR(*self.csr, self.Jb.reshape(-1))
        self.J.assemble()

    def destroy(self):
        for obj in (self.x, self.y, self.J):
            obj.destroy()


class _LinearChain:
    """J d = rhs by PETSc solvers tried in order until one succeeds (module docstring); each
    built when first needed, the first from the PETSc options database. Counts its events
    into `events` and returns the KSP iterations it spent."""

    def __init__(self, J, kinds, krylov, events, package=None, pivoting=False):
        self.J, self.kinds, self.krylov, self.events = J, kinds, krylov, events
        self.package = package           # the LU's (None: _lu_package's choice)
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
                reason, k = _run(ksp, rhs, x, self.fixed_rtol or rtol)
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
        reason, its = _run(ksp, rhs, x, rtol)
        if not fresh and not (reason > 0 and its <= LU_REUSE_ITS):
            pc.setReusePreconditioner(False)             # factor the current J
            reason, k = _run(ksp, rhs, x, rtol)
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
        ksp.setTolerances(rtol=_ETA_MAX, atol=0.0, max_it=500 if kind == "gmres" else
                          2 * LU_REUSE_ITS)
        if kind == "lu":
            package = self.package or _lu_package(self.J.getComm().getSize(),
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


def _run(ksp, rhs, x, rtol):
    """One KSP solve to rtol: (PETSc's converged reason, iterations), the reason
    DIVERGED_NANORINF when x is not finite (a global norm: every rank agrees)."""
    ksp.setTolerances(rtol=rtol)
    ksp.solve(rhs, x)
    reason = ksp.getConvergedReason()
    return reason if math.isfinite(x.norm()) else _NANORINF, ksp.getIterationNumber()


def _lu_package(ranks, unknowns):
    """PETSc's own LU on one rank up to MUMPS_FROM unknowns (BAIJ block kernels, nested
    dissection: 3-4 times faster than MUMPS on a brick wall's dense W), MUMPS above (4 times
    faster on a 23,000-contact pile) and on more ranks (Debian's PETSc has it; it takes BAIJ
    at any rank count, SuperLU_dist only AIJ)."""
    return "petsc" if ranks == 1 and unknowns <= MUMPS_FROM else "mumps"


class SemismoothNewton:
    """Global semismooth Newton on the Alart-Curnier function (see the module docstring).

    tol: the DESIGN.md residual to reach; max_iter: Newton steps (counting every inner
    step); linear: the linear solvers' chain, "auto" (LU up to LU_MAX_UNKNOWNS unknowns, GMRES
    above), "lu" (LU, then GMRES) or "gmres" (GMRES, then LU below LU_FALLBACK_MAX unknowns);
    ksp_type / pc_type: the Krylov solver's (GMRES right-preconditioned; "pbjacobi" inverts the
    3 x 3 diagonal blocks; "bjacobi" is ILU(0) on each rank's block, which fails on rigid sets);
    proximal: regularise around the iterate (module docstring; False: sigma stays 0 until a
    line search fails); warm_sweeps: Gauss-Seidel sweeps from the given R before the first
    Newton step; fallback_sweeps: Gauss-Seidel sweeps taken when a step fails at SIGMA_MAX;
    memory: the line search's reference, the largest merit of the last `memory` iterates of
    the anchor (1: monotone Armijo); merit: the line search's, "ac" (Alart-Curnier's, whose
    function Newton solves) or "fb" (Fischer-Burmeister's on the cones' complementarity form,
    parsolve.solvers.soc; contacts only: smooth where Alart-Curnier's is not, it takes half
    the steps on stacks of boxes and more on some mixed sets: bench/README.md).
    The report's `events` counts the names of `event_names` over the solve.
    """

    name = "newton"
    event_names = NEWTON_EVENTS

    def __init__(self, tol=1e-10, max_iter=100, linear="auto", ksp_type="gmres",
                 pc_type="pbjacobi", proximal=True, fallback_sweeps=5, warm_sweeps=10,
                 memory=1, merit="ac"):
        from ..platform.petsc import PETSc

        if not (isinstance(tol, (int, float)) and tol > 0 and math.isfinite(tol)):
            raise InputError(f"SemismoothNewton: tol must be a finite number > 0, got {tol!r}")
        if int(max_iter) < 1:
            raise InputError(f"SemismoothNewton: max_iter must be >= 1, got {max_iter!r}")
        if int(warm_sweeps) < 0:
            raise InputError(f"SemismoothNewton: warm_sweeps must be >= 0, got {warm_sweeps!r}")
        if int(fallback_sweeps) < 1:
            raise InputError("SemismoothNewton: fallback_sweeps must be >= 1, got "
                             f"{fallback_sweeps!r}")
        if int(memory) < 1:
            raise InputError(f"SemismoothNewton: memory must be >= 1, got {memory!r}")
        if merit not in MERITS:
            raise InputError(f"SemismoothNewton: unknown merit {merit!r}: choose one of "
                             f"{', '.join(MERITS)}")
        if linear not in LINEAR_SOLVERS:
            raise InputError(f"SemismoothNewton: unknown linear solver {linear!r}: choose one "
                             f"of {', '.join(LINEAR_SOLVERS)}")
        for what, value, kind in (("ksp_type", ksp_type, PETSc.KSP.Type),
                                  ("pc_type", pc_type, PETSc.PC.Type)):
            if value not in _type_names(kind):
                raise InputError(f"SemismoothNewton: unknown {what} {value!r}")
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.linear, self.ksp_type, self.pc_type = linear, ksp_type, pc_type
        self.proximal = bool(proximal)
        self.fallback_sweeps = int(fallback_sweeps)
        self.warm_sweeps = int(warm_sweeps)
        self.memory = int(memory)
        self.merit = merit
        self.contraction = None                 # NewtonProbe's

    def chain(self, unknowns):
        """The linear solvers tried in order on a J of `unknowns` rows over all ranks."""
        first = self.linear if self.linear != "auto" else (
            "lu" if unknowns <= LU_MAX_UNKNOWNS else "gmres")
        if first == "lu":
            return ("lu", "gmres")
        return ("gmres", "lu") if unknowns <= LU_FALLBACK_MAX else ("gmres",)

    def solve(self, problem, R):
        """Solve `problem` (a Problem) in place for R (n, 3), warm-started from it. A problem
        through the bodies ends with du = M^-1 H^T R and the residual as the sweeps state it.
        Returns a SolveReport."""
        W, first, (indptr, indices, blocks) = problem.operator()
        try:
            work = _Workspace(W, indptr, indices, blocks, first, problem)
            try:
                report = self._solve(work, R)
            finally:
                work.destroy()
        finally:
            W.destroy()
        if problem.restates:           # the residual as the sweeps state it, from the bodies
            problem.sync(R)
            report.residual = problem.residual(R)
            report.converged = report.residual <= self.tol
        return report

    # -- Newton ------------------------------------------------------------------------------
    def _solve(self, p, R):
        """Proximal-point Newton from R on problem p (module docstring): a SolveReport with
        events, ksp_iterations and fallbacks."""
        t0 = time.perf_counter()
        report = SolveReport(self.name)
        events = dict.fromkeys(self.event_names, 0)
        counts = np.zeros(NCODES, np.int64)
        linear = _LinearChain(p.J, self.chain(3 * p.n_global), (self.ksp_type, self.pc_type),
                              events)
        d_vec, rhs = p.J.createVecs()
        n = len(R)
        Phi, slopes = np.empty((n, 3)), np.empty((n, 2))        # the kernels write into these
        A, Bj = np.empty((n, 3, 3)), np.empty((n, 3, 3))
        ksp_its = 0
        if self.merit == "fb":
            try:
                p.mu = laws.cones(p.kind, p.param)
            except ValueError as exc:
                raise InputError(f"SemismoothNewton: merit 'fb': {exc}; use merit 'ac' for "
                                 "such rows") from None
        try:
            kernels.project_admissible(p.kind, p.param, R)       # start admissible
            if self.warm_sweeps:
                p.sweep(R, self.warm_sweeps, counts)
            U = p.apply(R) + p.q
            err, _, theta, _ = self._measure(p, R, U, U)
            eta, floor, it = _ETA_MAX, 0.0, 0
            while err > self.tol and it < self.max_iter:
                sigma = max(self._sigma(err), floor)            # a new anchor: R
                alpha = sigma * p.scale
                events["proximal_steps"] += sigma > 0.0
                V, start = U, theta                             # V = U + alpha (R - anchor)
                current = start                                 # the regularised merit at R
                recent = [self._fb_merit(p, R, V) if self.merit == "fb" else start]
                for inner in range(INNER_MAX):
                    it += 1
                    kernels.alart_curnier(p.kind, p.param, R, V, p.rho_n, p.rho_t, Phi, A, Bj,
                                          p.C)
                    p.assemble_jacobian(A, Bj, alpha)
                    rhs.array[:] = -Phi.reshape(-1)
                    solved, k = linear.solve(rhs, d_vec, eta)
                    ksp_its += k
                    found = solved and self._step(p, R, U, V, alpha, recent, d_vec,
                                                  Phi, A, Bj, slopes)
                    if not found:
                        break
                    last = err
                    R[:], U, V, err, reg, theta, ls = found
                    eta = _forcing(eta, reg / current if current > 0 else 0.0)
                    current = reg
                    recent = (recent + [ls])[-self.memory:]
                    if err <= self.tol or it >= self.max_iter or reg <= KAPPA ** 2 * start:
                        break
                    if self.contraction and it > 1 and err > self.contraction * last:
                        found = None                            # a probe: too slow
                        break
                if self.contraction and not found:              # a probe ends at a failure
                    break
                if found or inner:                              # progress: a new anchor
                    floor = floor / SIGMA_UP if floor / SIGMA_UP >= SIGMA_RAISED else 0.0
                elif sigma < SIGMA_MAX:                         # regularise more
                    events["sigma_raised"] += 1
                    floor = min(max(SIGMA_UP * sigma, SIGMA_RAISED), SIGMA_MAX)
                else:                                           # no descent even then
                    events["gs_fallback"] += 1
                    p.sweep(R, self.fallback_sweeps, counts)
                    U = p.apply(R) + p.q
                    err, _, theta, _ = self._measure(p, R, U, U)
                    eta = _ETA_MAX
            report.iterations, report.residual = it, err
        finally:
            for obj in (linear, d_vec, rhs):
                obj.destroy()
        report.converged = report.residual <= self.tol
        report.local = {name: int(c) for name, c in zip(CODE_NAMES, counts) if c}
        report.events = {k: int(v) for k, v in events.items()}
        report.ksp_iterations, report.fallbacks = ksp_its, events["gs_fallback"]
        report.newton_iterations = report.iterations
        report.stages = [("newton", report.iterations, ksp_its)]
        report.seconds = time.perf_counter() - t0
        return report

    def _sigma(self, err):
        """The proximal weight the residual calls for (0: pure Newton)."""
        return min(SIGMA_MAX, max(SIGMA_MIN, SIGMA_C * err)) if self.proximal else 0.0

    def _step(self, p, R, U, V, alpha, recent, d_vec, Phi, A, Bj, slopes):
        """The line search along the direction in d_vec from the line search's merits of the
        anchor's `recent` iterates (the last at R): _search's point, or None."""
        d = d_vec.array.reshape(-1, 3).copy()
        Wd = p.apply(d)
        Vd = Wd + alpha[:, None] * d
        if self.merit == "fb":
            return self._search_fb(p, R, U, V, d, Wd, Vd, recent)
        kernels.slope_parts(Phi, A, Bj, d, Vd, slopes)
        if p.C is not None:                       # the linked rows' C_a d_partner,N too
            a = p.linked
            s = slopes[a, 0] - slopes[a, 1] + np.sum(Phi[a] * p.C[a], axis=1) * d[p.partner, 0]
            slopes[a, 0], slopes[a, 1] = np.maximum(s, 0.0), np.maximum(-s, 0.0)
        found = self._search(p, R, U, V, d, Wd, Vd, max(recent), slopes)
        return found and found + (found[4],)

    @staticmethod
    def _fb_merit(p, R, V):
        """Fischer-Burmeister's merit 1/2 |phi_FB|^2 at (R, V), over all ranks."""
        x, y = desaxce(R, V, p.mu, p.rho_t)
        return 0.5 * p.sums(np.sum(fischer_burmeister(x, y) ** 2, axis=1)[:, None])[0]

    def _search_fb(self, p, R, U, V, d, Wd, Vd, recent):
        """Backtracking along d on Fischer-Burmeister's merit psi of the regularised problem:
        the first t = 1, 1/2, ... (down to _MIN_STEP) with psi(t) <= max(recent) - sigma t
        psi(0); as _search's point with psi(t) last, or None."""
        t = 1.0
        while t >= _MIN_STEP:
            Rt, Vt = R + t * d, V + t * Vd
            value = self._fb_merit(p, Rt, Vt)
            if value <= max(recent) - _SIGMA * t * recent[-1]:
                Ut = U + t * Wd
                return (Rt, Ut, Vt) + self._measure(p, Rt, Ut, Vt)[:3] + (value,)
            t *= 0.5
        return None

    def _measure(self, p, R, U, V, extra=None):
        """(DESIGN residual at (R, U), merit 1/2 |Phi|^2 at (R, V), merit at (R, U), sums of
        the columns of `extra` (n, k) when given), from one exact sum over ranks."""
        parts = np.empty((len(R), 6))
        kernels.newton_parts(p.kind, p.param, R, U, V, p.q, p.rho_n, p.rho_t, parts)
        s = p.sums(parts if extra is None else np.concatenate((parts, extra), axis=1))
        return residual_from_parts(s[:4].tolist()), 0.5 * s[4], 0.5 * s[5], s[6:]

    def _search(self, p, R, U, V, d, Wd, Vd, reference, slopes):
        """Armijo's backtracking search along d on the regularised merit: at the first
        t = 1, 1/2, ... (down to _MIN_STEP) where it is at most `reference` (its value at R)
        plus sigma t slope, (R + t d, U + t W d, V + t Vd) and _measure's values there, which the
        step keeps; None if there is none or d is no descent direction. slopes are
        slope_parts' (n, 2): the slope Phi^T J d is summed with the first trial, one reduction
        over ranks fewer per step."""
        t = 1.0
        while t >= _MIN_STEP:
            Rt, Ut, Vt = R + t * d, U + t * Wd, V + t * Vd
            err, reg, merit, s = self._measure(p, Rt, Ut, Vt, slopes if t == 1.0 else None)
            if t == 1.0:
                slope = s[0] - s[1]                   # grad(merit) . d = Phi^T J d
                if not slope < 0.0:
                    return None
            if reg <= reference + _SIGMA * t * slope:
                return Rt, Ut, Vt, err, reg, merit
            t *= 0.5
        return None


class NewtonProbe(SemismoothNewton):
    """Pure Newton (no proximal weight, no sweeps, LU alone) for as long as it converges
    fast: it stops at the first failed factorisation or line search, and at the first step
    after the first (which finds the active set) that leaves the residual above
    `contraction` times the previous one. Where J is regular
    near the solution (a column of spheres, a mechanism, a warm start in a time step) it ends
    at the solution in a step or two where the proximal Newton or the interior point take
    ten or more; on rigid sets (J singular) it costs one failed factorisation. The interior
    point runs it first (NSN-AC's one or two steps on the suite's 50-sphere columns)."""

    name = "probe"

    def __init__(self, tol=1e-10, max_iter=PROBE_STEPS, contraction=PROBE_CONTRACTION):
        super().__init__(tol=tol, max_iter=max_iter, linear="lu", proximal=False,
                         warm_sweeps=0)
        if not 0.0 < contraction < 1.0:
            raise InputError(f"NewtonProbe: contraction must lie in (0, 1), got {contraction!r}")
        self.contraction = float(contraction)

    def chain(self, unknowns):
        """LU alone (no GMRES fallback: a J that LU cannot factor is no case for a probe);
        nothing above LU_MAX_UNKNOWNS unknowns (no step is taken)."""
        return ("lu",) if unknowns <= LU_MAX_UNKNOWNS else ()

    def solve(self, problem, R):
        """As SemismoothNewton.solve, its stage named "probe"."""
        report = super().solve(problem, R)
        report.stages = [("probe",) + tuple(report.stages[0][1:])]
        return report


@functools.lru_cache(maxsize=None)
def _type_names(kind):
    """The names a PETSc type class lists (PETSc.KSP.Type, PETSc.PC.Type), read once."""
    return frozenset(v for k, v in vars(kind).items() if k.isupper() and isinstance(v, str))


def _forcing(eta, ratio):
    """Eisenstat-Walker's second choice (gamma 0.9, alpha 2) with its safeguard; ratio is
    |Phi_k|^2 / |Phi_k-1|^2."""
    new = _GAMMA * ratio
    if _GAMMA * eta * eta > 0.1:
        new = max(new, _GAMMA * eta * eta)
    return min(_ETA_MAX, max(_ETA_MIN, new))


class Hybrid:
    """Gauss-Seidel while it makes progress, Newton when it stalls, back to Gauss-Seidel when
    Newton does not converge; the residuals measured decide each switch.

    Gauss-Seidel stalls when, over `window` sweeps, its residual falls by less than the factor
    `stall` (0.5: under half its value). A Newton stage that does not converge is undone (R
    restored; "newton_undone"): Gauss-Seidel goes on from its own iterate, which a Newton
    stage's end point does not always serve (on poured piles, Gauss-Seidel from there stalls
    where from its own iterate it converges), so the hybrid is never further from the
    solution than Gauss-Seidel. After each such stage, the stalled windows in a row needed
    before the next and the next stage's steps (`newton_iter` at first) double: Newton is
    tried ever less often where it does not help, and for longer: before the next stage,
    Gauss-Seidel takes SWEEPS_PER_STEP sweeps per step of that stage (about what a step
    costs), so neither method gets much more time than the other. tol: the residual to
    reach; max_iter: the Gauss-Seidel sweep budget; local: Gauss-Seidel's local solver (passed
    through when given); stage: "newton" (the proximal Newton) or "ipm" (the interior point
    from the cones' axes, Newton polishing its best iterate: parsolve.solvers.interior) for
    the stages, "ipm" only where every row has a friction cone (else Newton); other options
    go to SemismoothNewton. The report's .stages lists ("gs", sweeps) and ("newton", steps, ksp
    iterations) in order, iterations counts both, and events sums the Newton stages' events
    with "newton_stages" and "newton_undone". The last stage is Gauss-Seidel unless Newton
    converged, so du stays consistent.
    """

    name = "hybrid"
    event_names = NEWTON_EVENTS + ("newton_stages", "newton_undone")

    def __init__(self, tol=1e-10, max_iter=1000, window=10, stall=0.5, newton_iter=200,
                 local=None, stage="newton", **newton_options):
        if int(max_iter) < 1:
            raise InputError(f"Hybrid: max_iter must be >= 1, got {max_iter!r}")
        if int(window) < 1:
            raise InputError(f"Hybrid: window must be >= 1, got {window!r}")
        if not 0.0 < stall < 1.0:
            raise InputError(f"Hybrid: stall must lie in (0, 1), got {stall!r}")
        if int(newton_iter) < 1:
            raise InputError(f"Hybrid: newton_iter must be >= 1, got {newton_iter!r}")
        if stage not in ("newton", "ipm"):
            raise InputError(f"Hybrid: stage must be 'newton' or 'ipm', got {stage!r}")
        gs = {} if local is None else {"local": local}
        self.gs = GaussSeidel(tol=tol, max_iter=int(window), **gs)
        newton_options.setdefault("warm_sweeps", 0)      # Gauss-Seidel has just run
        self.newton = SemismoothNewton(tol=tol, max_iter=newton_iter, **newton_options)
        self.ipm = None
        if stage == "ipm":
            from .interior import InteriorPoint

            self.ipm = InteriorPoint(tol=tol, newton_iter=newton_iter, **newton_options)
            self.event_names = tuple(dict.fromkeys(InteriorPoint.event_names
                                                   + self.event_names))
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.window, self.stall, self.newton_iter = int(window), float(stall), int(newton_iter)

    def solve(self, problem, R):
        """As GaussSeidel.solve; a problem through the bodies ends with du = M^-1 H^T R."""
        stage, polish = self.newton, self.newton
        if self.ipm is not None:
            from .. import laws

            try:
                laws.cones(problem.kind, problem.param)
                stage, polish = self.ipm, self.ipm.newton
            except ValueError:                   # rows without a cone: Newton stages
                pass

        done = []               # the interior point's iterations' end point, run once

        def newton(patience):
            """A stage of newton_iter times `patience` Newton steps (after the interior
            point's iterations, run at the first stage alone: InteriorPoint.solve's cache)."""
            polish.max_iter = self.newton_iter * patience
            if stage is self.newton:
                return stage.solve(problem, R)
            stage.newton_iter = polish.max_iter
            return stage.solve(problem, R, cache=done)    # its probe from Gauss-Seidel's R

        return self._run(lambda: self.gs.solve(problem, R), newton, R)

    def _run(self, gs, newton, R):
        t0 = time.perf_counter()
        stages, local = [], {}
        events = dict.fromkeys(self.event_names, 0)
        sweeps, patience, quota = 0, 1, 0
        r = gs()
        while True:
            its, stalled = r.iterations, False
            _add(local, r.local)
            while not r.converged and not (stalled and its >= quota) \
                    and sweeps + its < self.max_iter:
                last = r.residual
                r = gs()
                its += r.iterations
                _add(local, r.local)
                stalled = r.residual > self.stall * last
            sweeps += its
            stages.append(("gs", its))
            if r.converged or sweeps >= self.max_iter:
                break
            saved = R.copy()                                # stalled: a Newton stage
            r = newton(patience)
            stages += r.stages
            _add(local, r.local)
            _add(events, r.events)
            events["newton_stages"] += 1
            if r.converged:
                break
            events["newton_undone"] += 1                 # Gauss-Seidel goes on from its R
            R[:] = saved
            patience *= 2
            quota = SWEEPS_PER_STEP * self.newton_iter * patience
            r = gs()                                     # du consistent with R again
        report = SolveReport(self.name, iterations=sum(s[1] for s in stages),
                             residual=r.residual, converged=r.converged,
                             seconds=time.perf_counter() - t0, local=local, events=events)
        report.stages = stages
        report.ksp_iterations = sum(s[2] for s in stages if s[0] != "gs")
        report.newton_iterations = sum(s[1] for s in stages if s[0] == "newton")
        report.fallbacks = events["gs_fallback"]
        return report


def _add(total, counts):
    """total[k] += counts[k] for every k of counts (dicts of counts)."""
    for k, c in counts.items():
        total[k] = total.get(k, 0) + c
