# Signorini-Coulomb (2/3): the sliding case of one contact's local problem as a quartic.
# Python twins: parsolve/laws/coulomb_local.py and parsolve/laws/roots.py, same names.
#
# Slide: r on the cone's boundary, r = r_N (1, mu cos(th), mu sin(th)), u_N = 0 and u_T
# opposite to r_T. The first line of u = W r + b gives r_N(th) = -b_N / D(th) with
# D = W_NN + mu (W_N1 cos + W_N2 sin) (r_T runs on a conic with a focus at the origin), and
# u_T parallel to r_T, (cos, sin) x u_T = 0, multiplied by D(th), is
#   A cos^2 + B sin^2 + C sin cos + D' sin + E cos = 0                       (eq. 12.15 of Siconos' developer notes)
# (coefficients below, from W and b in any tangent basis: no eigen-decomposition of W_TT is
# needed). With t = tan(th/2) it becomes P4 t^4 + P3 t^3 + P2 t^2 + P1 t + P0 = 0 with
# P4 = A - E, P3 = -2C + 2D', P2 = 4B - 2A, P1 = 2C + 2D', P0 = A + E (eq. 12.18);
# th = pi (t infinite) is a root when P4 = 0 and is tried directly. Each real root is
# polished by Newton on the angle, and kept if admissible: D > 0, r_N > 0, u_T . r_T < 0.
# R_T1 = 0 or R_T2 = 0 are the roots t = 0, +-1 and th = pi, found like the others.
#
# Real roots: poly_real_roots isolates them between the roots of the derivative (recursively
# down to a quadratic) and bisects each sign change: no companion matrix, no Ferrari
# cancellation, and a vanishing leading coefficient just lowers the degree.
from libc.math cimport sqrt, fabs, cos, sin, atan, M_PI
from coulomb_cone cimport natural_map_sq
from linalg cimport matvec3


cdef inline double poly_eval(const double* a, int deg, double x) noexcept nogil:
    cdef double p = a[deg]
    cdef int i
    for i in range(deg - 1, -1, -1):
        p = p * x + a[i]
    return p


cdef inline double poly_bisect(const double* a, int deg, double lo, double hi) noexcept nogil:
    """The root of a in [lo, hi] where a changes sign: Newton steps kept inside the bracket,
    bisection when a step would leave it, to full precision."""
    cdef double flo = poly_eval(a, deg, lo), x = 0.5 * (lo + hi), f, df, xn
    cdef int it, i
    for it in range(100):
        f = a[deg]; df = 0.0
        for i in range(deg - 1, -1, -1):
            df = df * x + f
            f = f * x + a[i]
        if f == 0.0:
            return x
        if (f < 0.0) == (flo < 0.0):
            lo = x; flo = f
        else:
            hi = x
        xn = x - f / df if df != 0.0 else 0.5 * (lo + hi)
        if not (lo < xn < hi):
            xn = 0.5 * (lo + hi)
        if fabs(xn - x) <= 1e-15 * fabs(x) or hi - lo <= 1e-15 * (fabs(lo) + fabs(hi)):
            return xn
        x = xn
    return x


cdef inline int poly_real_roots(const double* a, int deg, double* roots) noexcept nogil:
    """The real roots of sum a[i] x^i (deg <= 4), ascending, written to roots; their count."""
    cdef double big = 0.0, bound, lo, hi, flo, fhi, disc, q, x, tol
    cdef double d[4]
    cdef double crit[4]
    cdef double ends[6]
    cdef int i, j, n = 0, nc
    for i in range(deg + 1):
        big = max(big, fabs(a[i]))
    if big == 0.0:
        return 0
    while deg > 0 and fabs(a[deg]) <= 1e-14 * big:
        deg -= 1
    if deg == 0:
        return 0
    if deg == 1:
        roots[0] = -a[0] / a[1]
        return 1
    if deg == 2:
        disc = a[1] * a[1] - 4.0 * a[2] * a[0]
        if disc < 0.0:
            return 0
        q = -0.5 * (a[1] + (sqrt(disc) if a[1] >= 0.0 else -sqrt(disc)))
        if q == 0.0:
            roots[0] = 0.0
            return 1
        roots[0] = q / a[2]; roots[1] = a[0] / q
        if roots[0] > roots[1]:
            x = roots[0]; roots[0] = roots[1]; roots[1] = x
        return 2
    for i in range(deg):
        d[i] = (i + 1) * a[i + 1]
    nc = poly_real_roots(d, deg - 1, crit)
    bound = 0.0
    for i in range(deg):
        bound = max(bound, fabs(a[i] / a[deg]))
    bound += 1.0                                       # Cauchy's bound on every root
    ends[0] = -bound
    for i in range(nc):
        ends[i + 1] = min(max(crit[i], -bound), bound)
    ends[nc + 1] = bound
    tol = 1e-13 * big
    for j in range(nc + 1):
        lo = ends[j]; hi = ends[j + 1]
        flo = poly_eval(a, deg, lo); fhi = poly_eval(a, deg, hi)
        if j > 0 and fabs(flo) <= tol * (1.0 + fabs(lo) ** deg):
            x = lo                                     # a double root at a critical point
        elif (flo < 0.0) != (fhi < 0.0) and hi > lo:
            x = poly_bisect(a, deg, lo, hi)
        else:
            continue
        if n == 0 or x > roots[n - 1]:
            roots[n] = x
            n += 1
    return n


