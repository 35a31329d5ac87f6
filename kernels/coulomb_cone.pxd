# Signorini-Coulomb (1/3): the cone. One contact in its local frame, normal first:
# r = (r_N, r_T1, r_T2), K_mu = {r : |r_T| <= mu r_N}. Inline, so that every kernel that
# cimports this file gets them without a call across modules.
# Python twins: parsolve/laws/coulomb.py, same names.
from libc.math cimport sqrt


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
