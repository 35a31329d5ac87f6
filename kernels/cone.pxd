# Coulomb cone operations on one contact, in the local frame with the normal first:
# r = (r_N, r_T1, r_T2). K_mu = {r : |r_T| <= mu r_N}. Inline, so that every kernel that
# cimports this file gets them without a call across modules.
from libc.math cimport sqrt, fabs


cdef inline void project_cone(const double* z, double mu, double* r) noexcept nogil:
    """r = P_K(z), the Euclidean projection of z onto the Coulomb cone K_mu."""
    cdef double zn = z[0], nt = sqrt(z[1] * z[1] + z[2] * z[2]), rn, s
    if nt <= mu * zn and zn > 0.0:         # inside the cone
        r[0] = zn; r[1] = z[1]; r[2] = z[2]
    elif mu * nt <= -zn:                   # inside the polar cone
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
    else:                                  # onto the boundary ray nearest to z
        rn = (zn + mu * nt) / (1.0 + mu * mu)
        if rn <= 0.0:                      # underflow: the apex
            r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
            return
        s = mu * rn / nt
        r[0] = rn; r[1] = s * z[1]; r[2] = s * z[2]


cdef inline double natural_map_sq(const double* r, const double* u, double mu) noexcept nogil:
    """|r - P_K(r - (u_N + mu |u_T|, u_T))|^2: zero iff (u, r) solve the local Coulomb problem."""
    cdef double z[3]
    cdef double p[3]
    cdef double ut = sqrt(u[1] * u[1] + u[2] * u[2])
    z[0] = r[0] - (u[0] + mu * ut); z[1] = r[1] - u[1]; z[2] = r[2] - u[2]
    project_cone(z, mu, p)
    return (r[0] - p[0]) ** 2 + (r[1] - p[1]) ** 2 + (r[2] - p[2]) ** 2


cdef inline void matvec3(const double* W, const double* x, double* y) noexcept nogil:
    y[0] = W[0] * x[0] + W[1] * x[1] + W[2] * x[2]
    y[1] = W[3] * x[0] + W[4] * x[1] + W[5] * x[2]
    y[2] = W[6] * x[0] + W[7] * x[1] + W[8] * x[2]


cdef inline bint solve3(const double* W, const double* b, double* x) noexcept nogil:
    """x = W^-1 b by cofactors; False when W is singular to round-off."""
    cdef double c00 = W[4] * W[8] - W[5] * W[7]
    cdef double c01 = W[5] * W[6] - W[3] * W[8]
    cdef double c02 = W[3] * W[7] - W[4] * W[6]
    cdef double det = W[0] * c00 + W[1] * c01 + W[2] * c02
    cdef double scale = fabs(W[0]) + fabs(W[4]) + fabs(W[8])
    if fabs(det) <= 1e-14 * scale * scale * scale:
        return False
    cdef double inv = 1.0 / det
    x[0] = (c00 * b[0] + (W[2] * W[7] - W[1] * W[8]) * b[1] + (W[1] * W[5] - W[2] * W[4]) * b[2]) * inv
    x[1] = (c01 * b[0] + (W[0] * W[8] - W[2] * W[6]) * b[1] + (W[2] * W[3] - W[0] * W[5]) * b[2]) * inv
    x[2] = (c02 * b[0] + (W[1] * W[6] - W[0] * W[7]) * b[1] + (W[0] * W[4] - W[1] * W[3]) * b[2]) * inv
    return True
