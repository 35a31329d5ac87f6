# The spring law: the row's normal impulse is an affine function of its normal velocity,
# R_N = a + g U_N, and it carries no tangential impulse, R_T = 0; p = (a, g). A spring-damper
# force F(d, d') over the step, at its mean stretch and rate and linearised at its start
# (parsolve/laws/spring.py), is such a law with g = h (h/4 dF/dd + 1/2 dF/dd') <= 0 for a
# restoring force: implicit, so stable whatever the stiffness. Python twin: parsolve/laws/spring.py.
from codes cimport LOCAL_SPRING, LOCAL_FAILED


cdef inline int spring_solve(const double* W, const double* b, const double* p,
                             double* r) noexcept nogil:
    """r_N = a + g (W_NN r_N + b_N), r_T = 0; LOCAL_FAILED (r unchanged) if 1 - g W_NN <= 0."""
    cdef double den = 1.0 - p[1] * W[0]
    if den <= 0.0:
        return LOCAL_FAILED
    r[0] = (p[0] + p[1] * b[0]) / den
    r[1] = 0.0; r[2] = 0.0
    return LOCAL_SPRING


cdef inline double spring_residual_sq(const double* p, const double* r,
                                      const double* u) noexcept nogil:
    """|e|^2, e = (r_N - a - g u_N, r_T)."""
    cdef double e = r[0] - p[0] - p[1] * u[0]
    return e * e + r[1] * r[1] + r[2] * r[2]


cdef inline void spring_phi(const double* p, const double* r, const double* u, double* phi,
                            double* A, double* B) noexcept nogil:
    """Phi = e (smooth): A = I, B = -g e_N e_N^T."""
    cdef int i
    phi[0] = r[0] - p[0] - p[1] * u[0]; phi[1] = r[1]; phi[2] = r[2]
    if A == NULL:
        return
    for i in range(9):
        A[i] = 0.0; B[i] = 0.0
    A[0] = 1.0; A[4] = 1.0; A[8] = 1.0
    B[0] = -p[1]


cdef inline void spring_project(const double* z, double* r) noexcept nogil:
    r[0] = z[0]; r[1] = 0.0; r[2] = 0.0
