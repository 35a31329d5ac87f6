"""Pure-Python twins of the Cython kernels (kernels/cone.pxd, local.pxd, sweep.pyx, newton.pyx).

The same algorithms, line for line, in plain Python: the readable specification, and what the
tests hold the compiled kernels equal to. Local frame: normal first, r = (r_N, r_T1, r_T2).
"""
import math

import numpy as np

# outcomes of a local solve (which solver produced r), as kernels/local.pxd numbers them
TAKEOFF, STICK, SLIDE, PROJECTION, FAILED, QUARTIC, NEWTON = range(7)
NCODES = 7
CODE_NAMES = ("takeoff", "stick", "slide", "projection", "failed", "quartic", "newton")
# the local solvers a Gauss-Seidel sweep can use; the index is the kernels' METHOD_* number
LOCAL_SOLVERS = ("auto", "projection", "quartic", "newton")


def _norm(x, y):
    """sqrt(x^2 + y^2) as the kernels compute it (not math.hypot, which avoids underflow)."""
    return math.sqrt(x * x + y * y)


def project_cone(z, mu):
    zn, nt = z[0], math.sqrt(z[1] * z[1] + z[2] * z[2])
    if nt <= mu * zn and zn > 0.0:
        return np.array([zn, z[1], z[2]])
    if mu * nt <= -zn:
        return np.zeros(3)
    rn = (zn + mu * nt) / (1.0 + mu * mu)
    if rn <= 0.0:                                   # underflow: the apex
        return np.zeros(3)
    s = mu * rn / nt
    return np.array([rn, s * z[1], s * z[2]])


def natural_map(r, u, mu):
    ut = _norm(u[1], u[2])
    z = np.array([r[0] - (u[0] + mu * ut), r[1] - u[1], r[2] - u[2]])
    return float(np.linalg.norm(np.asarray(r) - project_cone(z, mu)))


def _slide_eval(W, b, mu, c, s):
    denom = W[0, 0] - mu * (W[0, 1] * c + W[0, 2] * s)
    if denom <= 0.0:
        return None
    rn = -b[0] / denom
    r = np.array([rn, -mu * rn * c, -mu * rn * s])
    ut1 = W[1] @ r + b[1]
    ut2 = W[2] @ r + b[2]
    return r, c * ut2 - s * ut1, c * ut1 + s * ut2


def _slide_direction(W, b, mu, c0, s0):
    th0 = math.atan2(s0, c0)
    ev = _slide_eval(W, b, mu, c0, s0)
    if ev is None:
        return None
    f0 = ev[1]
    th1 = th0 + 1e-4
    ev = _slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
    if ev is None:
        return None
    r, f1, g = ev
    for _ in range(50):
        if f1 == f0:
            break
        th2 = th1 - f1 * (th1 - th0) / (f1 - f0)
        th0, f0, th1 = th1, f1, th2
        ev = _slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
        if ev is None:
            return None
        r, f1, g = ev
        if abs(th1 - th0) <= 1e-14 * (1.0 + abs(th1)):
            return r if g > 0.0 else None
    ok = g > 0.0 and abs(f1) <= 1e-14 * (abs(b[1]) + abs(b[2]) + abs(b[0]))
    return r if ok else None


def _slide_scan(W, b, mu, c0, s0, n=96):
    best, found = -3.0, None
    th0 = 0.0
    ev0 = _slide_eval(W, b, mu, 1.0, 0.0)
    for k in range(1, n + 1):
        th1 = 2.0 * math.pi * k / n
        ev1 = _slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
        if ev0 is not None and ev1 is not None and (ev0[1] == 0.0 or ev0[1] * ev1[1] < 0.0):
            f0, tm = ev0[1], th0
            if f0 != 0.0:
                for _ in range(64):
                    tm = 0.5 * (th0 + th1)
                    evm = _slide_eval(W, b, mu, math.cos(tm), math.sin(tm))
                    if evm is None:
                        break
                    if (evm[1] < 0.0) == (f0 < 0.0):
                        th0, f0 = tm, evm[1]
                    else:
                        th1 = tm
            evm = _slide_eval(W, b, mu, math.cos(tm), math.sin(tm))
            if evm is not None and evm[2] > 0.0:
                proj = math.cos(tm) * c0 + math.sin(tm) * s0
                if proj > best:
                    best, found = proj, evm[0]
        th0, ev0 = th1, ev1
    return found


