"""Python entry points to the one-contact kernels of cone.pxd and local.pxd (for tests, benches
and the FCLIB tools). The pure-Python twins are in parsolve/solvers/reference.py."""
import numpy as np
from cone cimport project_cone, natural_map_sq
from local cimport local_solve as _local_solve, METHOD_COUNT
from quartic cimport poly_real_roots, slide_quartic


def project(const double[::1] z, double mu):
    """P_K(z) for one 3-vector (normal first)."""
    out = np.empty(3)
    cdef double[::1] o = out
    project_cone(&z[0], mu, &o[0])
    return out


def natural_map(const double[::1] r, const double[::1] u, double mu):
    """|r - P_K(r - (u_N + mu |u_T|, u_T))|."""
    return natural_map_sq(&r[0], &u[0], mu) ** 0.5


def local_solve(const double[:, ::1] W, const double[::1] b, double mu, r0=None,
                int method=0):
    """Solve one contact's local problem by local solver `method` (index in LOCAL_SOLVERS),
    warm from r0; returns (r, code) with code a LOCAL_* outcome."""
    if not 0 <= method < METHOD_COUNT:
        raise ValueError(f"local solver {method} out of range")
    out = np.zeros(3) if r0 is None else np.array(r0, dtype=float)
    cdef double[::1] o = out
    cdef int code = _local_solve(&W[0, 0], &b[0], mu, &o[0], method)
    return out, code


def quartic_slide(const double[:, ::1] W, const double[::1] b, double mu):
    """The quartic sliding solve alone: r, or None when no admissible root."""
    out = np.zeros(3)
    cdef double[::1] o = out
    return out if slide_quartic(&W[0, 0], &b[0], mu, &o[0]) else None


def real_roots(coefficients):
    """Real roots (ascending) of sum c[i] x^i, degree <= 4."""
    cdef double a[5]
    cdef double roots[4]
    cdef int deg = len(coefficients) - 1, i, n
    if not 0 <= deg <= 4:
        raise ValueError("degree must be <= 4")
    for i in range(deg + 1):
        a[i] = coefficients[i]
    n = poly_real_roots(a, deg, roots)
    return [roots[i] for i in range(n)]
