"""Python entry points to the one-row kernels (for the solvers' set-up, tests, benches and the
FCLIB tools): the Coulomb cone, its local solvers and the quartic's roots, and the law
dispatcher's local solve. Python twins: parsolve/laws (same names)."""
import numpy as np
from codes cimport METHOD_COUNT
from coulomb cimport local_solve as _local_solve
from coulomb_cone cimport project_cone as _project_cone, natural_map_sq
from coulomb_quartic cimport poly_real_roots as _poly_real_roots, slide_quartic as _slide_quartic
from law cimport law_solve
from typedefs cimport kind_t


def project_cone(const double[::1] z, double mu):
    """P_K(z) for one 3-vector (normal first)."""
    out = np.empty(3)
    cdef double[::1] o = out
    _project_cone(&z[0], mu, &o[0])
    return out


def natural_map(const double[::1] r, const double[::1] u, double mu):
    """|r - P_K(r - (u_N + mu |u_T|, u_T))|."""
    return natural_map_sq(&r[0], &u[0], mu) ** 0.5


def local_solve(const double[:, ::1] W, const double[::1] b, double mu, r0=None,
                int method=0):
    """Solve one contact's Coulomb problem by local solver `method` (index in METHODS),
    warm from r0; returns (r, code) with code an outcome (index in OUTCOMES)."""
    if not 0 <= method < METHOD_COUNT:
        raise ValueError(f"local solver {method} out of range")
    out = np.zeros(3) if r0 is None else np.array(r0, dtype=float)
    cdef double[::1] o = out
    cdef int code = _local_solve(&W[0, 0], &b[0], mu, &o[0], method)
    return out, code


def row_solve(int kind, const double[:, ::1] W, const double[::1] b, const double[::1] param,
              r0=None, int method=0, R=None):
    """One row of any law: its reaction (warm from r0) and outcome code, through law.pxd; R
    (n, 3): the rows' reactions, which a linked law reads its partner's from."""
    if not 0 <= method < METHOD_COUNT:
        raise ValueError(f"local solver {method} out of range")
    out = np.zeros(3) if r0 is None else np.array(r0, dtype=float)
    cdef double[::1] o = out
    cdef const double[:, ::1] Rv = np.ascontiguousarray(R, dtype=float).reshape(-1, 3) \
        if R is not None and len(R) else np.zeros((1, 3))
    cdef int code = law_solve(<kind_t>kind, &param[0], &W[0, 0], &b[0], &o[0], method,
                              &Rv[0, 0])
    return out, code


def slide_quartic(const double[:, ::1] W, const double[::1] b, double mu):
    """The quartic sliding solve alone: r, or None when no admissible root."""
    out = np.zeros(3)
    cdef double[::1] o = out
    return out if _slide_quartic(&W[0, 0], &b[0], mu, &o[0]) else None


def poly_real_roots(coefficients):
    """Real roots (ascending) of sum c[i] x^i, degree <= 4."""
    cdef double a[5]
    cdef double roots[4]
    cdef int deg = len(coefficients) - 1, i, n
    if not 0 <= deg <= 4:
        raise ValueError("degree must be <= 4")
    for i in range(deg + 1):
        a[i] = coefficients[i]
    n = _poly_real_roots(a, deg, roots)
    return [roots[i] for i in range(n)]
