# The connector law (Exudyn's CoordinateSpringDamperExt as a scalar row): R_T = 0 and
# R_N - a - g U_N in -c Sgn(U_N), p = (a, g, c), g <= 0 <= c. c = 0: the spring law
# R_N = a + g U_N (the linearised spring-damper, bristle friction and limit stops, implicit);
# c > 0: an exact Coulomb friction impulse of bound c beside it. Python twin:
# parsolve/laws/connector.py, same names.
from codes cimport LOCAL_CONNECTOR, LOCAL_FAILED


cdef inline double _clip(double z, double c) noexcept nogil:
    if z > c:
        return c
    if z < -c:
        return -c
    return z


cdef inline int connector_solve(const double* W, const double* b, const double* p,
                                double* r) noexcept nogil:
    """The exact scalar solve: stick (U_N = 0) if |r0 - a| <= c, else slide; LOCAL_FAILED
    (r unchanged) if 1 - g W_NN <= 0, or W_NN <= 0 with c > 0."""
    cdef double w = W[0], den = 1.0 - p[1] * W[0], x, s
    if den <= 0.0 or (p[2] > 0.0 and w <= 0.0):
        return LOCAL_FAILED
    if p[2] > 0.0:
        x = -b[0] / w
        s = x - p[0]
        if s > p[2]:
            x = (p[0] + p[1] * b[0] + p[2]) / den
        elif s < -p[2]:
            x = (p[0] + p[1] * b[0] - p[2]) / den
    else:
        x = (p[0] + p[1] * b[0]) / den
    r[0] = x; r[1] = 0.0; r[2] = 0.0
    return LOCAL_CONNECTOR


cdef inline double connector_residual_sq(const double* p, const double* r,
                                         const double* u) noexcept nogil:
    """|e|^2, e = (s - proj_[-c, c](s - u_N), r_T), s = r_N - a - g u_N."""
    cdef double s = r[0] - p[0] - p[1] * u[0]
    cdef double e = s - _clip(s - u[0], p[2])
    return e * e + r[1] * r[1] + r[2] * r[2]


cdef inline void connector_phi(const double* p, const double* r, const double* u,
                               double rho_n, double* phi, double* A,
                               double* B) noexcept nogil:
    """Phi_N = s - proj_[-c, c](s - rho_n u_N), Phi_T = r_T; A = dPhi/dr, B = dPhi/du."""
    cdef int i
    cdef double s = r[0] - p[0] - p[1] * u[0]
    cdef double z = s - rho_n * u[0]
    phi[0] = s - _clip(z, p[2]); phi[1] = r[1]; phi[2] = r[2]
    if A == NULL:
        return
    for i in range(9):
        A[i] = 0.0; B[i] = 0.0
    A[4] = 1.0; A[8] = 1.0
    if z < p[2] and z > -p[2]:
        B[0] = rho_n
    else:
        A[0] = 1.0
        B[0] = -p[1]


cdef inline void connector_project(const double* z, double* r) noexcept nogil:
    r[0] = z[0]; r[1] = 0.0; r[2] = 0.0
