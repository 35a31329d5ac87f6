# The bilateral law: the first m components of the row's velocity vanish (equalities, the
# reaction free in them) and its other components carry no reaction, m = p[0] in 1..3: a fixed
# point (m = 3, Solfec's FIXPNT), a fixed direction (m = 1, the first axis of the row's frame,
# Solfec's FIXDIR), a point on a line (m = 2). A target velocity or a drift correction enters
# through the free term B, not here. Python twin: parsolve/laws/bilateral.py, same names.
from codes cimport LOCAL_BILATERAL, LOCAL_FAILED
from linalg cimport solve3


cdef inline int bilateral_solve(const double* W, const double* b, const double* p,
                                double* r) noexcept nogil:
    """r with (W r + b)_i = 0 for i < m and r_i = 0 for i >= m; LOCAL_FAILED (r unchanged)
    when the m x m block of W is singular."""
    cdef int m = <int>p[0]
    cdef double mb[3]
    cdef double det
    if m >= 3:
        mb[0] = -b[0]; mb[1] = -b[1]; mb[2] = -b[2]
        return LOCAL_BILATERAL if solve3(W, mb, r) else LOCAL_FAILED
    if m == 2:
        det = W[0] * W[4] - W[1] * W[3]
        if det == 0.0:
            return LOCAL_FAILED
        r[0] = (-b[0] * W[4] + b[1] * W[1]) / det
        r[1] = (-b[1] * W[0] + b[0] * W[3]) / det
        r[2] = 0.0
        return LOCAL_BILATERAL
    if W[0] <= 0.0:
        return LOCAL_FAILED
    r[0] = -b[0] / W[0]; r[1] = 0.0; r[2] = 0.0
    return LOCAL_BILATERAL


cdef inline double bilateral_residual_sq(const double* p, const double* r,
                                         const double* u) noexcept nogil:
    """|e|^2 with e_i = u_i for i < m (the equality) and r_i for i >= m (no reaction)."""
    cdef int m = <int>p[0], i
    cdef double s = 0.0
    for i in range(3):
        s += u[i] * u[i] if i < m else r[i] * r[i]
    return s


cdef inline void bilateral_phi(const double* p, const double* r, const double* u,
                               double rho_n, double rho_t, double* phi, double* A,
                               double* B) noexcept nogil:
    """The law as a (smooth) Alart-Curnier-like function: Phi_i = rho_i u_i for i < m,
    r_i for i >= m; with A = dPhi/dr and B = dPhi/du when A is not NULL."""
    cdef int m = <int>p[0], i
    cdef double rho
    for i in range(3):
        rho = rho_n if i == 0 else rho_t
        phi[i] = rho * u[i] if i < m else r[i]
    if A == NULL:
        return
    for i in range(9):
        A[i] = 0.0; B[i] = 0.0
    for i in range(3):
        if i < m:
            B[4 * i] = rho_n if i == 0 else rho_t
        else:
            A[4 * i] = 1.0


cdef inline void bilateral_project(const double* p, const double* z, double* r) noexcept nogil:
    """The nearest admissible reaction: z with its components i >= m zeroed."""
    cdef int m = <int>p[0], i
    for i in range(3):
        r[i] = z[i] if i < m else 0.0
