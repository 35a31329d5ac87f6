"""Projected (block) Gauss-Seidel on U = B + W R, C(U, R) = 0, each row under its law.

Each sweep visits the rows in a fixed order and solves each one's local problem exactly
(kernels/law.pxd) with the others' reactions frozen, Jacobi-free. The stopping test is the
residual of parsolve/solvers/residual.py, computed after every sweep (tolerance mode) or once
after a fixed number of sweeps (fixed-sweep mode, as pe's benchmarks run).
"""
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .problem import shuffle_salt
from ..laws.codes import METHODS as LOCAL_SOLVERS, OUTCOMES as CODE_NAMES

NCODES = len(CODE_NAMES)
SHUFFLES = (None, "solve", "sweep")
STOPS = ("residual", "change")


def _count(value):
    """An integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass
class SolveReport:
    solver: str
    iterations: int = 0
    residual: float = 0.0
    converged: bool = True
    seconds: float = 0.0
    local: dict = field(default_factory=dict)   # local-solver outcome -> count (this rank's)
    newton_iterations: int = 0                  # Newton steps (Newton, Hybrid)
    ksp_iterations: int = 0                     # Krylov iterations of its linear solves
    fallbacks: int = 0                          # Gauss-Seidel fallbacks of Newton
    stages: list = field(default_factory=list)  # Hybrid: ("gs", sweeps), ("newton", steps, ksp)
    # solver events (e.g. a linear-solve fallback) -> count over the whole solve, equal on
    # every rank by construction; the run sums them over steps, prints them in its summary
    # and writes one history column per name the solver lists in its `event_names`
    events: dict = field(default_factory=dict)


class GaussSeidel:
    """Gauss-Seidel with exact local solves.

    tol: residual to reach; max_iter: sweep cap; omega: relaxation in (0, 2) (below 1 under-,
    above 1 over-relaxation); sweeps: if set, run exactly this many sweeps (no per-sweep
    residual); shuffle: None (the colour schedule's order), "solve" (one shuffled order per
    solve) or "sweep" (a new one every sweep), each colour's rows ordered by a hash of their
    global keys, `seed` and the sweep, so the same on any number of ranks (Problem.sweep);
    local: the local solver, one of LOCAL_SOLVERS: "projection" (projected fixed point),
    "quartic" (take-off, stick, quartic slide), "newton" (local Alart-Curnier Newton), "auto"
    (take-off, stick, slide by the slip angle, then quartic, Newton, projection as fallbacks)
    or "warm" (auto, its slide first by Newton on the slip direction from the reaction's:
    cheaper in a sweep, other bits than auto's).

    Options for long granular solves (each off by default, when the loop is the one above;
    tolerance mode only, refused beside `sweeps`):
    adapt: omega chosen from measured progress: after `adapt` sweeps in which the stop
    measure did not reach a new lowest value (by a thousandth), an over-relaxation omega > 1
    moves halfway back to 1 (to 1 within 0.01 of it), and stays there for the solve;
    check: the stop measure taken every `check` sweeps instead of every sweep (the residual
    costs about half a sweep; a solve may run up to check - 1 sweeps more than it needs);
    stop: "residual" (the residual of residual.py reaches tol) or "change" (LMGC90's "Quad"
    check: the reactions' last sweep changed them by at most tol, measured in velocities,
    Problem.change; it bounds the progress of one sweep, not the distance to the solution:
    the report's residual, measured once at the end, says how far it is).
    """

    name = "gauss-seidel"
    event_names = ()                 # no solver events: every sweep is the same algorithm

    def __init__(self, tol=1e-8, max_iter=1000, omega=1.0, sweeps=None, local="auto",
                 shuffle=None, seed=0, adapt=None, check=1, stop="residual"):
        if not (tol > 0 and np.isfinite(tol)):
            raise InputError(f"GaussSeidel: tol must be a finite number > 0, got {tol}")
        if int(max_iter) < 1:
            raise InputError(f"GaussSeidel: max_iter must be >= 1, got {max_iter}")
        if not 0.0 < omega < 2.0:
            raise InputError(f"GaussSeidel: omega must lie in (0, 2), got {omega}")
        if sweeps is not None and int(sweeps) < 1:
            raise InputError(f"GaussSeidel: sweeps must be >= 1, got {sweeps}")
        if local not in LOCAL_SOLVERS:
            raise InputError(f"GaussSeidel: unknown local solver {local!r}: choose one of "
                             f"{', '.join(LOCAL_SOLVERS)}")
        if shuffle not in SHUFFLES:
            raise InputError(f"GaussSeidel: shuffle must be one of {SHUFFLES}, got {shuffle!r}")
        if not (isinstance(seed, (int, np.integer)) and 0 <= seed < 2 ** 63):
            raise InputError(f"GaussSeidel: seed must be an integer >= 0, got {seed!r}")
        if adapt is not None and not (_count(adapt) and adapt >= 1):
            raise InputError(f"GaussSeidel: adapt must be None or an integer >= 1, got "
                             f"{adapt!r}")
        if not (_count(check) and check >= 1):
            raise InputError(f"GaussSeidel: check must be an integer >= 1, got {check!r}")
        if not (isinstance(stop, str) and stop in STOPS):
            raise InputError(f"GaussSeidel: stop must be one of {STOPS}, got {stop!r}")
        if sweeps is not None:               # a fixed number of sweeps measures nothing
            for option, value, off in (("adapt", adapt, None), ("check", check, 1),
                                       ("stop", stop, "residual")):
                if value != off:
                    raise InputError(f"GaussSeidel: {option}={value!r} needs the tolerance "
                                     f"mode, not sweeps={sweeps}")
        self.adapt, self.check, self.stop = adapt, int(check), stop
        self.shuffle, self.seed = shuffle, int(seed)
        self.local = local
        self.method = LOCAL_SOLVERS.index(local)
        self.tol, self.max_iter, self.omega = float(tol), int(max_iter), float(omega)
        self.sweeps = None if sweeps is None else int(sweeps)

    def solve(self, problem, R):
        """Solve `problem` (a Problem) in place for R (n, 3), warm-started from its content.
        Through the bodies, du starts consistent with R (sync) and ends so; with the same
        colours, 1 and P ranks produce the same iterates bit for bit. Returns a SolveReport."""
        # sweep k in the colour schedule's order, or shuffled anew every sweep or once a solve
        salt = None if self.shuffle is None else (
            lambda k: shuffle_salt(self.seed, k if self.shuffle == "sweep" else 0))
        t0 = time.perf_counter()
        counts = np.zeros(NCODES, np.int64)
        report = SolveReport(self.name)
        if self.sweeps is not None:
            problem.sync(R)
            for k in range(self.sweeps):
                problem.sweep(R, counts, self.omega, self.method, salt and salt(k))
            report.iterations, report.residual = self.sweeps, problem.residual(R)
            report.converged = report.residual <= self.tol
        elif self.adapt is None and self.check == 1 and self.stop == "residual":
            # collective: every rank runs as many sweeps (on one rank one call, sync included)
            report.iterations, report.residual = problem.gauss_seidel(
                R, counts, self.omega, self.method, self.tol, self.max_iter, salt, sync=True)
            report.converged = report.residual <= self.tol
        else:
            problem.sync(R)
            report.iterations, report.residual, report.converged = self._controlled(
                problem, R, counts, salt)
        report.local = {name: c for name, c in zip(CODE_NAMES, counts.tolist()) if c}
        report.seconds = time.perf_counter() - t0
        return report

    def _controlled(self, problem, R, counts, salt):
        """Sweeps under the options adapt, check and stop: (sweeps, residual, converged).
        Every decision reads measures summed exactly over the ranks, so every rank takes
        it alike."""
        change = self.stop == "change"
        omega, it = self.omega, 0
        residual = problem.residual(R)          # a warm start at the solution needs no sweep
        if residual <= self.tol:
            return 0, residual, True
        measure = np.inf if change else residual
        best, since = measure, 0
        while measure > self.tol and it < self.max_iter:
            k = min(self.check, self.max_iter - it)
            for j in range(k):
                if change and j == k - 1:
                    before = R.copy()
                problem.sweep(R, counts, omega, self.method, salt and salt(it + j))
            it += k
            measure = problem.change(before, R) if change else problem.residual(R)
            if measure < 0.999 * best:
                best, since = measure, it
            elif self.adapt is not None and omega > 1.0 and it - since >= self.adapt:
                omega = 1.0 + 0.5 * (omega - 1.0) if omega > 1.01 else 1.0
                since = it
        residual = problem.residual(R) if change else measure
        return it, residual, measure <= self.tol
