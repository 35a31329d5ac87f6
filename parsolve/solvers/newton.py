"""Global semismooth Newton on the Alart-Curnier function, over PETSc.

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

Linear solves cannot fail silently: J d = -Phi goes through parsolve.solvers.linear's chain of
PETSc solvers ("lu", "gmres"; linear="auto" chooses from the size), every failure and fallback
counted in the report's `events` (names in `event_names`), equal on every rank.

Line search: Armijo backtracking on the merit 1/2 |Phi|^2 of the regularised problem,
monotone within one anchor by default; memory = M > 1 makes it non-monotone (Grippo, Lampariello
and Lucidi 1986: the reference is the largest merit of the anchor's last M iterates). An earlier
non-monotone reference across anchors let Newton cycle between active sets on settled piles.
merit="fb" takes the steps on a second merit instead, Fischer-Burmeister's 1/2 |phi|^2 of the
cones' complementarity form (Fukushima, Luo and Tseng 2002; Siconos' FischerBurmeister
solvers), continuously differentiable where Alart-Curnier's has kinks at the stick-slip and
contact-separation switches: psi(t) <= reference - sigma t psi(0).
"""
import math
import time

import numpy as np

from .. import laws
from ..errors import InputError
from . import kernels
from .gauss_seidel import SolveReport
from .gauss_seidel import CODE_NAMES, NCODES
from .linear import (ETA_MAX, GATHER_MAX, LU_FALLBACK_MAX, LU_MAX_UNKNOWNS, Kept, Workspace,
                     type_names)
from .residual import residual_from_parts
from .soc import desaxce, fischer_burmeister

_GAMMA, _ETA_MIN = 0.9, 1e-12                          # Eisenstat-Walker, choice 2
_SIGMA, _MIN_STEP = 1e-4, 2.0 ** -12                   # Armijo line search
# proximal weight sigma (dimensionless, relative to W's diagonal): SIGMA_C times the residual,
# zero below SIGMA_MIN, at most SIGMA_MAX (J + alpha B is then B-dominated: a short step)
SIGMA_C, SIGMA_MIN, SIGMA_MAX, SIGMA_UP, SIGMA_RAISED = 1e-2, 1e-6, 1e4, 10.0, 1e-5
KAPPA, INNER_MAX = 0.1, 20           # inner loop: merit to KAPPA^2 of the anchor's, or steps
PROBE_STEPS, PROBE_CONTRACTION = 10, 0.1   # NewtonProbe: steps, residual ratio per step
LINEAR_SOLVERS = ("auto", "lu", "gmres")
MERITS = ("ac", "fb")                # the line search's: Alart-Curnier's, Fischer-Burmeister's
NEWTON_EVENTS = ("ksp_failed", "ksp_capped", "lu_fallback", "gmres_fallback", "gs_fallback",
                 "lu_factorisations", "proximal_steps", "sigma_raised")


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
    the steps on stacks of boxes and more on some mixed sets: bench/README.md); gather: up to
    this many unknowns over all ranks, W R and the linear solves are rank 0's on the rows in
    their canonical order, so that the result does not depend on the rank count
    (parsolve.solvers.linear.Workspace; 0: never).
    The report's `events` counts the names of `event_names` over the solve.
    """

    name = "newton"
    event_names = NEWTON_EVENTS

    def __init__(self, tol=1e-10, max_iter=100, linear="auto", ksp_type="gmres",
                 pc_type="pbjacobi", proximal=True, fallback_sweeps=5, warm_sweeps=10,
                 memory=1, merit="ac", gather=GATHER_MAX):
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
        if int(gather) < 0:
            raise InputError(f"SemismoothNewton: gather must be >= 0, got {gather!r}")
        if merit not in MERITS:
            raise InputError(f"SemismoothNewton: unknown merit {merit!r}: choose one of "
                             f"{', '.join(MERITS)}")
        if linear not in LINEAR_SOLVERS:
            raise InputError(f"SemismoothNewton: unknown linear solver {linear!r}: choose one "
                             f"of {', '.join(LINEAR_SOLVERS)}")
        for what, value, kind in (("ksp_type", ksp_type, PETSc.KSP.Type),
                                  ("pc_type", pc_type, PETSc.PC.Type)):
            if value not in type_names(kind):
                raise InputError(f"SemismoothNewton: unknown {what} {value!r}")
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.linear, self.ksp_type, self.pc_type = linear, ksp_type, pc_type
        self.proximal = bool(proximal)
        self.fallback_sweeps = int(fallback_sweeps)
        self.warm_sweeps = int(warm_sweeps)
        self.memory = int(memory)
        self.merit = merit
        self.gather = int(gather)
        self.contraction = None                 # NewtonProbe's
        self._kept = Kept()                     # PETSc objects from one step to the next
                                                # (None: new ones every solve)

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
        work = Workspace(problem, self.gather, self._kept)
        try:
            report = self._solve(work, R)
        except BaseException:          # nothing half-used is kept
            if self._kept is not None:
                self._kept.release()
            raise
        finally:
            work.destroy()
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
        linear = p.linear(self.chain(3 * p.n_global), (self.ksp_type, self.pc_type), events)
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
            eta, floor, it = ETA_MAX, 0.0, 0
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
                    solved, k, d = linear.solve(-Phi, eta)
                    ksp_its += k
                    found = solved and self._step(p, R, U, V, alpha, recent, d, Phi, A, Bj,
                                                  slopes)
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
                    eta = ETA_MAX
            report.iterations, report.residual = it, err
        finally:
            linear.destroy()
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

    def _step(self, p, R, U, V, alpha, recent, d, Phi, A, Bj, slopes):
        """The line search along the direction d (n, 3) from the line search's merits of the
        anchor's `recent` iterates (the last at R): _search's point, or None."""
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



def _forcing(eta, ratio):
    """Eisenstat-Walker's second choice (gamma 0.9, alpha 2) with its safeguard; ratio is
    |Phi_k|^2 / |Phi_k-1|^2."""
    new = _GAMMA * ratio
    if _GAMMA * eta * eta > 0.1:
        new = max(new, _GAMMA * eta * eta)
    return min(ETA_MAX, max(_ETA_MIN, new))