cdef inline void slide_trig(const double* W, const double* b, double mu, double* k) noexcept nogil:
    """k = (A, B, C, D', E) of eq. 12.15 for u = W r + b (W row major, normal first)."""
    k[0] = mu * (b[2] * W[1] - b[0] * W[7])
    k[1] = mu * (b[0] * W[5] - b[1] * W[2])
    k[2] = mu * (b[2] * W[2] - b[1] * W[1] - b[0] * (W[8] - W[4]))
    k[3] = b[0] * W[3] - b[1] * W[0]
    k[4] = b[2] * W[0] - b[0] * W[6]


cdef inline bint slide_candidate(const double* W, const double* b, double mu, double th,
                                 double* r, double* res) noexcept nogil:
    """The slide reaction for r_T along angle th; its admissibility and natural-map residual."""
    cdef double c = cos(th), s = sin(th), den, rn
    cdef double u[3]
    den = W[0] + mu * (W[1] * c + W[2] * s)
    if den <= 0.0:
        return False
    rn = -b[0] / den
    if rn <= 0.0:
        return False
    r[0] = rn; r[1] = mu * rn * c; r[2] = mu * rn * s
    matvec3(W, r, u)
    u[0] += b[0]; u[1] += b[1]; u[2] += b[2]
    if c * u[1] + s * u[2] > 0.0:                      # u_T must oppose r_T
        return False
    res[0] = sqrt(natural_map_sq(r, u, mu))
    return True


cdef inline bint slide_quartic(const double* W, const double* b, double mu,
                               double* r) noexcept nogil:
    """Slide by the quartic: the admissible root with the least residual (False if none)."""
    cdef double k[5]
    cdef double P[5]
    cdef double t[4]
    cdef double th[5]
    cdef double rc[3]
    cdef double c, s, f, df, res, best = -1.0, scale
    cdef int n, i, it
    slide_trig(W, b, mu, k)
    P[4] = k[0] - k[4]; P[3] = 2.0 * (k[3] - k[2]); P[2] = 4.0 * k[1] - 2.0 * k[0]
    P[1] = 2.0 * (k[2] + k[3]); P[0] = k[0] + k[4]
    n = poly_real_roots(P, 4, t)
    for i in range(n):
        th[i] = 2.0 * atan(t[i])
    th[n] = M_PI                                       # t = infinity
    n += 1
    for i in range(n):
        for it in range(3):                            # Newton on the angle form
            c = cos(th[i]); s = sin(th[i])
            f = k[0] * c * c + k[1] * s * s + k[2] * s * c + k[3] * s + k[4] * c
            df = (2.0 * (k[1] - k[0]) * s * c + k[2] * (c * c - s * s) + k[3] * c
                  - k[4] * s)
            if df == 0.0 or f == 0.0:
                break
            th[i] -= f / df
        if slide_candidate(W, b, mu, th[i], rc, &res) and (best < 0.0 or res < best):
            best = res
            r[0] = rc[0]; r[1] = rc[1]; r[2] = rc[2]
    if best < 0.0:
        return False
    scale = fabs(b[0]) + fabs(b[1]) + fabs(b[2]) + fabs(r[0]) + fabs(r[1]) + fabs(r[2])
    return best <= 1e-10 * scale