def _project_iterate(W, b, mu, r, tol=1e-14, maxit=2000):
    rho = 1.0 / np.abs(W).sum(axis=1).max()
    r = project_cone(r, mu)
    for _ in range(maxit):
        u = W @ r + b
        ut = _norm(u[1], u[2])
        p = project_cone(r - rho * np.array([u[0] + mu * ut, u[1], u[2]]), mu)
        d, nr = np.abs(p - r).sum(), np.abs(p).sum()
        r = p
        if d <= tol * nr:
            return r, PROJECTION
    return r, FAILED


def _takeoff_stick(W, b, mu):
    """(r, TAKEOFF or STICK) when one of them solves the problem, else (None, rs) with rs the
    stick reaction -W^-1 b (zero when W is singular)."""
    if b[0] >= 0.0:
        return np.zeros(3), TAKEOFF
    rs = _stick_reaction(W, b)
    if rs is None:
        return None, np.zeros(3)
    if rs[0] > 0.0 and _norm(rs[1], rs[2]) <= mu * rs[0] * (1.0 + 1e-14):
        return rs, STICK
    return None, rs


def _stick_reaction(W, b):
    """-W^-1 b by cofactors (cone.pxd's solve3, operation for operation); None when W is
    singular to round-off."""
    W = [float(x) for x in np.asarray(W).reshape(-1)]
    mb = [-float(b[0]), -float(b[1]), -float(b[2])]
    c00 = W[4] * W[8] - W[5] * W[7]
    c01 = W[5] * W[6] - W[3] * W[8]
    c02 = W[3] * W[7] - W[4] * W[6]
    det = W[0] * c00 + W[1] * c01 + W[2] * c02
    scale = abs(W[0]) + abs(W[4]) + abs(W[8])
    if abs(det) <= 1e-14 * scale * scale * scale:
        return None
    inv = 1.0 / det
    return np.array([
        (c00 * mb[0] + (W[2] * W[7] - W[1] * W[8]) * mb[1] + (W[1] * W[5] - W[2] * W[4]) * mb[2])
        * inv,
        (c01 * mb[0] + (W[0] * W[8] - W[2] * W[6]) * mb[1] + (W[2] * W[3] - W[0] * W[5]) * mb[2])
        * inv,
        (c02 * mb[0] + (W[1] * W[6] - W[0] * W[7]) * mb[1] + (W[0] * W[4] - W[1] * W[3]) * mb[2])
        * inv])


def ac_phi(W, b, mu, rhon, rhot, r, jacobian=True):
    """Alart-Curnier's Phi(r) for u = W r + b, |Phi|^2 and (if asked) J = A + B W."""
    u = W @ r + b
    sn = r[0] - rhon * u[0]
    pos = sn > 0.0
    phi = np.empty(3)
    phi[0] = rhon * u[0] if pos else r[0]
    radius = mu * sn if pos else 0.0
    z = r[1:] - rhot * u[1:]
    nz = _norm(z[0], z[1])
    slide = nz > radius
    scale = radius / nz if slide else 1.0
    phi[1:] = r[1:] - scale * z
    f = float(phi @ phi)
    if not jacobian:
        return phi, f, None
    h = z / nz if nz > 0.0 else np.zeros(2)
    P = scale * (np.eye(2) - np.outer(h, h)) if slide else np.eye(2)
    dn = mu * h if (slide and pos) else np.zeros(2)
    A = np.zeros((3, 3))
    Bm = np.zeros((3, 3))
    A[0, 0] = 0.0 if pos else 1.0
    Bm[0, 0] = rhon if pos else 0.0
    A[1:, 0] = -dn
    A[1:, 1:] = np.eye(2) - P
    Bm[1:, 0] = rhon * dn
    Bm[1:, 1:] = rhot * P
    return phi, f, A + Bm @ W


