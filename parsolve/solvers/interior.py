"""Primal-dual interior-point method on the friction cones, over PETSc.

Coulomb's law as a cone complementarity problem (De Saxce's bipotential; the interior-point
methods of Kleinert, Simeon and Obermayr 2014 for granular contact and of Mangoni and Tasora
2018 for multibody systems). Per contact, normal first, with S = diag(mu, 1, 1):

    x = S r  in L = {x_0 >= |x_T|},   y = S^-1 (u + mu |u_T| e_N)  in L,   x . y = 0,

u = W r + q (W + c e_N e_N^T on compliant contacts' diagonal blocks, laws.compliance: their
u_N is read as u_N + c r_N). L is self-dual, so x . y >= 0 row by row, and the rows' sum
measures how far the iterate is from complementarity. So y = M x + b(x) with
M = S^-1 W S^-1 and b = S^-1 q + |u_T| e_N: the shift |u_T| (De Saxce's) makes the problem
non-monotone (Coulomb's friction is not associated); with it frozen the problem is a monotone
one over second-order cones.

Each iteration takes Nesterov and Todd's scaling T of every cone (T y = T^-1 x = lambda;
Vandenberghe's CVXOPT notes give it in closed form) and Mehrotra's predictor-corrector: the
affine direction, the centring sigma = (mu_affine / mu)^3, then the corrected direction with
target sigma mu. Both solve one linear system, in r (dx = S dr keeps the scaling row-local):

    (E S^-1 W + (T^-2 + delta I) S) dr = -(M x + b - y) + T^-1 xi,   dy = T^-1 (xi - T^-1 dx),

E = I + e_N t^T row by row (t = u_T / |u_T|): Newton's derivative of the shift. Where that
direction's step is shorter than ALPHA_MIN (the shift's derivative jumps near sticking
contacts), the monotone direction (E = I, the shift frozen at the iterate) is tried too
("monotone_direction") and the step whose end has the lower residual taken (by the longer
step on the mixed piles of the suite it stalled). One step length for x and y, TAU of the way to
the cones' boundary, so the residual M x + b - y of the linear part shrinks with it. delta
(DELTA of W's mean diagonal) regularises hyperstatic sets, where W is singular and so is the
system on sticking contacts. The systems go through Newton's chain of linear solvers
(parsolve.solvers.linear: LU by MUMPS, which pivots, given twice its work space for the delayed
pivots (ICNTL(14)) and detecting null pivots (ICNTL(24)) instead of failing: PETSc's own LU does
not pivot and meets zero pivots on these systems; GMRES), every fallback counted.

Before the iterations, a pure Newton probe from the given R (NewtonProbe: LU alone, stopped
at the first failure or slow step) ends the solve where J is regular near the solution, as on a
column of spheres or from a time step's warm start, in a step or two. Otherwise the
iterate is always interior, so it is not the warm start's: the method starts at the cones'
axes, scaled by |q| and W's diagonal (the solution from R = 0 in FCLIB's sense). It stops at the
DESIGN.md residual tol, at max_iter, or when the best residual has not halved in STALL
iterations, and returns its best iterate. Global quantities: exact sums (x . y, the residual)
and PETSc's minimum (the step length), so every rank takes the same branches.
"""
import math
import time

import numpy as np

from .. import laws
from ..errors import InputError
from . import kernels
from .gauss_seidel import SolveReport
from .linear import Workspace
from .newton import NEWTON_EVENTS, NewtonProbe, SemismoothNewton
from .residual import residual_from_parts
from .soc import cone_step, inside, jordan, jordan_solve, nesterov_todd

TAU = 0.99                 # fraction of the step to the cones' boundary taken
ALPHA_MIN = 0.1            # below: try the monotone direction too
DELTA = 1e-9               # primal regularisation, relative to W's mean diagonal
STALL = 40                 # iterations without halving the best residual: stop
EDGE = 1e-30               # no row closer to its cone's edge than this (relative)
RTOL = 1e-8                # the linear solves' relative residual
IPM_EVENTS = NEWTON_EVENTS + ("monotone_direction", "linear_failed", "newton_polish",
                              "probe_converged")


