"""Global semismooth Newton on the Alart-Curnier function, over PETSc; and the hybrid solver.

Per contact a, with u = W r + q, normal first and rho_N, rho_T > 0 (Alart and Curnier 1991):

    Phi_N = r_N - max(0, r_N - rho_N u_N)
    Phi_T = r_T - P_D(r_T - rho_T u_T),   D the disc of radius mu max(0, r_N - rho_N u_N).

Phi(r) = 0 is Signorini-Coulomb's law, the same solution set as the De Saxce residual of
DESIGN.md section 2 (which is what every report states). rho is taken from each contact's
diagonal block, rho_N = 1 / W_NN and rho_T = 2 / (W_T1T1 + W_T2T2), so Phi has the units of r
and nobody tunes it. The generalised Jacobian is J = A + B W with A = dPhi/dr, B = dPhi/du
3 x 3 block diagonal; J is assembled as a PETSc BAIJ matrix (block size 3) with W's pattern, so
any PETSc preconditioner applies to it.

Newton starts after a few Gauss-Seidel sweeps from the given R (the warm start). Each step
solves J d = -Phi inexactly by PETSc KSP (GMRES, right-preconditioned, so its residual is the
true one) to a relative tolerance eta chosen by Eisenstat and Walker's second rule, then takes
an Armijo backtracking search on the merit 1/2 |Phi|^2 (monotone: a non-monotone reference let
Newton cycle between active sets on settled piles). When the search fails, J is shifted by
lambda I (Levenberg-Marquardt; W is singular where contacts outnumber the bodies' freedoms,
e.g. four corner contacts per box face) and the step retried; lambda decays after successes and
never exceeds 1e6 (J's diagonal is O(1)). If three shifts fail (fewer at the cap), a few
Gauss-Seidel sweeps are taken instead (the fallback). All decisions read sums that are exact
over ranks, so every rank takes the same branches.

PETSc options: the KSP reads the unprefixed options of the PETSc database (`-ksp_type`,
`-pc_type`, `-ksp_gmres_restart`, `-ksp_max_it`, `-ksp_monitor`, ...; pass them with
PARSOLVE_PETSC_OPTIONS="-pc_type ilu"), after the defaults set here. An explicit `-ksp_rtol`
replaces the adaptive (Eisenstat-Walker) tolerance.
"""
import functools
import math
import time

import numpy as np

from ..errors import InputError
from ..parallel.colouring import ColourSchedule
from ..parallel.reduce import exact_sums
from . import kernels
from .gauss_seidel import GaussSeidel, SolveReport
from .reference import CODE_NAMES, NCODES, residual_from_parts
from .reference import alart_curnier  # noqa: F401  (importable from here, as before)

_GAMMA, _ETA_MAX, _ETA_MIN = 0.9, 0.1, 1e-12          # Eisenstat-Walker, choice 2
_SIGMA, _NONMONOTONE, _MIN_STEP = 1e-4, 1, 2.0 ** -12  # line search (monotone)
# Levenberg-Marquardt shift of J (dimensionless, J's diagonal is O(1)): zero while Newton steps
# succeed, raised when a step fails (W is singular where contacts outnumber the bodies' freedoms),
# at most _SHIFT_MAX (J + shift I is then a scaled identity to 1e-6; growing on would overflow)
_SHIFT_MIN, _SHIFT_UP, _SHIFT_DOWN, _SHIFT_TRIES, _SHIFT_MAX = 1e-4, 10.0, 0.25, 3, 1e6


