# The local problem of one contact: given its Delassus block W (3 x 3, row major, normal first),
# its free velocity b (the rest of the row of U = B + W R, couplings included) and mu, find r in
# K_mu with u = W r + b such that (u, r) satisfy Signorini-Coulomb's law.
#
# local_enumerate tries the three cases of the law in turn: take-off (b_N >= 0 gives r = 0),
# stick (u = 0), slide (u_N = 0, r_T = -mu r_N d, u_T = |u_T| d). Slide is solved for the
# slip angle of d: Newton-secant on f = d x u_T(d) from the stick reaction's direction (a few
# steps; exact in two when W_TT is isotropic, as for spheres), then a scan of the angle with
# bisection on the sign changes of f. If none of them gives an admissible slide, a projected fixed-point iteration
# r <- P_K(r - rho (u + mu |u_T| e_N)) is the last resort. The returned r is always in K_mu.
from libc.math cimport sqrt, fabs, cos, sin, atan2, M_PI
from cone cimport project_cone, natural_map_sq, matvec3, solve3

cdef enum:
    LOCAL_TAKEOFF = 0
    LOCAL_STICK = 1
    LOCAL_SLIDE = 2
    LOCAL_FALLBACK = 3
    LOCAL_FAILED = 4
    LOCAL_NCODES = 5


cdef inline bint slide_eval(const double* W, const double* b, double mu, double c, double s,
                            double* r, double* f, double* g) noexcept nogil:
    """Reaction on the cone's boundary for slip direction d = (c, s); f = d x u_T, g = d . u_T."""
    cdef double denom = W[0] - mu * (W[1] * c + W[2] * s)
    if denom <= 0.0:
        return False
    cdef double rn = -b[0] / denom
    r[0] = rn; r[1] = -mu * rn * c; r[2] = -mu * rn * s
    cdef double ut1 = W[3] * r[0] + W[4] * r[1] + W[5] * r[2] + b[1]
    cdef double ut2 = W[6] * r[0] + W[7] * r[1] + W[8] * r[2] + b[2]
    f[0] = c * ut2 - s * ut1
    g[0] = c * ut1 + s * ut2
    return True


cdef inline bint slide_direction(const double* W, const double* b, double mu, double c0,
                                 double s0, double* r) noexcept nogil:
    """Slide by Newton-secant on the slip angle: f(theta) = d x u_T(d) = 0 with d . u_T > 0.

    (The plain fixed point d <- u_T/|u_T| is repelling when |u_T| is small against mu r_N W_TT,
    i.e. near the stick-slip transition; the root of f is found there too.)"""
    cdef double th0 = atan2(s0, c0), th1, f0, f1, g, th2
    cdef int it
    if not slide_eval(W, b, mu, c0, s0, r, &f0, &g):
        return False
    th1 = th0 + 1e-4
    if not slide_eval(W, b, mu, cos(th1), sin(th1), r, &f1, &g):
        return False
    for it in range(50):
        if f1 == f0:
            break
        th2 = th1 - f1 * (th1 - th0) / (f1 - f0)
        th0 = th1; f0 = f1; th1 = th2
        if not slide_eval(W, b, mu, cos(th1), sin(th1), r, &f1, &g):
            return False
        if fabs(th1 - th0) <= 1e-14 * (1.0 + fabs(th1)):
            return g > 0.0
    return g > 0.0 and fabs(f1) <= 1e-14 * (fabs(b[1]) + fabs(b[2]) + fabs(b[0]))


cdef inline bint slide_scan(const double* W, const double* b, double mu, double c0, double s0,
                            double* r) noexcept nogil:
    """All slide solutions by angle scan and bisection; keeps the one nearest to (c0, s0)."""
    cdef int n = 96, k, it
    cdef double th0, th1, f0, f1, g0, g1, fm, gm, tm, best = -3.0, proj
    cdef double rt[3]
    cdef bint ok0, ok1, okm, found = False
    th0 = 0.0
    ok0 = slide_eval(W, b, mu, 1.0, 0.0, rt, &f0, &g0)
    for k in range(1, n + 1):
        th1 = 2.0 * M_PI * k / n
        ok1 = slide_eval(W, b, mu, cos(th1), sin(th1), rt, &f1, &g1)
        if ok0 and ok1 and (f0 == 0.0 or f0 * f1 < 0.0):
            tm = th0
            if f0 != 0.0:
                for it in range(64):
                    tm = 0.5 * (th0 + th1)
                    okm = slide_eval(W, b, mu, cos(tm), sin(tm), rt, &fm, &gm)
                    if not okm:
                        break
                    if (fm < 0.0) == (f0 < 0.0):
                        th0 = tm; f0 = fm
                    else:
                        th1 = tm
            okm = slide_eval(W, b, mu, cos(tm), sin(tm), rt, &fm, &gm)
            if okm and gm > 0.0:
                proj = cos(tm) * c0 + sin(tm) * s0
                if proj > best:
                    best = proj; found = True
                    r[0] = rt[0]; r[1] = rt[1]; r[2] = rt[2]
        th0 = th1; f0 = f1; g0 = g1; ok0 = ok1
    return found