def local_newton(W, b, mu, r, maxit=50):
    """Twin of local.pxd's local_newton: (r, NEWTON or FAILED)."""
    if W[0, 0] <= 0.0 or W[1, 1] + W[2, 2] <= 0.0:
        return r, FAILED
    rhon, rhot = 1.0 / W[0, 0], 2.0 / (W[1, 1] + W[2, 2])
    r = project_cone(r, mu)
    scale = float(np.abs(b).sum())
    phi, f, J = ac_phi(W, b, mu, rhon, rhot, r)
    for _ in range(maxit):
        if f <= (1e-16 * (scale + np.abs(r).sum())) ** 2:
            break
        d = _stick_reaction(J, phi)                # -J^-1 phi
        if d is None:
            break
        t = 1.0
        for _ in range(40):
            rt = r + t * d
            if ac_phi(W, b, mu, rhon, rhot, rt, False)[1] <= (1.0 - 2e-4 * t) * f:
                break
            t *= 0.5
        else:
            break
        r = rt
        phi, f, J = ac_phi(W, b, mu, rhon, rhot, r)
    r = project_cone(r, mu)
    ok = natural_map(r, W @ r + b, mu) <= 1e-10 * (scale + np.abs(r).sum())
    return r, (NEWTON if ok else FAILED)


def poly_real_roots(a):
    """Twin of quartic.pxd's poly_real_roots: real roots of sum a[i] x^i, ascending."""
    a = [float(x) for x in a]
    big = max(abs(x) for x in a)
    if big == 0.0:
        return []
    deg = len(a) - 1
    while deg > 0 and abs(a[deg]) <= 1e-14 * big:
        deg -= 1
    a = a[:deg + 1]
    if deg == 0:
        return []
    if deg == 1:
        return [-a[0] / a[1]]
    if deg == 2:
        disc = a[1] * a[1] - 4.0 * a[2] * a[0]
        if disc < 0.0:
            return []
        q = -0.5 * (a[1] + (math.sqrt(disc) if a[1] >= 0.0 else -math.sqrt(disc)))
        if q == 0.0:
            return [0.0]
        return sorted([q / a[2], a[0] / q])
    crit = poly_real_roots([(i + 1) * a[i + 1] for i in range(deg)])
    bound = 1.0 + max(abs(a[i] / a[deg]) for i in range(deg))
    ends = [-bound] + [min(max(c, -bound), bound) for c in crit] + [bound]
    tol = 1e-13 * big
    roots = []
    for j in range(len(ends) - 1):
        lo, hi = ends[j], ends[j + 1]
        flo, fhi = _horner(a, lo), _horner(a, hi)
        if j > 0 and abs(flo) <= tol * (1.0 + abs(lo) ** deg):
            x = lo
        elif (flo < 0.0) != (fhi < 0.0) and hi > lo:
            x = _bisect(a, lo, hi)
        else:
            continue
        if not roots or x > roots[-1]:
            roots.append(x)
    return roots


def _horner(a, x):
    p = a[-1]
    for c in reversed(a[:-1]):
        p = p * x + c
    return p


def _bisect(a, lo, hi):
    """Twin of quartic.pxd's poly_bisect: bracketed Newton, bisection as the safeguard."""
    flo = _horner(a, lo)
    x = 0.5 * (lo + hi)
    for _ in range(100):
        f, df = a[-1], 0.0
        for c in reversed(a[:-1]):
            df = df * x + f
            f = f * x + c
        if f == 0.0:
            return x
        if (f < 0.0) == (flo < 0.0):
            lo, flo = x, f
        else:
            hi = x
        xn = x - f / df if df != 0.0 else 0.5 * (lo + hi)
        if not lo < xn < hi:
            xn = 0.5 * (lo + hi)
        if abs(xn - x) <= 1e-15 * abs(x) or hi - lo <= 1e-15 * (abs(lo) + abs(hi)):
            return xn
        x = xn
    return x


def slide_trig(W, b, mu):
    """(A, B, C, D', E) of seed 004 eq. 12.15 (see kernels/quartic.pxd)."""
    return (mu * (b[2] * W[0, 1] - b[0] * W[2, 1]), mu * (b[0] * W[1, 2] - b[1] * W[0, 2]),
            mu * (b[2] * W[0, 2] - b[1] * W[0, 1] - b[0] * (W[2, 2] - W[1, 1])),
            b[0] * W[1, 0] - b[1] * W[0, 0], b[2] * W[0, 0] - b[0] * W[2, 0])


