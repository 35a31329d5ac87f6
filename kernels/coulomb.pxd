# Signorini-Coulomb (3/3): the local problem of one contact and Alart-Curnier's function.
# Given its Delassus block W (3 x 3, row major, normal first), its free velocity b (the rest of
# the row of U = B + W R, couplings included) and mu, find r in K_mu with u = W r + b such that
# (u, r) satisfy Signorini-Coulomb's law.
#
# local_enumerate tries the three cases of the law in turn: take-off (b_N >= 0 gives r = 0),
# stick (u = 0), slide (u_N = 0, r_T = -mu r_N d, u_T = |u_T| d). Slide is solved for the
# slip angle of d: Newton-secant on f = d x u_T(d) from the stick reaction's direction (a few
# steps; exact in two when W_TT is isotropic, as for spheres), then a scan of the angle with
# bisection on the sign changes of f. If none of them gives an admissible slide, the chain
# goes on (as Solfec's does): the quartic (coulomb_quartic.pxd), the local Alart-Curnier
# Newton, and last the projected fixed-point iteration r <- P_K(r - rho (u + mu |u_T| e_N)).
# The returned r is always in K_mu.
#
# local_solve(..., method) runs one local solver with its own fallbacks: METHOD_AUTO (the chain
# above), METHOD_PROJECTION, METHOD_QUARTIC (take-off, stick, quartic slide), METHOD_NEWTON,
# METHOD_WARM (the chain, its slide first by Newton on the slip direction, warm from the
# reaction's: half the cost of a slide in a sweep, and other bits than METHOD_AUTO's).
# The outcome code says which solver produced r (counted in the solve statistics).
# Python twins: parsolve/laws/coulomb.py and coulomb_local.py, same names.
from libc.math cimport sqrt, fabs, cos, sin, atan2, hypot, M_PI
from codes cimport *
from coulomb_cone cimport project_cone, natural_map_sq
from coulomb_quartic cimport slide_quartic
from linalg cimport matvec3, solve3


cdef inline void ac_phi(const double* r, const double* u, double mu, double rho_n,
                        double rho_t, double* phi, double* A, double* B,
                        bint fast_norm) noexcept nogil:
    """Alart-Curnier's function (Alart and Curnier 1991), normal first:
        Phi_N = r_N - max(0, r_N - rho_N u_N)
        Phi_T = r_T - P_D(r_T - rho_T u_T),   D the disc of radius mu max(0, r_N - rho_N u_N),
    phi = Phi(r, u) and, when A is not NULL, the blocks A = dPhi/dr and B = dPhi/du (3 x 3,
    row major) of one element of its generalised Jacobian. |z_T| is hypot for the global
    Newton (as its vectorised twin, numpy's), sqrt(z1^2 + z2^2) with fast_norm for the local
    one (a third of hypot's cost; a constant at each call, so the branch is compiled away)."""
    cdef double sn = r[0] - rho_n * u[0]
    cdef bint pos = sn > 0.0
    cdef double radius = mu * sn if pos else 0.0
    cdef double z1 = r[1] - rho_t * u[1], z2 = r[2] - rho_t * u[2]
    cdef double nz = sqrt(z1 * z1 + z2 * z2) if fast_norm else hypot(z1, z2)
    cdef bint slide = nz > radius             # P_D(z) = radius z / |z| (always when radius 0)
    cdef double scale = radius / nz if slide else 1.0
    cdef double h1, h2, p11, p12, p22, dn
    phi[0] = rho_n * u[0] if pos else r[0]
    phi[1] = r[1] - scale * z1
    phi[2] = r[2] - scale * z2
    if A == NULL:
        return
    # d(P_D z)/dz = scale (I - h h^T) sliding, I sticking (h = z / |z|); d(P_D z)/ds_N = mu h
    h1 = z1; h2 = z2
    if nz > 0.0:
        h1 = z1 / nz; h2 = z2 / nz
    p11 = 1.0; p12 = 0.0; p22 = 1.0
    if slide:
        p11 = scale * (1.0 - h1 * h1)
        p12 = scale * (0.0 - h1 * h2)
        p22 = scale * (1.0 - h2 * h2)
    dn = mu if (slide and pos) else 0.0
    A[0] = 0.0 if pos else 1.0; A[1] = 0.0;        A[2] = 0.0
    A[3] = -(dn * h1);          A[4] = 1.0 - p11;  A[5] = 0.0 - p12
    A[6] = -(dn * h2);          A[7] = 0.0 - p12;  A[8] = 1.0 - p22
    B[0] = rho_n if pos else 0.0; B[1] = 0.0;      B[2] = 0.0
    B[3] = rho_n * (dn * h1);   B[4] = rho_t * p11; B[5] = rho_t * p12
    B[6] = rho_n * (dn * h2);   B[7] = rho_t * p12; B[8] = rho_t * p22


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


