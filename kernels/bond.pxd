# The cohesive bond (LMGC90's cohesive laws, Solfec's cohesion, Yade's cohesive-frictional law):
# while intact, a point of U = 0 whose reaction stays in the strength domain
#     S = {R_N >= -t, |R_T| <= c + mu R_N}
# (Mohr-Coulomb with a tension cut-off; t = T h and c = C h the impulses of the tensile strength
# and the cohesion over the step), by the associated law R = P_S(R - U): -U in the normal cone
# of S at R (the joint moves only where its reaction is at its strength, and then away from
# S). Inert (broken): R = 0. p = (t, c, mu, mode), mode 0 intact, 1 inert. Python twin:
# parsolve/laws/bond.py, same names.
from libc.math cimport sqrt, fabs, hypot
from codes cimport LOCAL_BOND, LOCAL_FAILED
from linalg cimport disc_min, solve3


cdef inline bint bond_inside(const double* p, const double* r) noexcept nogil:
    return r[0] >= -p[0] and sqrt(r[1] * r[1] + r[2] * r[2]) <= p[1] + p[2] * r[0]


cdef inline void bond_project(const double* p, const double* z, double* r) noexcept nogil:
    """r = P_S(z), the Euclidean projection onto S (0 for an inert row): onto the shifted cone
    |r_T| <= c + mu r_N, else onto the cut-off's half-space, else onto their common circle."""
    cdef double t = p[0], c = p[1], mu = p[2], nt, rho
    if p[3] != 0.0:
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return
    nt = sqrt(z[1] * z[1] + z[2] * z[2])
    if nt <= c + mu * z[0]:                               # inside the shifted cone
        r[0] = z[0]; r[1] = z[1]; r[2] = z[2]
    else:
        rho = (c + mu * z[0] + mu * mu * nt) / (1.0 + mu * mu)
        if rho <= 0.0:                                    # its apex
            r[0] = -c / mu if mu > 0.0 else z[0]
            r[1] = 0.0; r[2] = 0.0
        else:
            r[0] = (z[0] + mu * nt - mu * c) / (1.0 + mu * mu)
            r[1] = rho * (z[1] / nt); r[2] = rho * (z[2] / nt)
    if r[0] >= -t:
        return
    r[0] = -t                                             # the cut-off's half-space
    r[1] = z[1]; r[2] = z[2]
    rho = c - mu * t
    if nt > rho:                                          # the circle
        r[1] = rho * (z[1] / nt); r[2] = rho * (z[2] / nt)


cdef inline double _tangent_min(const double* W, const double* b, const double* p, double rn,
                                double* r) noexcept nogil:
    """r = (rn, the minimum over the disc |r_T| <= c + mu rn) and the slope there of the
    minimum over r_T as a function of rn: u_N + mu (u_T . r_T) / rho, or u_N - mu |u_T| at the
    cone's apex."""
    cdef double rho = p[1] + p[2] * rn, un, u1, u2
    cdef double x[2]
    disc_min(W[4], 0.5 * (W[5] + W[7]), W[8], b[1] + W[3] * rn, b[2] + W[6] * rn, rho, x)
    r[0] = rn; r[1] = x[0]; r[2] = x[1]
    un = W[0] * rn + W[1] * x[0] + W[2] * x[1] + b[0]
    u1 = W[3] * rn + W[4] * x[0] + W[5] * x[1] + b[1]
    u2 = W[6] * rn + W[7] * x[0] + W[8] * x[1] + b[2]
    if rho > 0.0:
        return un + p[2] * (u1 * x[0] + u2 * x[1]) / rho
    return un - p[2] * sqrt(u1 * u1 + u2 * u2)


