# Rolling and spinning resistance (Siconos' rolling friction contact, Chrono's rolling and
# spinning friction): a contact's companion row of the rotation geometry, U = E (w_A - w_B)
# (spin about the normal first, then the two rolling components) and R the angular impulse on
# A, with
#     |R_S| <= mu_s r_N,   |R_R| <= mu_r r_N,   -U in the normal cone of that set at R
# (maximal dissipation: the moment opposes the relative rotation at its bound, and holds it
# inside), r_N the normal impulse of the row's contact, read from the reactions R during the
# solve. p = (mu_s, mu_r, companion's row index or -1). Python twin: parsolve/laws/rolling.py.
from libc.math cimport sqrt, fabs, hypot, signbit
from codes cimport LOCAL_ROLLING, LOCAL_FAILED
from linalg cimport disc_min
from typedefs cimport index_t


cdef inline double rolling_normal(const double* p, const double* R) noexcept nogil:
    """The normal impulse of the row's contact (row p[2] of R), 0 without one or below 0."""
    cdef index_t c = <index_t>p[2]
    cdef double x
    if c < 0:
        return 0.0
    x = R[3 * c]
    return x if x > 0.0 else 0.0


cdef inline double _objective(const double* W, const double* b, const double* r) noexcept nogil:
    """1/2 r^T W r + b^T r."""
    cdef double s = 0.0
    cdef int i
    for i in range(3):
        s += r[i] * (0.5 * (W[3 * i] * r[0] + W[3 * i + 1] * r[1] + W[3 * i + 2] * r[2]) + b[i])
    return s


cdef inline bint _same(double a, double b) noexcept nogil:
    """a and b the same double, the sign of a zero included (NaN never)."""
    return a == b and signbit(a) == signbit(b)


cdef inline void _spin_at(const double* W, const double* b, double s, double rho,
                          const double* free, double* r) noexcept nogil:
    """r with the spin at s and the rolling part the minimum over its disc. free: the disc
    problem solved with the spin free (s00, s01, s11, c0, c1, x0, x1): when this one is the
    same to the bit (no coupling of spin and rolling in W, as for spheres), its minimum is
    taken, not computed again."""
    cdef double q01 = 0.5 * (W[5] + W[7]), c0 = b[1] + W[3] * s, c1 = b[2] + W[6] * s
    cdef double x[2]
    if (_same(W[4], free[0]) and _same(q01, free[1]) and _same(W[8], free[2])
            and _same(c0, free[3]) and _same(c1, free[4])):
        x[0] = free[5]; x[1] = free[6]
    else:
        disc_min(W[4], q01, W[8], c0, c1, rho, x)
    r[0] = s; r[1] = x[0]; r[2] = x[1]


cdef inline int rolling_solve(const double* W, const double* b, const double* p,
                              const double* R, double* r) noexcept nogil:
    """The exact minimum of 1/2 r^T W r + b^T r over |r_S| <= s, |r_R| <= rho (s = mu_s r_N,
    rho = mu_r r_N), which is the law's solution for u = W r + b: with the spin free (u_S = 0)
    the rolling part is the disc's minimum of the Schur complement's quadratic; if that spin
    exceeds s, the spin sits at +s or -s (the lower of the two) over the disc's minimum.
    LOCAL_FAILED (r unchanged) when W is not positive definite."""
    cdef double rn = rolling_normal(p, R), s, rho, w = W[0], spin, s00, s01, s11
    cdef double x[2]
    cdef double plus[3]
    cdef double free[7]
    if not w > 0.0:
        return LOCAL_FAILED
    s00 = W[4] - W[3] * W[1] / w
    s01 = 0.5 * ((W[5] - W[3] * W[2] / w) + (W[7] - W[6] * W[1] / w))
    s11 = W[8] - W[6] * W[2] / w
    if not (s00 > 0.0 and s00 * s11 - s01 * s01 > 0.0):
        return LOCAL_FAILED
    s = p[0] * rn
    rho = p[1] * rn
    if s == 0.0 and rho == 0.0:
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return LOCAL_ROLLING
    free[0] = s00; free[1] = s01; free[2] = s11
    free[3] = b[1] - W[3] * b[0] / w; free[4] = b[2] - W[6] * b[0] / w
    disc_min(s00, s01, s11, free[3], free[4], rho, x)
    spin = -(b[0] + W[1] * x[0] + W[2] * x[1]) / w
    if fabs(spin) <= s:
        r[0] = spin; r[1] = x[0]; r[2] = x[1]
        return LOCAL_ROLLING
    free[5] = x[0]; free[6] = x[1]
    _spin_at(W, b, s, rho, free, plus)
    _spin_at(W, b, -s, rho, free, r)
    if _objective(W, b, plus) < _objective(W, b, r):
        r[0] = plus[0]; r[1] = plus[1]; r[2] = plus[2]
    return LOCAL_ROLLING