def slide_quartic(W, b, mu):
    """Twin of quartic.pxd's slide_quartic: the admissible slide reaction or None."""
    A, B, C, D, E = slide_trig(W, b, mu)
    P = [A + E, 2.0 * (C + D), 4.0 * B - 2.0 * A, 2.0 * (D - C), A - E]
    ths = [2.0 * math.atan(t) for t in poly_real_roots(P)] + [math.pi]
    best, out = -1.0, None
    for th in ths:
        for _ in range(3):
            c, s = math.cos(th), math.sin(th)
            f = A * c * c + B * s * s + C * s * c + D * s + E * c
            df = 2.0 * (B - A) * s * c + C * (c * c - s * s) + D * c - E * s
            if df == 0.0 or f == 0.0:
                break
            th -= f / df
        c, s = math.cos(th), math.sin(th)
        den = W[0, 0] + mu * (W[0, 1] * c + W[0, 2] * s)
        if den <= 0.0:
            continue
        rn = -b[0] / den
        if rn <= 0.0:
            continue
        r = np.array([rn, mu * rn * c, mu * rn * s])
        u = W @ r + b
        if c * u[1] + s * u[2] > 0.0:
            continue
        res = natural_map(r, u, mu)
        if best < 0.0 or res < best:
            best, out = res, r
    if out is None or best > 1e-10 * (np.abs(b).sum() + np.abs(out).sum()):
        return None
    return out


def _last_resort(W, b, mu, r, quartic_first):
    """Twin of local.pxd's last_resort."""
    if quartic_first:
        out = slide_quartic(W, b, mu)
        if out is not None:
            return out, QUARTIC
    out, code = local_newton(W, b, mu, r.copy())
    if code == NEWTON:
        return out, code
    rs = _stick_reaction(W, b)
    if rs is not None:
        out, code = local_newton(W, b, mu, rs)
        if code == NEWTON:
            return out, code
    if not quartic_first:
        out = slide_quartic(W, b, mu)
        if out is not None:
            return out, QUARTIC
    return _project_iterate(W, b, mu, r)


def local_enumerate(W, b, mu, r0=None):
    """Take-off, stick, slide (direction fixed point, then angle scan), then the chain."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    out, rs = _takeoff_stick(W, b, mu)
    if out is not None:
        return out, rs
    if mu == 0.0 and W[0, 0] > 0.0:
        return np.array([-b[0] / W[0, 0], 0.0, 0.0]), SLIDE
    nt = _norm(rs[1], rs[2])
    if nt > 0.0:
        c0, s0 = -rs[1] / nt, -rs[2] / nt
    else:
        nt = _norm(b[1], b[2])
        c0, s0 = (b[1] / nt, b[2] / nt) if nt > 0.0 else (1.0, 0.0)
    out = _slide_direction(W, b, mu, c0, s0)
    if out is None:
        out = _slide_scan(W, b, mu, c0, s0)
    if out is not None:
        return out, SLIDE
    return _last_resort(W, b, mu, r, True)


def local_solve(W, b, mu, r0=None, method=0):
    """Twin of local.pxd's local_solve: local solver LOCAL_SOLVERS[method], warm from r0."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    if method == 0:
        return local_enumerate(W, b, mu, r)
    if method == 1:
        return _project_iterate(W, b, mu, r)
    if method == 2:
        out, rs = _takeoff_stick(W, b, mu)
        if out is not None:
            return out, rs
        if mu == 0.0 and W[0, 0] > 0.0:
            return np.array([-b[0] / W[0, 0], 0.0, 0.0]), QUARTIC
        return _last_resort(W, b, mu, r, True)
    if b[0] >= 0.0:
        return np.zeros(3), TAKEOFF
    return _last_resort(W, b, mu, r, False)