cdef inline bint slide_newton(const double* W, const double* b, double mu, double c,
                              double s, double* r) noexcept nogil:
    """Slide by Newton on f(theta) = d x u_T(d) with its exact derivative, from d = (c, s):
    d is turned by normalising d + delta d_perp (Newton in the chart tan(theta - theta_k),
    quadratic like Newton on theta, and no trigonometry). Warm from the last sweep's slip
    direction it settles in two or three steps. False when it leaves the admissible
    directions (D <= 0), ends with d . u_T <= 0 or does not settle in 30 steps."""
    cdef double D, rn, u1, u2, f, g, drn, r1p, r2p, df, delta, nd
    cdef double scale = fabs(b[0]) + fabs(b[1]) + fabs(b[2])
    cdef int it
    for it in range(30):
        D = W[0] - mu * (W[1] * c + W[2] * s)
        if D <= 0.0:
            return False
        rn = -b[0] / D
        r[0] = rn; r[1] = -mu * rn * c; r[2] = -mu * rn * s
        u1 = W[3] * r[0] + W[4] * r[1] + W[5] * r[2] + b[1]
        u2 = W[6] * r[0] + W[7] * r[1] + W[8] * r[2] + b[2]
        f = c * u2 - s * u1
        g = c * u1 + s * u2
        if fabs(f) <= 1e-15 * scale:
            return g > 0.0
        # along theta: d' = (-s, c), D' = mu (W_N1 s - W_N2 c), r_N' = -r_N D' / D
        drn = -rn * (mu * (W[1] * s - W[2] * c)) / D
        r1p = -mu * (drn * c - rn * s)
        r2p = -mu * (drn * s + rn * c)
        df = c * (W[6] * drn + W[7] * r1p + W[8] * r2p) \
            - s * (W[3] * drn + W[4] * r1p + W[5] * r2p) - g
        if df == 0.0:
            return False
        delta = -f / df
        if fabs(delta) <= 1e-14:
            return g > 0.0
        c, s = c - delta * s, s + delta * c
        nd = sqrt(c * c + s * s)
        c = c / nd; s = s / nd
    return False


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
            return LOCAL_PROJECTION
    return LOCAL_FAILED


cdef inline int takeoff_stick(const double* W, const double* b, double mu, double* r,
                              double* rs) noexcept nogil:
    """LOCAL_TAKEOFF or LOCAL_STICK when one of them solves the problem, else -1; rs is the
    stick reaction -W^-1 b (zero when W is singular)."""
    cdef double mb[3]
    rs[0] = 0.0; rs[1] = 0.0; rs[2] = 0.0
    if b[0] >= 0.0:                                    # take-off
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return LOCAL_TAKEOFF
    mb[0] = -b[0]; mb[1] = -b[1]; mb[2] = -b[2]
    if not solve3(W, mb, rs):
        rs[0] = 0.0; rs[1] = 0.0; rs[2] = 0.0
        return -1
    if rs[0] > 0.0 and sqrt(rs[1] * rs[1] + rs[2] * rs[2]) <= mu * rs[0] * (1.0 + 1e-14):
        r[0] = rs[0]; r[1] = rs[1]; r[2] = rs[2]     # stick
        return LOCAL_STICK
    return -1