class InteriorPoint:
    """Primal-dual interior-point solver of frictional contact (see the module docstring).

    tol: the DESIGN.md residual to reach; max_iter: iterations (each one or two
    factorisations); newton_iter: the proximal Newton's steps from the best iterate when the
    iterations end above tol (the interior point finds the active set, Newton polishes: on
    the suite's Kapla towers ~100 steps from 1e-7; 0: none); probe: NewtonProbe's pure
    Newton from the given R first (module docstring); linear, ksp_type, pc_type and
    other options: SemismoothNewton's (memory 5 by default: its non-monotone line search).
    Rows must have friction cones (contacts with mu > 0). The report's `events` counts the
    names of `event_names` (Newton's included; "probe_converged" when the probe ended the
    solve), its stages ("probe", steps, KSP iterations), ("ipm", iterations, KSP
    iterations) and ("newton", ...).
    """

    name = "ipm"
    event_names = IPM_EVENTS
    trace = None    # None, or called on every rank at each iterate with a dict: iteration,
    #                 residual and, where a step follows, the mean gap x . y, the
    #                 infeasibility |M x + b - y| and the step length (bench/bench_ipm.py)

    def __init__(self, tol=1e-10, max_iter=200, newton_iter=200, probe=True,
                 **newton_options):
        if not (isinstance(tol, (int, float)) and tol > 0 and math.isfinite(tol)):
            raise InputError(f"InteriorPoint: tol must be a finite number > 0, got {tol!r}")
        if int(max_iter) < 1:
            raise InputError(f"InteriorPoint: max_iter must be >= 1, got {max_iter!r}")
        if int(newton_iter) < 0:
            raise InputError(f"InteriorPoint: newton_iter must be >= 0, got {newton_iter!r}")
        self.tol, self.max_iter, self.newton_iter = float(tol), int(max_iter), int(newton_iter)
        self.prober = NewtonProbe(tol=tol) if probe else None
        newton_options.setdefault("warm_sweeps", 0)
        newton_options.setdefault("memory", 5)          # non-monotone: polishes faster
        # the polishing Newton; its linear chain and options serve the iterations too
        self.newton = SemismoothNewton(tol=tol, max_iter=max(self.newton_iter, 1),
                                       **newton_options)

    def solve(self, problem, R, cache=None):
        """Solve `problem` (a Problem) for R (n, 3), in place; R's value on entry serves the
        probe alone. cache (a list, optional) keeps the iterations' end point (R, residual)
        across calls on one problem (the Hybrid's stages): the first call fills it, a later
        one starts the polish from it without the probe or the iterations, whose end depends
        on the problem alone. Returns a SolveReport."""
        mu = self._cones(problem)
        probe = None
        if cache:
            R[:] = cache[0]
            report = SolveReport(self.name, residual=cache[1], converged=cache[1] <= self.tol,
                                 events=dict.fromkeys(self.event_names, 0))
        else:
            probe = self.probe(problem, R)
            if probe is not None and probe.converged:
                return probe
            report = self.iterate(problem, R, mu)
            if cache is not None:
                cache[:] = [R.copy(), report.residual]
        return self.merge(probe, self.polish(problem, R, report))

    def probe(self, problem, R):
        """The pure Newton probe from R (None without one): its report, with this solver's
        events; R is its end point, the solution when it converged."""
        if self.prober is None:
            return None
        report = self.prober.solve(problem, R)
        report.events = {**dict.fromkeys(self.event_names, 0), **report.events,
                         "probe_converged": int(report.converged)}
        return report

    @staticmethod
    def merge(probe, report):
        """`report` after the probe's (None: none): stages, counts and seconds summed."""
        if probe is not None:
            for k, v in probe.events.items():
                report.events[k] += v
            report.stages = probe.stages + report.stages
            report.iterations += probe.iterations
            report.ksp_iterations += probe.ksp_iterations
            report.seconds += probe.seconds
        return report

    @staticmethod
    def _cones(problem):
        """Every row's friction coefficient (laws.cones), an InputError naming the kinds
        without one."""
        try:
            return laws.cones(problem.kind, problem.param)
        except ValueError as exc:
            raise InputError(f"InteriorPoint: {exc}; use the Newton or Gauss-Seidel solver "
                             "for such rows") from None

    def iterate(self, problem, R, mu=None):
        """The interior-point iterations alone: R becomes their best iterate (a function of
        the problem only). mu: the rows' friction coefficients (_cones) when known. Returns
        their SolveReport."""
        mu = self._cones(problem) if mu is None else mu
        work = Workspace(problem, self.newton.gather)
        try:
            report = self._solve(work, mu, laws.compliance(problem.kind, problem.param), R)
        finally:
            work.destroy()
        if problem.restates:
            problem.sync(R)
            report.residual = problem.residual(R)
            report.converged = report.residual <= self.tol
        return report

    def polish(self, problem, R, report):
        """Newton's newton_iter steps from R when `report` (the iterations') is above tol,
        merged into it."""
        if not report.converged and self.newton_iter:
            polish = self.newton.solve(problem, R)
            for k, v in polish.events.items():
                report.events[k] += v
            report.events["newton_polish"] += 1
            report.stages += polish.stages
            report.iterations += polish.iterations
            report.newton_iterations = polish.iterations
            report.ksp_iterations += polish.ksp_iterations
            report.fallbacks = polish.fallbacks
            report.local = polish.local
            report.residual, report.converged = polish.residual, polish.converged
            report.seconds += polish.seconds
        return report

    def _solve(self, p, mu, c, R):
        t0 = time.perf_counter()
        events = dict.fromkeys(self.event_names, 0)
        linear = p.linear(self.newton.chain(3 * p.n_global),
                          (self.newton.ksp_type, self.newton.pc_type), events,
                          package="mumps", pivoting=True)
        n, N = len(R), p.n_global
        if N == 0:
            linear.destroy()
            return SolveReport(self.name, seconds=time.perf_counter() - t0, events=events)
        S = np.stack([mu, np.ones(n), np.ones(n)], axis=1)            # x = S r
        ksp = [0]
        try:
            s = p.sums(np.stack([np.sum(p.q ** 2, axis=1), p.scale], axis=1))
            wbar = s[1] / N
            cy = max(math.sqrt(s[0] / N), 1e-300)
            delta = DELTA * wbar
            x = np.zeros((n, 3))
            y = np.zeros((n, 3))
            x[:, 0], y[:, 0] = cy / wbar, cy
            floor_x, floor_y = EDGE * cy / wbar, EDGE * cy             # see inside()
            rows = np.repeat(np.arange(n), np.diff(p.indptr))
            SW = p.blocks / S[rows][:, :, None]                       # S^-1 W, fixed
            SW[p.diag, 0, 0] += c / mu                                 # compliances
            best, best_R, best_at, it = math.inf, np.zeros((n, 3)), 0, 0
            while True:
                r = x / S
                u = p.apply(r) + p.q
                err = design_residual(p, r, u)
                u[:, 0] += c * r[:, 0]                                # the law's u_N
                if err < best:
                    if err <= 0.5 * best:
                        best_at = it
                    best, best_R[:] = err, r
                point = {"iteration": it, "residual": err}
                if err <= self.tol or it >= self.max_iter or it - best_at > STALL or \
                        not math.isfinite(err):
                    if self.trace is not None:
                        self.trace(point)
                    break
                it += 1
                shift = np.hypot(u[:, 1], u[:, 2])
                rp = u / S                                            # M x + b - y
                rp[:, 0] += shift
                rp -= y
                m = _gap(p, x, y)
                T, Ti = nesterov_todd(x, y)
                lam = _mv(T, y)
                diag = np.einsum("kij,kj->kij", np.einsum("kij,kjl->kil", Ti, Ti), S)
                diag[:, [0, 1, 2], [0, 1, 2]] += delta * S           # (T^-2 + delta) S
                t = np.zeros((n, 2))
                np.divide(u[:, 1:], shift[:, None], out=t, where=shift[:, None] > 0)
                system = (SW, rows, diag, S, T, Ti, lam, rp, m)
                step = self._direction(p, linear, events, ksp, x, y, system, t)
                if step[0] < ALPHA_MIN:
                    events["monotone_direction"] += 1
                    other = self._direction(p, linear, events, ksp, x, y, system,
                                            np.zeros((n, 2)))
                    if other[0] > 0.0 and (step[0] == 0.0 or self._after(p, x, S, other)
                                           < self._after(p, x, S, step)):
                        step = other
                alpha, dx, dy = step
                if self.trace is not None:
                    point.update(gap=m, step=alpha, infeasibility=math.sqrt(
                        p.sums(np.sum(rp ** 2, axis=1)[:, None])[0]))
                    self.trace(point)
                if not alpha > 0.0:
                    break
                x += alpha * dx
                y += alpha * dy
                inside(x, floor_x)
                inside(y, floor_y)
            R[:] = best_R
        finally:
            linear.destroy()
        report = SolveReport(self.name, iterations=it, residual=best,
                             converged=best <= self.tol, seconds=time.perf_counter() - t0)
        report.events = {k: int(v) for k, v in events.items()}
        report.ksp_iterations = ksp[0]
        report.stages = [("ipm", it, ksp[0])]
        return report

    def _after(self, p, x, S, step):
        """The residual after a step (alpha, dx, dy)."""
        r = (x + step[0] * step[1]) / S
        return design_residual(p, r, p.apply(r) + p.q)

    def _direction(self, p, linear, events, ksp, x, y, system, t):
        """Mehrotra's predictor-corrector direction with the shift's derivative t (zero: the
        monotone one) on the iteration's `system` (S^-1 W, its rows, (T^-2 + delta) S, S, T,
        T^-1, lambda, M x + b - y, the gap): (step length, dx, dy); step length 0 when a
        linear solve failed."""
        SW, rows, diag, S, T, Ti, lam, rp, m = system
        Jb = SW.copy()
        Jb[:, 0, :] += np.einsum("kt,ktj->kj", t[rows], Jb[:, 1:, :])   # E S^-1 W
        Jb[p.diag] += diag
        p.set_jacobian(Jb)
        linear.refresh()

        def solve(xi):
            solved, k, d = linear.solve(-rp + _mv(Ti, xi), RTOL)
            ksp[0] += k
            if not solved:
                return None
            dx = d * S
            return dx, _mv(Ti, xi - _mv(Ti, dx))

        affine = solve(-lam)
        if affine is None:
            events["linear_failed"] += 1
            return 0.0, None, None
        a = min(1.0, self._max_step(p, x, y, *affine))
        ma = _gap(p, x + a * affine[0], y + a * affine[1])
        sigma = min(1.0, (ma / m) ** 3) if m > 0 else 0.0
        c = -jordan(lam, lam) - jordan(_mv(Ti, affine[0]), _mv(T, affine[1]))
        c[:, 0] += sigma * m
        corrected = solve(jordan_solve(lam, c))
        if corrected is None:
            events["linear_failed"] += 1
            return 0.0, None, None
        return min(1.0, TAU * self._max_step(p, x, y, *corrected)), corrected[0], corrected[1]

    def _max_step(self, p, x, y, dx, dy):
        """The largest step keeping x + a dx and y + a dy in the cones, over all ranks
        (PETSc's minimum of a vector)."""
        return p.minimum(np.minimum(cone_step(x, dx), cone_step(y, dy)))


def design_residual(p, r, u):
    """The DESIGN.md residual at (r, u) on workspace p, one exact sum over ranks."""
    parts = np.empty((len(r), 6))
    kernels.newton_parts(p.kind, p.param, r, u, u, p.q, p.rho_n, p.rho_t, parts)
    return residual_from_parts(p.sums(parts[:, :4]).tolist())


def _gap(p, x, y):
    """The mean complementarity gap x . y per row over all ranks (exact sums)."""
    return p.sums(np.maximum(np.sum(x * y, axis=1), 0.0)[:, None])[0] / p.n_global


def _mv(A, v):
    """A_a v_a row by row, (n, 3, 3) (n, 3) -> (n, 3)."""
    return np.einsum("kij,kj->ki", A, v)