def gauss_seidel_sweep(indptr, indices, blocks, diag, B, mu, R, order, omega, counts, method=0):
    dmax = rmax = 0.0
    for a in order:
        b = B[a].copy()
        for k in range(indptr[a], indptr[a + 1]):
            c = indices[k]
            if c != a:
                b += blocks[k] @ R[c]
        r, code = local_solve(blocks[diag[a]], b, mu[a], R[a], method)
        counts[code] += 1
        if omega != 1.0:
            r = (1.0 - omega) * R[a] + omega * r
        dmax = max(dmax, np.abs(r - R[a]).max())
        rmax = max(rmax, np.abs(r).max())
        R[a] = r
    return dmax / rmax if rmax > 0.0 else 0.0


def delassus_residual(indptr, indices, blocks, B, mu, R, U):
    s = 0.0
    for a in range(len(B)):
        U[a] = B[a]
        for k in range(indptr[a], indptr[a + 1]):
            U[a] += blocks[k] @ R[indices[k]]
        s += natural_map(R[a], U[a], mu[a]) ** 2
    nb, nr, nu = (float(np.linalg.norm(X)) for X in (B, R, U))
    den = max(nb, nr, nu)
    return (math.sqrt(s) / den if den > 0.0 else math.sqrt(s)), nb, nr, nu


def project_rows(R, U, mu):
    """P_K(r - (u_N + mu |u_T|, u_T)) row by row, vectorised (the natural map's projection)."""
    ut = np.hypot(U[:, 1], U[:, 2])
    z = R - np.stack([U[:, 0] + mu * ut, U[:, 1], U[:, 2]], axis=1)
    zn, nt = z[:, 0], np.hypot(z[:, 1], z[:, 2])
    rn = (zn + mu * nt) / (1.0 + mu * mu)
    s = np.where(nt > 0, mu * rn / np.where(nt > 0, nt, 1.0), 0.0)
    P = np.stack([rn, s * z[:, 1], s * z[:, 2]], axis=1)
    inside = (nt <= mu * zn) & (zn > 0)
    P[inside] = z[inside]
    P[mu * nt <= -zn] = 0.0
    return P


def residual_from_velocity(R, U, B, mu):
    """The residual of DESIGN.md section 2 from given U = W R + B, vectorised over contacts."""
    if len(R) == 0:
        return 0.0
    err = math.sqrt(float(np.sum((R - project_rows(R, U, mu)) ** 2)))
    den = max(float(np.linalg.norm(B)), float(np.linalg.norm(R)), float(np.linalg.norm(U)))
    return err / den if den > 0 else err


def body_gauss_seidel_sweep(inc_ptr, inc_body, H, K, Wdiag, B, mu, R, du, order, omega, counts,
                            method=0):
    """Twin of kernels/body_sweep.pyx: U_a = B_a + sum_e H_e du_body(e), du = M^-1 H^T R."""
    dmax = rmax = 0.0
    for a in order:
        W = Wdiag[a]
        b = B[a] - W @ R[a]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            b = b + H[e] @ du[inc_body[e]]
        r, code = local_solve(W, b, mu[a], R[a], method)
        counts[code] += 1
        if omega != 1.0:
            r = (1.0 - omega) * R[a] + omega * r
        d = r - R[a]
        dmax = max(dmax, np.abs(d).max())
        rmax = max(rmax, np.abs(r).max())
        R[a] = r
        if d.any():
            for e in range(inc_ptr[a], inc_ptr[a + 1]):
                du[inc_body[e]] += K[e] @ d
    return dmax / rmax if rmax > 0.0 else 0.0


def body_apply(inc_ptr, inc_body, K, R, du, order):
    for a in order:
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            du[inc_body[e]] += K[e] @ R[a]


def body_residual(inc_ptr, inc_body, H, B, mu, R, du, U, parts):
    for a in range(len(B)):
        U[a] = B[a]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            U[a] += H[e] @ du[inc_body[e]]
        parts[a] = (natural_map(R[a], U[a], mu[a]) ** 2, B[a] @ B[a], R[a] @ R[a], U[a] @ U[a])


