"""Solvers of C(U, R) = 0 with U = B + W R."""
from .gauss_seidel import GaussSeidel, SolveReport

__all__ = ["GaussSeidel", "SolveReport"]