cdef inline int project_iterate(const double* W, const double* b, double mu, double* r,
                                double tol, int maxit) noexcept nogil:
    cdef double rho, d, nr, ut
    cdef double u[3]
    cdef double z[3]
    cdef double p[3]
    cdef int it, k
    rho = fabs(W[0]) + fabs(W[1]) + fabs(W[2])
    rho = max(rho, fabs(W[3]) + fabs(W[4]) + fabs(W[5]))
    rho = 1.0 / max(rho, fabs(W[6]) + fabs(W[7]) + fabs(W[8]))
    project_cone(r, mu, p)
    r[0] = p[0]; r[1] = p[1]; r[2] = p[2]
    for it in range(maxit):
        matvec3(W, r, u)
        for k in range(3):
            u[k] += b[k]
        ut = sqrt(u[1] * u[1] + u[2] * u[2])
        z[0] = r[0] - rho * (u[0] + mu * ut); z[1] = r[1] - rho * u[1]; z[2] = r[2] - rho * u[2]
        project_cone(z, mu, p)
        d = fabs(p[0] - r[0]) + fabs(p[1] - r[1]) + fabs(p[2] - r[2])
        nr = fabs(p[0]) + fabs(p[1]) + fabs(p[2])
        r[0] = p[0]; r[1] = p[1]; r[2] = p[2]
        if d <= tol * nr:
            return LOCAL_FALLBACK
    return LOCAL_FAILED


cdef inline int local_enumerate(const double* W, const double* b, double mu,
                                double* r) noexcept nogil:
    cdef double c0, s0, nt
    cdef double rs[3]
    cdef double mb[3]
    if b[0] >= 0.0:                                    # take-off
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return LOCAL_TAKEOFF
    mb[0] = -b[0]; mb[1] = -b[1]; mb[2] = -b[2]
    if solve3(W, mb, rs) and rs[0] > 0.0 and \
            sqrt(rs[1] * rs[1] + rs[2] * rs[2]) <= mu * rs[0] * (1.0 + 1e-14):
        r[0] = rs[0]; r[1] = rs[1]; r[2] = rs[2]     # stick
        return LOCAL_STICK
    if mu == 0.0 and W[0] > 0.0:                       # frictionless slide
        r[0] = -b[0] / W[0]; r[1] = 0.0; r[2] = 0.0
        return LOCAL_SLIDE
    # slip direction guess: opposite to the tangential stick reaction, else along b_T
    nt = sqrt(rs[1] * rs[1] + rs[2] * rs[2])
    if nt > 0.0:
        c0 = -rs[1] / nt; s0 = -rs[2] / nt
    else:
        nt = sqrt(b[1] * b[1] + b[2] * b[2])
        c0 = b[1] / nt if nt > 0.0 else 1.0
        s0 = b[2] / nt if nt > 0.0 else 0.0
    if slide_direction(W, b, mu, c0, s0, r):
        return LOCAL_SLIDE
    if slide_scan(W, b, mu, c0, s0, r):
        return LOCAL_SLIDE
    return project_iterate(W, b, mu, r, 1e-14, 2000)


cdef inline void relax(double* r, double* Ra, double omega, double* d, double* dmax,
                       double* rmax) noexcept nogil:
    """Ra <- (1 - omega) Ra + omega r, with d the change; track max |d| and max |r|."""
    cdef int c
    cdef double x
    for c in range(3):
        if omega != 1.0:
            r[c] = (1.0 - omega) * Ra[c] + omega * r[c]
        d[c] = r[c] - Ra[c]
        x = fabs(d[c])
        if x > dmax[0]:
            dmax[0] = x
        x = fabs(r[c])
        if x > rmax[0]:
            rmax[0] = x
        Ra[c] = r[c]
