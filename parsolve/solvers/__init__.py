"""Solvers of C(U, R) = 0 with U = B + W R.

make_solver(name, **options) builds one by its command-line name: "gs" (Gauss-Seidel),
"newton" (global semismooth Newton over PETSc) or "hybrid" (Gauss-Seidel, then Newton when it
stalls). Model scripts may build the classes directly.
"""
from .gauss_seidel import GaussSeidel, SolveReport
from .problem import Problem

SOLVER_NAMES = ("gs", "newton", "hybrid")


def make_solver(name, **options):
    """The solver called `name` (one of SOLVER_NAMES), built with `options`."""
    from ..errors import InputError

    if name == "gs":
        return GaussSeidel(**options)
    if name in ("newton", "hybrid"):
        from .newton import Hybrid, SemismoothNewton

        return (SemismoothNewton if name == "newton" else Hybrid)(**options)
    raise InputError(f"unknown solver {name!r}: choose one of {', '.join(SOLVER_NAMES)}")


__all__ = ["GaussSeidel", "Problem", "SolveReport", "make_solver", "SOLVER_NAMES"]