def alart_curnier(R, U, mu, rho_n, rho_t, jacobian=True):
    """Phi (n, 3) and, if asked, the blocks A = dPhi/dR and B = dPhi/dU (n, 3, 3) of one
    element of the generalised Jacobian, vectorised over contacts (kernels/newton.pyx's
    definitions)."""
    n = len(R)
    Phi = np.empty((n, 3))
    sn = R[:, 0] - rho_n * U[:, 0]
    pos = sn > 0.0
    Phi[:, 0] = np.where(pos, rho_n * U[:, 0], R[:, 0])
    radius = mu * np.maximum(sn, 0.0)
    zt = R[:, 1:] - rho_t[:, None] * U[:, 1:]
    nz = np.hypot(zt[:, 0], zt[:, 1])
    slide = nz > radius                       # P_D(z) = radius z / |z| (always when radius 0)
    scale = np.where(slide, radius / np.where(slide, nz, 1.0), 1.0)
    Phi[:, 1:] = R[:, 1:] - scale[:, None] * zt
    if not jacobian:
        return Phi
    A = np.zeros((n, 3, 3))
    B = np.zeros((n, 3, 3))
    A[:, 0, 0] = np.where(pos, 0.0, 1.0)
    B[:, 0, 0] = np.where(pos, rho_n, 0.0)
    zhat = zt / np.where(nz > 0.0, nz, 1.0)[:, None]
    # d(P_D z)/dz = scale (I - zhat zhat^T) sliding, I sticking; d(P_D z)/ds_N = mu zhat
    P = np.where(slide[:, None, None],
                 scale[:, None, None] * (np.eye(2) - zhat[:, :, None] * zhat[:, None, :]),
                 np.eye(2))
    A[:, 1:, 1:] = np.eye(2) - P
    B[:, 1:, 1:] = rho_t[:, None, None] * P
    dn = np.where(slide & pos, mu, 0.0)[:, None] * zhat
    A[:, 1:, 0] = -dn
    B[:, 1:, 0] = rho_n[:, None] * dn
    return Phi, A, B


def alart_curnier_into(R, U, mu, rho_n, rho_t, Phi, A=None, B=None):
    """Twin of kernels/newton.pyx's alart_curnier: Phi, and A and B when given, in place."""
    if A is None:
        Phi[:] = alart_curnier(R, U, mu, rho_n, rho_t, jacobian=False)
    else:
        Phi[:], A[:], B[:] = alart_curnier(R, U, mu, rho_n, rho_t)


def project_into_cones(R, mu):
    """Twin of kernels/newton.pyx's project_into_cones: R_a <- P_K(R_a), in place."""
    R[:] = project_rows(R, np.zeros_like(R), mu)


def newton_parts(R, U, V, q, mu, rho_n, rho_t, parts):
    """Twin of kernels/newton.pyx's newton_parts: (|e_a|^2, |q_a|^2, |R_a|^2, |U_a|^2,
    |Phi(R_a, V_a)|^2, |Phi(R_a, U_a)|^2) per contact in parts (n, 6)."""
    phi = (alart_curnier(R, X, mu, rho_n, rho_t, jacobian=False) for X in (V, U))
    for j, X in enumerate((R - project_rows(R, U, mu), q, R, U, *phi)):
        parts[:, j] = np.sum(X ** 2, axis=1)


def slope_parts(Phi, A, B, d, Wd, parts):
    """Twin of kernels/newton.pyx's slope_parts: s_a = Phi_a . (A_a d_a + B_a Wd_a) as
    (max(s_a, 0), max(-s_a, 0)) in parts (n, 2)."""
    s = np.sum(Phi * (np.einsum("kij,kj->ki", A, d) + np.einsum("kij,kj->ki", B, Wd)), axis=1)
    parts[:, 0] = np.maximum(s, 0.0)
    parts[:, 1] = np.maximum(-s, 0.0)


def jacobian_blocks(indptr, blocks, diag, A, B, alpha, J):
    """Twin of kernels/newton.pyx's jacobian_blocks: A + B (W + diag(alpha) I) in W's
    block-CSR pattern, into J (nnz, 3, 3)."""
    rows = np.repeat(np.arange(len(diag)), np.diff(indptr))
    J[:] = np.einsum("kij,kjl->kil", B[rows], blocks)
    J[diag] += A + alpha[:, None, None] * B


def residual_from_parts(sums):
    """The residual of DESIGN.md section 2 from the summed squares (e, B, R, U)."""
    e, b, r, u = (math.sqrt(max(x, 0.0)) for x in sums)
    den = max(b, r, u)
    return e / den if den > 0.0 else e
