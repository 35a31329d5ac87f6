"""The hybrid solver: Gauss-Seidel while it makes progress, a Newton or interior-point stage
when it stalls (parsolve.solvers.newton, parsolve.solvers.interior)."""
import time

from .. import laws
from ..errors import InputError
from .gauss_seidel import GaussSeidel, SolveReport
from .interior import InteriorPoint
from .newton import NEWTON_EVENTS, SemismoothNewton

SWEEPS_PER_STEP = 10                 # Hybrid: Gauss-Seidel sweeps per Newton step it forgoes


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
            self.ipm = InteriorPoint(tol=tol, newton_iter=newton_iter, **newton_options)
            self.event_names = tuple(dict.fromkeys(InteriorPoint.event_names
                                                   + self.event_names))
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.window, self.stall, self.newton_iter = int(window), float(stall), int(newton_iter)

    def solve(self, problem, R):
        """As GaussSeidel.solve; a problem through the bodies ends with du = M^-1 H^T R."""
        stage, polish = self.newton, self.newton
        if self.ipm is not None:
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