cdef inline double ac_merit(const double* W, const double* b, double mu, double rhon,
                            double rhot, const double* r, double* phi, double* J) noexcept nogil:
    """|Phi|^2 of Alart-Curnier's function at r, u = W r + b; with J (not NULL) also one
    element J = A + B W of its generalised Jacobian."""
    cdef double u[3]
    cdef double A[9]
    cdef double Bm[9]
    cdef double* Ap = A if J != NULL else NULL
    cdef int i, j
    matvec3(W, r, u)
    u[0] += b[0]; u[1] += b[1]; u[2] += b[2]
    ac_phi(r, u, mu, rhon, rhot, phi, Ap, Bm, True)
    if J != NULL:
        for i in range(3):
            for j in range(3):
                J[3 * i + j] = A[3 * i + j] + Bm[3 * i] * W[j] + Bm[3 * i + 1] * W[3 + j] \
                    + Bm[3 * i + 2] * W[6 + j]
    return phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]


cdef inline int local_newton(const double* W, const double* b, double mu, double* r,
                             int maxit) noexcept nogil:
    """Semismooth Newton on Alart-Curnier's function from r, rho_N = 1/W_NN and
    rho_T = 2/(W_T1T1 + W_T2T2) from the block, damped by an Armijo search on |Phi|^2 / 2.
    LOCAL_NEWTON with r in K_mu solving the problem (to 1e-10, scaled), else LOCAL_FAILED."""
    cdef double phi[3]
    cdef double J[9]
    cdef double d[3]
    cdef double rt[3]
    cdef double p[3]
    cdef double u[3]
    cdef double f, ft, t, rhon, rhot, scale
    cdef int it, ls
    if W[0] <= 0.0 or W[4] + W[8] <= 0.0:
        return LOCAL_FAILED
    rhon = 1.0 / W[0]; rhot = 2.0 / (W[4] + W[8])
    project_cone(r, mu, p)
    r[0] = p[0]; r[1] = p[1]; r[2] = p[2]
    scale = fabs(b[0]) + fabs(b[1]) + fabs(b[2])
    f = ac_merit(W, b, mu, rhon, rhot, r, phi, J)
    for it in range(maxit):
        if f <= (1e-16 * (scale + fabs(r[0]) + fabs(r[1]) + fabs(r[2]))) ** 2:
            break
        phi[0] = -phi[0]; phi[1] = -phi[1]; phi[2] = -phi[2]
        if not solve3(J, phi, d):
            break
        t = 1.0
        for ls in range(40):
            rt[0] = r[0] + t * d[0]; rt[1] = r[1] + t * d[1]; rt[2] = r[2] + t * d[2]
            ft = ac_merit(W, b, mu, rhon, rhot, rt, phi, NULL)
            if ft <= (1.0 - 2e-4 * t) * f:
                break
            t *= 0.5
        else:
            break
        r[0] = rt[0]; r[1] = rt[1]; r[2] = rt[2]
        f = ac_merit(W, b, mu, rhon, rhot, r, phi, J)
    project_cone(r, mu, p)
    r[0] = p[0]; r[1] = p[1]; r[2] = p[2]
    matvec3(W, r, u)
    u[0] += b[0]; u[1] += b[1]; u[2] += b[2]
    if sqrt(natural_map_sq(r, u, mu)) <= 1e-10 * (scale + fabs(r[0]) + fabs(r[1]) + fabs(r[2])):
        return LOCAL_NEWTON
    return LOCAL_FAILED


