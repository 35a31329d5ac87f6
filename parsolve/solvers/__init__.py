"""Solvers of C(U, R) = 0 with U = B + W R.

make_solver(name, **options) builds one by its command-line name: "gs" (Gauss-Seidel),
"newton" (global semismooth Newton over PETSc), "hybrid" (Gauss-Seidel, then Newton when it
stalls) or "auto" (the Hybrid for a tolerance of TIGHT or below, else Gauss-Seidel over-relaxed
by AUTO_OMEGA). Model scripts may build the classes directly.

Why (bench/README.md, "Solvers, continued"): at 1e-8 on the FCLIB suite the Hybrid reaches 15
of 33 problems, Gauss-Seidel 7; at 1e-4 on a poured pile Gauss-Seidel takes 0.4-0.8 s a step
where the Hybrid's Newton stages cost 16 s, and omega = 1.5 saves Gauss-Seidel half to two
thirds of its sweeps on columns and piles.
"""
from .gauss_seidel import GaussSeidel, SolveReport
from .problem import Problem

SOLVER_NAMES = ("gs", "newton", "hybrid", "auto")
TIGHT = 1e-6                      # "auto": the Hybrid at this tolerance and below
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
        name = "hybrid"
    if name in ("newton", "hybrid"):
        from .newton import Hybrid, SemismoothNewton

        return (SemismoothNewton if name == "newton" else Hybrid)(**options)
    raise InputError(f"unknown solver {name!r}: choose one of {', '.join(SOLVER_NAMES)}")


__all__ = ["GaussSeidel", "Problem", "SolveReport", "make_solver", "SOLVER_NAMES"]