cdef inline int bond_solve(const double* W, const double* b, const double* p,
                           double* r) noexcept nogil:
    """The exact minimum of 1/2 r^T W r + b^T r over S, which is the law's solution for
    u = W r + b: the unconstrained minimum if it lies in S, else the minimum over r_T (a disc's)
    as a convex function of r_N, minimised on [max(-t, -c/mu), inf) by its slope's root
    (bracketed, then Illinois' regula falsi to round-off). LOCAL_FAILED (r unchanged) when W
    is singular."""
    cdef double x[3]
    cdef double q[3]
    cdef double lo, hi, flo, fhi, m, fm, step, scale
    cdef int k, side = 0
    if p[3] != 0.0:
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return LOCAL_BOND
    q[0] = -b[0]; q[1] = -b[1]; q[2] = -b[2]
    if not solve3(W, q, x):
        return LOCAL_FAILED
    if bond_inside(p, x):
        r[0] = x[0]; r[1] = x[1]; r[2] = x[2]
        return LOCAL_BOND
    lo = -p[0]
    if p[2] > 0.0 and -p[1] / p[2] > lo:
        lo = -p[1] / p[2]
    flo = _tangent_min(W, b, p, lo, r)
    if flo >= 0.0:                                       # at the cut-off (or the apex)
        return LOCAL_BOND
    scale = fabs(x[0] - lo) + p[0] + p[1] + fabs(lo)
    step = scale if scale > 0.0 else 1.0
    for k in range(200):                                 # a point where the slope is >= 0
        hi = lo + step
        fhi = _tangent_min(W, b, p, hi, q)
        if fhi >= 0.0:
            break
        lo, flo = hi, fhi
        step = 2.0 * step
    for k in range(200):
        if not hi - lo > 1e-15 * (fabs(lo) + fabs(hi) + scale):
            break
        m = hi - fhi * (hi - lo) / (fhi - flo)
        if not (m > lo and m < hi):
            m = 0.5 * (lo + hi)
        fm = _tangent_min(W, b, p, m, q)
        if fm == 0.0:
            lo = m
            hi = m
        elif fm < 0.0:
            lo, flo = m, fm
            if side == -1:
                fhi = 0.5 * fhi
            side = -1
        else:
            hi, fhi = m, fm
            if side == 1:
                flo = 0.5 * flo
            side = 1
    _tangent_min(W, b, p, 0.5 * (lo + hi), r)
    return LOCAL_BOND


cdef inline double bond_residual_sq(const double* p, const double* r,
                                    const double* u) noexcept nogil:
    """|e|^2, e = r - P_S(r - u) (e = r for an inert row)."""
    cdef double z[3]
    cdef double q[3]
    z[0] = r[0] - u[0]; z[1] = r[1] - u[1]; z[2] = r[2] - u[2]
    bond_project(p, z, q)
    return (r[0] - q[0]) ** 2 + (r[1] - q[1]) ** 2 + (r[2] - q[2]) ** 2


cdef inline void bond_phi(const double* p, const double* r, const double* u, double rho_n,
                          double rho_t, double* phi, double* A, double* B) noexcept nogil:
    """Phi = r - P_S(z), z = r - rho u (rho_n on the normal, rho_t on the tangent), with
    A = I - P' and B = rho P' (P' the Jacobian of P_S at z) when A is not NULL."""
    cdef double z[3]
    cdef double q[3]
    cdef double P[9]
    cdef double t = p[0], c = p[1], mu = p[2], nt, rho, h1, h2, k, f
    cdef int i, j
    z[0] = r[0] - rho_n * u[0]; z[1] = r[1] - rho_t * u[1]; z[2] = r[2] - rho_t * u[2]
    bond_project(p, z, q)
    phi[0] = r[0] - q[0]; phi[1] = r[1] - q[1]; phi[2] = r[2] - q[2]
    if A == NULL:
        return
    for i in range(9):
        P[i] = 0.0
    nt = hypot(z[1], z[2])
    h1, h2 = (z[1] / nt, z[2] / nt) if nt > 0.0 else (0.0, 0.0)
    if p[3] != 0.0:
        pass                                              # inert: P' = 0
    elif z[0] >= -t and nt <= c + mu * z[0]:              # inside: P' = I
        P[0] = 1.0; P[4] = 1.0; P[8] = 1.0
    elif q[0] > -t:                                       # on the cone's face (not its apex)
        rho = (c + mu * z[0] + mu * mu * nt) / (1.0 + mu * mu)
        if rho > 0.0:
            k = 1.0 / (1.0 + mu * mu)
            f = rho / nt
            P[0] = k; P[1] = k * mu * h1; P[2] = k * mu * h2
            P[3] = k * mu * h1; P[6] = k * mu * h2
            P[4] = k * mu * mu * h1 * h1 + f * (1.0 - h1 * h1)
            P[5] = k * mu * mu * h1 * h2 - f * h1 * h2
            P[7] = P[5]
            P[8] = k * mu * mu * h2 * h2 + f * (1.0 - h2 * h2)
        elif mu == 0.0:                                   # the axis of a cylinder of radius 0
            P[0] = 1.0
    elif nt <= c - mu * t:                                # on the cut-off's face
        P[4] = 1.0; P[8] = 1.0
    elif nt > 0.0:                                        # on the circle
        f = (c - mu * t) / nt
        P[4] = f * (1.0 - h1 * h1); P[5] = -f * h1 * h2; P[7] = P[5]
        P[8] = f * (1.0 - h2 * h2)
    for i in range(3):
        for j in range(3):
            A[3 * i + j] = (1.0 if i == j else 0.0) - P[3 * i + j]
            B[3 * i + j] = (rho_n if j == 0 else rho_t) * P[3 * i + j]