cdef inline int last_resort(const double* W, const double* b, double mu, double* r,
                            bint quartic_first) noexcept nogil:
    """The end of the fallback chain, warm from r: the quartic slide and local Newton (from r,
    then from the stick reaction -W^-1 b) in the order asked, last the projected fixed point
    from r, whose result is always in the cone."""
    cdef double r0[3]
    cdef double mb[3]
    r0[0] = r[0]; r0[1] = r[1]; r0[2] = r[2]
    if quartic_first and slide_quartic(W, b, mu, r):
        return LOCAL_QUARTIC
    r[0] = r0[0]; r[1] = r0[1]; r[2] = r0[2]
    if local_newton(W, b, mu, r, 50) == LOCAL_NEWTON:
        return LOCAL_NEWTON
    mb[0] = -b[0]; mb[1] = -b[1]; mb[2] = -b[2]
    if solve3(W, mb, r) and local_newton(W, b, mu, r, 50) == LOCAL_NEWTON:
        return LOCAL_NEWTON
    if not quartic_first and slide_quartic(W, b, mu, r):
        return LOCAL_QUARTIC
    r[0] = r0[0]; r[1] = r0[1]; r[2] = r0[2]
    return project_iterate(W, b, mu, r, 1e-14, 2000)


cdef inline int local_slide(const double* W, const double* b, double mu, double* r,
                            const double* rs, const double* rw, bint warm) noexcept nogil:
    """The slide and the chain after it, when neither take-off nor stick (rs: the stick
    reaction, rw: r on entry). Apart from local_enumerate so that the take-off and stick
    tests, which most relaxations end in, stay small enough to be inlined in the sweep."""
    cdef double c0, s0, nt
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
    if warm:
        nt = sqrt(rw[1] * rw[1] + rw[2] * rw[2]) if rw[0] > 0.0 else 0.0
        if slide_newton(W, b, mu, -rw[1] / nt if nt > 0.0 else c0,
                        -rw[2] / nt if nt > 0.0 else s0, r):
            return LOCAL_SLIDE
    if slide_direction(W, b, mu, c0, s0, r):
        return LOCAL_SLIDE
    if slide_scan(W, b, mu, c0, s0, r):
        return LOCAL_SLIDE
    return last_resort(W, b, mu, r, True)


cdef inline int local_enumerate(const double* W, const double* b, double mu, double* r,
                                bint warm) noexcept nogil:
    """Take-off, stick, slide, then the chain (the header's METHOD_AUTO). With warm, the
    slide is first tried by slide_newton from the slip direction of r on entry (-r_T / |r_T|
    when r_N > 0, else the stick guess), the chain as without it when that fails
    (METHOD_WARM)."""
    cdef double rs[3]
    cdef double rw[3]
    rw[0] = r[0]; rw[1] = r[1]; rw[2] = r[2]
    cdef int code = takeoff_stick(W, b, mu, r, rs)
    if code >= 0:
        return code
    return local_slide(W, b, mu, r, rs, rw, warm)


cdef inline int local_solve(const double* W, const double* b, double mu, double* r,
                            int method) noexcept nogil:
    """One contact's reaction by the local solver `method` (METHOD_*), r warm on entry."""
    cdef double rs[3]
    cdef int code
    if method == METHOD_AUTO:
        return local_enumerate(W, b, mu, r, False)
    if method == METHOD_WARM:
        return local_enumerate(W, b, mu, r, True)
    if method == METHOD_PROJECTION:
        return project_iterate(W, b, mu, r, 1e-14, 2000)
    if method == METHOD_QUARTIC:
        code = takeoff_stick(W, b, mu, r, rs)
        if code >= 0:
            return code
        if mu == 0.0 and W[0] > 0.0:                   # frictionless: no slip direction
            r[0] = -b[0] / W[0]; r[1] = 0.0; r[2] = 0.0
            return LOCAL_QUARTIC
        return last_resort(W, b, mu, r, True)
    if b[0] >= 0.0:                                    # METHOD_NEWTON
        r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
        return LOCAL_TAKEOFF
    return last_resort(W, b, mu, r, False)