cdef inline void rolling_project(const double* p, const double* z, const double* R,
                                 double* r) noexcept nogil:
    """r = the Euclidean projection of z onto the bounds: the spin clipped to [-s, s], the
    rolling part onto the disc of radius rho."""
    cdef double rn = rolling_normal(p, R)
    cdef double s = p[0] * rn, rho = p[1] * rn
    cdef double nt = sqrt(z[1] * z[1] + z[2] * z[2])
    r[0] = s if z[0] > s else (-s if z[0] < -s else z[0])
    if nt <= rho:
        r[1] = z[1]; r[2] = z[2]
    else:
        r[1] = rho * (z[1] / nt); r[2] = rho * (z[2] / nt)


cdef inline double rolling_residual_sq(const double* p, const double* r, const double* u,
                                       const double* R) noexcept nogil:
    """|e|^2, e = r - P(r - u): zero iff (u, r) satisfy the law."""
    cdef double z[3]
    cdef double q[3]
    z[0] = r[0] - u[0]; z[1] = r[1] - u[1]; z[2] = r[2] - u[2]
    rolling_project(p, z, R, q)
    return (r[0] - q[0]) ** 2 + (r[1] - q[1]) ** 2 + (r[2] - q[2]) ** 2


cdef inline void rolling_phi(const double* p, const double* r, const double* u, double rho_n,
                             double rho_t, const double* R, double* phi, double* A, double* B,
                             double* C) noexcept nogil:
    """Phi = r - P(z), z = (r_S - rho_n u_S, r_R - rho_t u_R) (Alart-Curnier's form); with A,
    B (3 x 3) when A is not NULL, and C = dPhi/dr_N (3: its column on the contact's normal
    impulse) when C is not NULL."""
    cdef double rn = rolling_normal(p, R)
    cdef double s = p[0] * rn, rho = p[1] * rn
    cdef double z0 = r[0] - rho_n * u[0], z1 = r[1] - rho_t * u[1], z2 = r[2] - rho_t * u[2]
    cdef double nz = hypot(z1, z2), h1, h2, scale, q11, q12, q22
    cdef bint clipped = z0 > s or z0 < -s, slide = nz > rho
    cdef int i
    scale = rho / nz if slide else 1.0
    phi[0] = r[0] - (s if z0 > s else (-s if z0 < -s else z0))
    phi[1] = r[1] - scale * z1
    phi[2] = r[2] - scale * z2
    if A == NULL:
        return
    for i in range(9):
        A[i] = 0.0; B[i] = 0.0
    h1, h2 = (z1 / nz, z2 / nz) if nz > 0.0 else (z1, z2)
    q11, q12, q22 = 1.0, 0.0, 1.0
    if slide:
        q11, q12, q22 = scale * (1.0 - h1 * h1), scale * (0.0 - h1 * h2), scale * (1.0 - h2 * h2)
    A[0] = 1.0 if clipped else 0.0
    B[0] = 0.0 if clipped else rho_n
    A[4] = 1.0 - q11; A[5] = 0.0 - q12; A[7] = 0.0 - q12; A[8] = 1.0 - q22
    B[4] = rho_t * q11; B[5] = rho_t * q12; B[7] = rho_t * q12; B[8] = rho_t * q22
    if C == NULL:
        return
    C[0] = 0.0; C[1] = 0.0; C[2] = 0.0
    if rn > 0.0:
        if clipped:
            C[0] = -p[0] if z0 > s else p[0]
        if slide:
            C[1] = -(p[1] * h1); C[2] = -(p[1] * h2)