def _block_csr(W):
    """The local block rows of a BAIJ matrix (bs 3) as (indptr, global block columns,
    blocks (nnz, 3, 3))."""
    ai, aj, av = W.getValuesCSR()
    cnt = np.diff(ai)[0::3] // 3
    indptr = np.concatenate([[0], np.cumsum(cnt)]).astype(np.int64)
    prow = np.repeat(np.arange(len(ai) - 1), np.diff(ai))
    pos = np.arange(len(aj)) - ai[prow]
    blocks = np.empty((indptr[-1], 3, 3))
    blocks[indptr[prow // 3] + pos // 3, prow % 3, pos % 3] = av
    first = (prow % 3 == 0) & (pos % 3 == 0)
    return indptr, (aj[first] // 3).astype(np.int64), blocks


class _Problem:
    """One solve's data: W's local block rows (global columns) and W as a PETSc Mat on `comm`,
    q, mu, the sums over ranks, and a Gauss-Seidel fallback `sweep(R, k, counts)`."""

    def __init__(self, W, indptr, indices, blocks, first, q, mu, sums, sweep):
        from ..petsc import PETSc

        self.W, self.q, self.mu, self.sums, self.sweep = W, q, mu, sums, sweep
        self.indptr, self.indices, self.blocks = indptr, indices, blocks
        n = len(q)
        self.diag = np.flatnonzero(indices == first + np.repeat(np.arange(n), np.diff(indptr)))
        if len(self.diag) != n:
            raise RuntimeError("W lacks a diagonal block")
        Wd = blocks[self.diag]
        self.rho_n = 1.0 / Wd[:, 0, 0]
        self.rho_t = 2.0 / (Wd[:, 1, 1] + Wd[:, 2, 2])
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

    def assemble_jacobian(self, A, B, shift):
        """J + shift I = A + B W + shift I into self.J (W's pattern, values replaced)."""
        kernels.jacobian_blocks(self.indptr, self.blocks, self.diag, A, B, shift, self.Jb)
        self.J.setValuesBlockedCSR(*self.csr, self.Jb.reshape(-1))
        self.J.assemble()

    def destroy(self):
        for obj in (self.x, self.y, self.J):
            obj.destroy()


class SemismoothNewton:
    """Global semismooth Newton on the Alart-Curnier function (see the module docstring).

    tol: the DESIGN.md residual to reach; max_iter: Newton steps; ksp_type / pc_type: the
    linear solver's defaults (GMRES right-preconditioned; "pbjacobi" inverts the 3 x 3
    diagonal blocks, "bjacobi" is ILU(0) on each rank's block of J, block Jacobi over ranks),
    overridden by the PETSc options database; warm_sweeps: Gauss-Seidel sweeps from the given
    R before the first Newton step; fallback_sweeps: Gauss-Seidel sweeps taken when a Newton
    step fails (after up to three Levenberg-Marquardt shifts of J).
    """

    name = "newton"
    distributed_operator = True      # solve_coupled wants domain= and held= (Simulation)

    def __init__(self, tol=1e-10, max_iter=100, ksp_type="gmres", pc_type="bjacobi",
                 fallback_sweeps=5, warm_sweeps=10):
        from ..petsc import PETSc

        if not (isinstance(tol, (int, float)) and tol > 0 and math.isfinite(tol)):
            raise InputError(f"SemismoothNewton: tol must be a finite number > 0, got {tol!r}")
        if int(max_iter) < 1:
            raise InputError(f"SemismoothNewton: max_iter must be >= 1, got {max_iter!r}")
        if int(warm_sweeps) < 0:
            raise InputError(f"SemismoothNewton: warm_sweeps must be >= 0, got {warm_sweeps!r}")
        if int(fallback_sweeps) < 1:
            raise InputError("SemismoothNewton: fallback_sweeps must be >= 1, got "
                             f"{fallback_sweeps!r}")
        for what, value, kind in (("ksp_type", ksp_type, PETSc.KSP.Type),
                                  ("pc_type", pc_type, PETSc.PC.Type)):
            if value not in _type_names(kind):
                raise InputError(f"SemismoothNewton: unknown {what} {value!r}")
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.ksp_type, self.pc_type = ksp_type, pc_type
        self.fallback_sweeps = int(fallback_sweeps)
        self.warm_sweeps = int(warm_sweeps)

    # -- the two entry points, as GaussSeidel's ---------------------------------------------
    def solve(self, indptr, indices, blocks, diag, B, mu, R):
        """Solve in place for R (n, 3), warm-started from it, with W given as serial block CSR
        rows (FCLIB problems). Returns a SolveReport (with .ksp_iterations, .fallbacks)."""
        from ..assembly.petsc_delassus import delassus_matrix
        from ..petsc import PETSc

        indptr = np.asarray(indptr, np.int64)
        indices = np.asarray(indices, np.int64)
        blocks = np.ascontiguousarray(blocks, float).reshape(-1, 3, 3)
        B, mu = np.ascontiguousarray(B, float), np.ascontiguousarray(mu, float)
        order = np.arange(len(B), dtype=np.int64)

        def sweep(R, k, counts):
            for _ in range(k):
                kernels.gauss_seidel_sweep(indptr, indices, blocks, diag, B, mu, R, order,
                                           1.0, counts)

        W = delassus_matrix(indptr, indices, blocks, PETSc.COMM_SELF)
        try:
            problem = _Problem(W, indptr, indices, blocks, 0, B, mu, exact_sums, sweep)
            try:
                return self._solve(problem, R)
            finally:
                problem.destroy()
        finally:
            W.destroy()

    def solve_coupled(self, ld, R, du, schedule=None, sums=None, domain=None, held=None):
        """Solve in place for R with W assembled over all ranks (distributed_delassus) from the
        LocalDynamics ld; du (bodies, 6) starts at zero and ends M^-1 H^T R, as after
        GaussSeidel.solve_coupled. Without domain, serial: W from ld's block rows."""
        from ..assembly.petsc_delassus import distributed_delassus, delassus_matrix
        from ..petsc import PETSc

        n = ld.n
        schedule = schedule or ColourSchedule.single(n)
        sums = sums or (domain.sums if domain is not None else exact_sums)
        inc = (ld.inc_ptr, ld.inc_body)

        def body_du():                                   # du = M^-1 H^T R, colour by colour
            du[:] = 0.0
            schedule.visit(lambda order: kernels.body_apply(*inc, ld.K, R, du, order))

        def sweep(R, k, counts):
            body_du()
            for _ in range(k):
                schedule.visit(lambda order: kernels.body_gauss_seidel_sweep(
                    *inc, ld.H, ld.K, ld.Wdiag, ld.B, ld.mu, R, du, order, 1.0, counts))

        if domain is not None:
            W, first = distributed_delassus(ld, domain, held)
            indptr, indices, blocks = _block_csr(W)
        else:
            indptr, indices, blocks, _ = ld.rows
            W, first = delassus_matrix(indptr, indices, blocks, PETSc.COMM_SELF), 0
        try:
            problem = _Problem(W, indptr, indices, blocks, first, ld.B, ld.mu, sums, sweep)
            try:
                report = self._solve(problem, R)
            finally:
                problem.destroy()
        finally:
            W.destroy()
        body_du()                      # the residual as the sweeps state it, from the bodies
        U, parts = np.empty((n, 3)), np.empty((n, 4))
        kernels.body_residual(*inc, ld.H, ld.B, ld.mu, R, du, U, parts)
        report.residual = residual_from_parts(sums(parts))
        report.converged = report.residual <= self.tol
        return report

    # -- Newton ------------------------------------------------------------------------------
    def _ksp(self, J):
        from ..petsc import PETSc

        ksp = PETSc.KSP().create(comm=J.getComm())
        ksp.setOperators(J)
        ksp.setType(self.ksp_type)
        ksp.getPC().setType(self.pc_type)
        ksp.setPCSide(PETSc.PC.Side.RIGHT)
        ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
        if self.ksp_type == "gmres":
            ksp.setGMRESRestart(100)
        ksp.setTolerances(rtol=_ETA_MAX, atol=0.0, max_it=500)
        try:
            ksp.setFromOptions()
        except PETSc.Error as exc:
            ksp.destroy()
            raise InputError(f"SemismoothNewton: bad PETSc option ({exc})") from None
        opts = PETSc.Options()
        fixed = opts.getReal("ksp_rtol") if opts.hasName("ksp_rtol") else None
        return ksp, fixed

    def _solve(self, p, R):
        """Newton from R on problem p; a SolveReport with ksp_iterations and fallbacks."""
        t0 = time.perf_counter()
        report = SolveReport(self.name)
        counts = np.zeros(NCODES, np.int64)
        ksp, fixed_rtol = self._ksp(p.J)
        d_vec, rhs = p.J.createVecs()
        n = len(R)
        Phi, slopes = np.empty((n, 3)), np.empty((n, 2))        # the kernels write into these
        A, Bj = np.empty((n, 3, 3)), np.empty((n, 3, 3))
        ksp_its = fallbacks = 0
        try:
            kernels.project_into_cones(R, p.mu)                 # start inside the cones
            if self.warm_sweeps:
                p.sweep(R, self.warm_sweeps, counts)
            U = p.apply(R) + p.q
            err, theta, _ = self._measure(p, R, U)
            merits = [theta]
            eta, shift = _ETA_MAX, 0.0
            it = 0
            while err > self.tol and it < self.max_iter:
                it += 1
                kernels.alart_curnier(R, U, p.mu, p.rho_n, p.rho_t, Phi, A, Bj)
                rhs.array[:] = -Phi.reshape(-1)
                for _ in range(_SHIFT_TRIES):
                    p.assemble_jacobian(A, Bj, shift)
                    ksp.setTolerances(rtol=fixed_rtol if fixed_rtol is not None else eta)
                    ksp.solve(rhs, d_vec)
                    ksp_its += ksp.getIterationNumber()
                    d = d_vec.array.reshape(-1, 3).copy()
                    Wd = p.apply(d)
                    kernels.slope_parts(Phi, A, Bj, d, Wd, slopes)
                    found = self._search(p, R, U, d, Wd, max(merits[-_NONMONOTONE:]), slopes)
                    if found is not None:
                        shift = shift * _SHIFT_DOWN if shift > _SHIFT_MIN else 0.0
                        break
                    raised = min(max(_SHIFT_UP * shift, _SHIFT_MIN), _SHIFT_MAX)
                    if raised == shift:                       # the same J would fail again
                        break
                    shift = raised
                if found is None:                             # no descent: Gauss-Seidel
                    fallbacks += 1
                    p.sweep(R, self.fallback_sweeps, counts)
                    U = p.apply(R) + p.q
                    eta = _ETA_MAX
                    err, new, _ = self._measure(p, R, U)
                else:                                         # the accepted trial point
                    R[:], U, err, new = found
                    eta = _forcing(eta, new / theta if theta > 0 else 0.0)
                theta = new
                merits.append(theta)
            report.iterations, report.residual = it, err
        finally:
            for obj in (ksp, d_vec, rhs):
                obj.destroy()
        report.converged = report.residual <= self.tol
        report.local = {name: int(c) for name, c in zip(CODE_NAMES, counts) if c}
        report.ksp_iterations, report.fallbacks = ksp_its, fallbacks
        report.newton_iterations = report.iterations
        report.stages = [("newton", report.iterations, ksp_its)]
        report.seconds = time.perf_counter() - t0
        return report

    def _measure(self, p, R, U, extra=None):
        """(DESIGN residual, merit 1/2 |Phi|^2) at (R, U) and the sums of the columns of
        `extra` (n, k) when given, from one exact sum over ranks."""
        parts = np.empty((len(R), 5))
        kernels.newton_parts(R, U, p.q, p.mu, p.rho_n, p.rho_t, parts)
        s = p.sums(parts if extra is None else np.concatenate((parts, extra), axis=1))
        return residual_from_parts(s[:4].tolist()), 0.5 * s[4], s[5:]

    def _search(self, p, R, U, d, Wd, reference, slopes):
        """Armijo's backtracking search along d: at the first t = 1, 1/2, ... (down to
        _MIN_STEP) where the merit is at most reference + sigma t slope, (R + t d, U + t W d)
        and _measure's (residual, merit) there, which the step keeps; None if there is none or
        d is no descent direction. slopes are slope_parts' (n, 2): the slope Phi^T J d is
        summed with the first trial, one reduction over ranks fewer per step."""
        t = 1.0
        while t >= _MIN_STEP:
            Rt, Ut = R + t * d, U + t * Wd
            err, merit, s = self._measure(p, Rt, Ut, slopes if t == 1.0 else None)
            if t == 1.0:
                slope = s[0] - s[1]                   # grad(merit) . d = Phi^T J d
                if not slope < 0.0:
                    return None
            if merit <= reference + _SIGMA * t * slope:
                return Rt, Ut, err, merit
            t *= 0.5
        return None


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
    """Gauss-Seidel until its progress stalls, then Newton; back to Gauss-Seidel if Newton
    does not converge (at most `rounds` times).

    Gauss-Seidel stalls when, over `window` sweeps, its residual falls by less than the factor
    `stall` (0.5: under half its value). tol: the residual to reach; max_iter: the Gauss-Seidel
    sweep budget; newton_iter: Newton steps per Newton stage; local: Gauss-Seidel's local
    solver (passed through when given). The report's .stages lists ("gs", sweeps) and
    ("newton", steps, ksp iterations) in order; iterations counts both.
    """

    name = "hybrid"
    distributed_operator = True

    def __init__(self, tol=1e-10, max_iter=1000, window=10, stall=0.5, newton_iter=200,
                 rounds=3, local=None, **newton_options):
        if int(max_iter) < 1:
            raise InputError(f"Hybrid: max_iter must be >= 1, got {max_iter!r}")
        if int(window) < 1:
            raise InputError(f"Hybrid: window must be >= 1, got {window!r}")
        if not 0.0 < stall < 1.0:
            raise InputError(f"Hybrid: stall must lie in (0, 1), got {stall!r}")
        if int(rounds) < 1:
            raise InputError(f"Hybrid: rounds must be >= 1, got {rounds!r}")
        gs = {} if local is None else {"local": local}
        self.gs = GaussSeidel(tol=tol, max_iter=int(window), **gs)
        newton_options.setdefault("warm_sweeps", 0)      # Gauss-Seidel has just run
        self.newton = SemismoothNewton(tol=tol, max_iter=newton_iter, **newton_options)
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.window, self.stall, self.rounds = int(window), float(stall), int(rounds)

    def solve(self, indptr, indices, blocks, diag, B, mu, R):
        """As GaussSeidel.solve (serial block CSR rows, R warm start, in place)."""
        return self._run(lambda: self.gs.solve(indptr, indices, blocks, diag, B, mu, R),
                         lambda: self.newton.solve(indptr, indices, blocks, diag, B, mu, R), R)

    def solve_coupled(self, ld, R, du, schedule=None, sums=None, domain=None, held=None):
        """As SemismoothNewton.solve_coupled; du ends M^-1 H^T R."""
        def gs():
            du[:] = 0.0
            return self.gs.solve_coupled(ld, R, du, schedule, sums=sums)

        def newton():
            du[:] = 0.0
            return self.newton.solve_coupled(ld, R, du, schedule, sums, domain, held)

        return self._run(gs, newton, R)

    def _run(self, gs, newton, R):
        """Gauss-Seidel windows; Newton when they stall. A Newton stage that ends above the
        residual it started from is undone (R restored), so the hybrid is never worse than
        Gauss-Seidel; after `rounds` Newton stages Gauss-Seidel spends the rest of the budget.
        The last stage is always Gauss-Seidel unless Newton converged (du stays consistent)."""
        t0 = time.perf_counter()
        stages, local = [], {}
        sweeps = 0
        rounds = 0
        while True:
            # Gauss-Seidel by windows until it converges, stalls or spends its budget
            its, last = 0, None
            while sweeps < self.max_iter:
                r = gs()
                sweeps += r.iterations
                its += r.iterations
                for k, c in r.local.items():
                    local[k] = local.get(k, 0) + c
                if r.converged or (rounds < self.rounds and last is not None
                                   and r.residual > self.stall * last):
                    break
                last = r.residual
            stages.append(("gs", its))
            if r.converged or rounds == self.rounds or sweeps >= self.max_iter:
                break
            rounds += 1
            saved, before = R.copy(), r
            r = newton()
            stages.append(("newton", r.iterations, r.ksp_iterations))
            for k, c in r.local.items():
                local[k] = local.get(k, 0) + c
            if r.converged:
                break
            if r.residual > before.residual:             # undo a Newton stage that failed
                R[:] = saved
                r = before
        report = SolveReport(self.name, iterations=sum(s[1] for s in stages),
                             residual=r.residual, converged=r.converged,
                             seconds=time.perf_counter() - t0, local=local)
        report.stages = stages
        report.ksp_iterations = sum(s[2] for s in stages if s[0] == "newton")
        report.newton_iterations = sum(s[1] for s in stages if s[0] == "newton")
        report.fallbacks = 0
        return report
