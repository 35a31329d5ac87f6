"""Solvers of C(U, R) = 0 with U = B + W R.

make_solver(name, **options) builds one by its command-line name: "gs" (Gauss-Seidel),
"newton" (global semismooth Newton over PETSc), "hybrid" (Gauss-Seidel, then Newton when it
stalls), "ipm" (primal-dual interior point on the friction cones, Newton to polish) or "auto"
(for a tolerance of TIGHT or below, the Hybrid with interior-point stages, which take
Newton's place where every row has a friction cone, and Newton's non-monotone line search;
above, Gauss-Seidel over-relaxed by AUTO_OMEGA). Model scripts may build the classes directly.

Why (bench/README.md, "Solvers, continued" and "The interior point"): at 1e-8 on the FCLIB
suite the interior point reaches 24 of 33 problems, the Hybrid with interior-point stages
24, with Newton stages 15, Gauss-Seidel 7; the Hybrid keeps the warm start's sweeps
for the easy steps of a run. At 1e-4 on a poured pile Gauss-Seidel takes 0.4-0.8 s a step
where the Hybrid's Newton stages cost 16 s, and omega = 1.5 saves Gauss-Seidel half to two
thirds of its sweeps on columns and piles.
"""
from .gauss_seidel import GaussSeidel, SolveReport
from .hybrid import Hybrid
from .interior import InteriorPoint
from .newton import NewtonProbe, SemismoothNewton
from .problem import Problem

SOLVER_NAMES = ("gs", "newton", "hybrid", "ipm", "auto")
TIGHT = 1e-6                      # "auto": the Hybrid (interior-point stages) at or below
AUTO_OMEGA = 1.5                  # "auto": Gauss-Seidel's over-relaxation above it


def make_solver(name, **options):
    """The solver called `name` (one of SOLVER_NAMES), built with `options`."""
    from ..errors import InputError

    if name == "gs":
        return GaussSeidel(**options)
    if name == "auto":
        if options.get("tol", 1e-8) > TIGHT:
            options.setdefault("omega", AUTO_OMEGA)
            return GaussSeidel(**options)
        options.setdefault("stage", "ipm")
        options.setdefault("memory", 5)          # Newton's line search non-monotone
        name = "hybrid"
    if name in ("newton", "hybrid"):
        return (SemismoothNewton if name == "newton" else Hybrid)(**options)
    if name == "ipm":
        return InteriorPoint(**options)
    raise InputError(f"unknown solver {name!r}: choose one of {', '.join(SOLVER_NAMES)}")


__all__ = ["GaussSeidel", "SemismoothNewton", "NewtonProbe", "Hybrid", "InteriorPoint", "Problem",
           "SolveReport", "make_solver", "SOLVER_NAMES"]
