"""Pure-Python twins of the Cython kernels (kernels/cone.pxd, local.pxd, sweep.pyx).

The same algorithms, line for line, in plain Python: the readable specification, and what the
tests hold the compiled kernels equal to. Local frame: normal first, r = (r_N, r_T1, r_T2).
"""
import math

import numpy as np

TAKEOFF, STICK, SLIDE, FALLBACK, FAILED = range(5)
NCODES = 5
CODE_NAMES = ("takeoff", "stick", "slide", "fallback", "failed")


def project_cone(z, mu):
    zn, nt = z[0], math.sqrt(z[1] * z[1] + z[2] * z[2])
    if nt <= mu * zn:
        return np.array([zn, z[1], z[2]])
    if mu * nt <= -zn:
        return np.zeros(3)
    rn = (zn + mu * nt) / (1.0 + mu * mu)
    s = mu * rn / nt
    return np.array([rn, s * z[1], s * z[2]])


def natural_map(r, u, mu):
    ut = math.hypot(u[1], u[2])
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
        ut = math.hypot(u[1], u[2])
        p = project_cone(r - rho * np.array([u[0] + mu * ut, u[1], u[2]]), mu)
        d, nr = np.abs(p - r).sum(), np.abs(p).sum()
        r = p
        if d <= tol * nr:
            return r, FALLBACK
    return r, FAILED


def local_enumerate(W, b, mu, r0=None):
    """Take-off, stick, slide (direction fixed point, then angle scan), projection fallback."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    if b[0] >= 0.0:
        return np.zeros(3), TAKEOFF
    W_flat = W.reshape(-1)
    det_scale = abs(W[0, 0]) + abs(W[1, 1]) + abs(W[2, 2])
    rs = None
    if abs(np.linalg.det(W)) > 1e-14 * det_scale ** 3:
        rs = np.linalg.solve(W, -b)
        if rs[0] > 0.0 and math.hypot(rs[1], rs[2]) <= mu * rs[0] * (1.0 + 1e-14):
            return rs, STICK
    if mu == 0.0 and W_flat[0] > 0.0:
        return np.array([-b[0] / W[0, 0], 0.0, 0.0]), SLIDE
    nt = math.hypot(rs[1], rs[2]) if rs is not None else 0.0
    if nt > 0.0:
        c0, s0 = -rs[1] / nt, -rs[2] / nt
    else:
        nt = math.hypot(b[1], b[2])
        c0, s0 = (b[1] / nt, b[2] / nt) if nt > 0.0 else (1.0, 0.0)
    out = _slide_direction(W, b, mu, c0, s0)
    if out is None:
        out = _slide_scan(W, b, mu, c0, s0)
    if out is not None:
        return out, SLIDE
    return _project_iterate(W, b, mu, r)


def gauss_seidel_sweep(indptr, indices, blocks, diag, B, mu, R, order, omega, counts):
    dmax = rmax = 0.0
    for a in order:
        b = B[a].copy()
        for k in range(indptr[a], indptr[a + 1]):
            c = indices[k]
            if c != a:
                b += blocks[k] @ R[c]
        r, code = local_enumerate(blocks[diag[a]], b, mu[a], R[a])
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
    inside = nt <= mu * zn
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


def body_gauss_seidel_sweep(inc_ptr, inc_body, H, K, Wdiag, B, mu, R, du, order, omega, counts):
    """Twin of kernels/body_sweep.pyx: U_a = B_a + sum_e H_e du_body(e), du = M^-1 H^T R."""
    dmax = rmax = 0.0
    for a in order:
        W = Wdiag[a]
        b = B[a] - W @ R[a]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            b = b + H[e] @ du[inc_body[e]]
        r, code = local_enumerate(W, b, mu[a], R[a])
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


def residual_from_parts(sums):
    """The residual of DESIGN.md section 2 from the summed squares (e, B, R, U)."""
    e, b, r, u = (math.sqrt(max(x, 0.0)) for x in sums)
    den = max(b, r, u)
    return e / den if den > 0.0 else e
