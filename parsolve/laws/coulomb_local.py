"""Python twin of coulomb.pxd and coulomb_quartic.pxd: the local problem of one contact under
Signorini-Coulomb's law, solved by the same chain of local solvers, operation for operation
(the readable specification, and what the tests hold the kernels equal to). See coulomb.pxd's
header for the chain. Names are the kernels' names.
"""
import math

import numpy as np

from .codes import OUTCOMES
from .coulomb import ac_phi, natural_map, norm2, project_cone
from .linalg import solve3
from .roots import poly_real_roots

TAKEOFF, STICK, SLIDE, PROJECTION, FAILED, QUARTIC, NEWTON = (
    OUTCOMES.index(n) for n in ("takeoff", "stick", "slide", "projection", "failed",
                                "quartic", "newton"))


def slide_eval(W, b, mu, c, s):
    denom = W[0, 0] - mu * (W[0, 1] * c + W[0, 2] * s)
    if denom <= 0.0:
        return None
    rn = -b[0] / denom
    r = np.array([rn, -mu * rn * c, -mu * rn * s])
    ut1 = W[1] @ r + b[1]
    ut2 = W[2] @ r + b[2]
    return r, c * ut2 - s * ut1, c * ut1 + s * ut2


def slide_direction(W, b, mu, c0, s0):
    th0 = math.atan2(s0, c0)
    ev = slide_eval(W, b, mu, c0, s0)
    if ev is None:
        return None
    f0 = ev[1]
    th1 = th0 + 1e-4
    ev = slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
    if ev is None:
        return None
    r, f1, g = ev
    for _ in range(50):
        if f1 == f0:
            break
        th2 = th1 - f1 * (th1 - th0) / (f1 - f0)
        th0, f0, th1 = th1, f1, th2
        ev = slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
        if ev is None:
            return None
        r, f1, g = ev
        if abs(th1 - th0) <= 1e-14 * (1.0 + abs(th1)):
            return r if g > 0.0 else None
    ok = g > 0.0 and abs(f1) <= 1e-14 * (abs(b[1]) + abs(b[2]) + abs(b[0]))
    return r if ok else None


def slide_newton(W, b, mu, c, s):
    """Slide by Newton on f = d x u_T(d) with its exact derivative, d turned by normalising
    d + delta d_perp (no trigonometry): r, or None."""
    scale = abs(b[0]) + abs(b[1]) + abs(b[2])
    for _ in range(30):
        D = W[0, 0] - mu * (W[0, 1] * c + W[0, 2] * s)
        if D <= 0.0:
            return None
        rn = -b[0] / D
        r = np.array([rn, -mu * rn * c, -mu * rn * s])
        u1 = W[1, 0] * r[0] + W[1, 1] * r[1] + W[1, 2] * r[2] + b[1]
        u2 = W[2, 0] * r[0] + W[2, 1] * r[1] + W[2, 2] * r[2] + b[2]
        f, g = c * u2 - s * u1, c * u1 + s * u2
        if abs(f) <= 1e-15 * scale:
            return r if g > 0.0 else None
        drn = -rn * (mu * (W[0, 1] * s - W[0, 2] * c)) / D
        r1p = -mu * (drn * c - rn * s)
        r2p = -mu * (drn * s + rn * c)
        df = (c * (W[2, 0] * drn + W[2, 1] * r1p + W[2, 2] * r2p)
              - s * (W[1, 0] * drn + W[1, 1] * r1p + W[1, 2] * r2p) - g)
        if df == 0.0:
            return None
        delta = -f / df
        if abs(delta) <= 1e-14:
            return r if g > 0.0 else None
        c, s = c - delta * s, s + delta * c
        nd = norm2(c, s)
        c, s = c / nd, s / nd
    return None


def slide_scan(W, b, mu, c0, s0, n=96):
    best, found = -3.0, None
    th0 = 0.0
    ev0 = slide_eval(W, b, mu, 1.0, 0.0)
    for k in range(1, n + 1):
        th1 = 2.0 * math.pi * k / n
        ev1 = slide_eval(W, b, mu, math.cos(th1), math.sin(th1))
        if ev0 is not None and ev1 is not None and (ev0[1] == 0.0 or ev0[1] * ev1[1] < 0.0):
            f0, tm = ev0[1], th0
            if f0 != 0.0:
                for _ in range(64):
                    tm = 0.5 * (th0 + th1)
                    evm = slide_eval(W, b, mu, math.cos(tm), math.sin(tm))
                    if evm is None:
                        break
                    if (evm[1] < 0.0) == (f0 < 0.0):
                        th0, f0 = tm, evm[1]
                    else:
                        th1 = tm
            evm = slide_eval(W, b, mu, math.cos(tm), math.sin(tm))
            if evm is not None and evm[2] > 0.0:
                proj = math.cos(tm) * c0 + math.sin(tm) * s0
                if proj > best:
                    best, found = proj, evm[0]
        th0, ev0 = th1, ev1
    return found


def project_iterate(W, b, mu, r, tol=1e-14, maxit=2000):
    rho = 1.0 / np.abs(W).sum(axis=1).max()
    r = project_cone(r, mu)
    for _ in range(maxit):
        u = W @ r + b
        ut = norm2(u[1], u[2])
        p = project_cone(r - rho * np.array([u[0] + mu * ut, u[1], u[2]]), mu)
        d, nr = np.abs(p - r).sum(), np.abs(p).sum()
        r = p
        if d <= tol * nr:
            return r, PROJECTION
    return r, FAILED


def takeoff_stick(W, b, mu):
    """(r, TAKEOFF or STICK) when one of them solves the problem, else (None, rs) with rs the
    stick reaction -W^-1 b (zero when W is singular)."""
    if b[0] >= 0.0:
        return np.zeros(3), TAKEOFF
    rs = solve3(W, -np.asarray(b, float))
    if rs is None:
        return None, np.zeros(3)
    if rs[0] > 0.0 and norm2(rs[1], rs[2]) <= mu * rs[0] * (1.0 + 1e-14):
        return rs, STICK
    return None, rs


def ac_merit(W, b, mu, rhon, rhot, r, jacobian=True):
    """|Phi|^2 of Alart-Curnier's function at r, u = W r + b, with Phi and (if asked)
    J = A + B W, as coulomb.pxd's ac_merit."""
    u = W @ r + b
    phi, A, B = ac_phi(r, u, mu, rhon, rhot, jacobian, fast_norm=True)
    f = float(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
    if not jacobian:
        return phi, f, None
    J = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            J[i, j] = A[i, j] + B[i, 0] * W[0, j] + B[i, 1] * W[1, j] + B[i, 2] * W[2, j]
    return phi, f, J


def local_newton(W, b, mu, r, maxit=50):
    """Semismooth Newton on Alart-Curnier's function, damped by Armijo: (r, NEWTON or FAILED)."""
    if W[0, 0] <= 0.0 or W[1, 1] + W[2, 2] <= 0.0:
        return r, FAILED
    rhon, rhot = 1.0 / W[0, 0], 2.0 / (W[1, 1] + W[2, 2])
    r = project_cone(r, mu)
    scale = float(np.abs(b).sum())
    phi, f, J = ac_merit(W, b, mu, rhon, rhot, r)
    for _ in range(maxit):
        if f <= (1e-16 * (scale + np.abs(r).sum())) ** 2:
            break
        d = solve3(J, -phi)
        if d is None:
            break
        t = 1.0
        for _ in range(40):
            rt = r + t * d
            if ac_merit(W, b, mu, rhon, rhot, rt, False)[1] <= (1.0 - 2e-4 * t) * f:
                break
            t *= 0.5
        else:
            break
        r = rt
        phi, f, J = ac_merit(W, b, mu, rhon, rhot, r)
    r = project_cone(r, mu)
    ok = natural_map(r, W @ r + b, mu) <= 1e-10 * (scale + np.abs(r).sum())
    return r, (NEWTON if ok else FAILED)


def slide_trig(W, b, mu):
    """(A, B, C, D', E) of eq. 12.15 of Siconos' developer notes (coulomb_quartic.pxd)."""
    return (mu * (b[2] * W[0, 1] - b[0] * W[2, 1]), mu * (b[0] * W[1, 2] - b[1] * W[0, 2]),
            mu * (b[2] * W[0, 2] - b[1] * W[0, 1] - b[0] * (W[2, 2] - W[1, 1])),
            b[0] * W[1, 0] - b[1] * W[0, 0], b[2] * W[0, 0] - b[0] * W[2, 0])


def slide_quartic(W, b, mu):
    """The admissible slide reaction from the quartic, or None."""
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


def last_resort(W, b, mu, r, quartic_first):
    """The end of the fallback chain, warm from r (coulomb.pxd)."""
    if quartic_first:
        out = slide_quartic(W, b, mu)
        if out is not None:
            return out, QUARTIC
    out, code = local_newton(W, b, mu, r.copy())
    if code == NEWTON:
        return out, code
    rs = solve3(W, -np.asarray(b, float))
    if rs is not None:
        out, code = local_newton(W, b, mu, rs)
        if code == NEWTON:
            return out, code
    if not quartic_first:
        out = slide_quartic(W, b, mu)
        if out is not None:
            return out, QUARTIC
    return project_iterate(W, b, mu, r)


def local_enumerate(W, b, mu, r0=None, warm=False):
    """Take-off, stick, slide (direction fixed point, then angle scan), then the chain; with
    warm, the slide first by slide_newton from r0's slip direction (else the stick guess)."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    rw = r.copy()
    out, rs = takeoff_stick(W, b, mu)
    if out is not None:
        return out, rs
    if mu == 0.0 and W[0, 0] > 0.0:
        return np.array([-b[0] / W[0, 0], 0.0, 0.0]), SLIDE
    nt = norm2(rs[1], rs[2])
    if nt > 0.0:
        c0, s0 = -rs[1] / nt, -rs[2] / nt
    else:
        nt = norm2(b[1], b[2])
        c0, s0 = (b[1] / nt, b[2] / nt) if nt > 0.0 else (1.0, 0.0)
    if warm:
        nt = norm2(rw[1], rw[2]) if rw[0] > 0.0 else 0.0
        out = slide_newton(W, b, mu, -rw[1] / nt if nt > 0.0 else c0,
                           -rw[2] / nt if nt > 0.0 else s0)
        if out is not None:
            return out, SLIDE
    out = slide_direction(W, b, mu, c0, s0)
    if out is None:
        out = slide_scan(W, b, mu, c0, s0)
    if out is not None:
        return out, SLIDE
    return last_resort(W, b, mu, r, True)


def local_solve(W, b, mu, r0=None, method=0):
    """One contact's reaction by local solver METHODS[method], warm from r0: (r, outcome)."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    if method in (0, 4):
        return local_enumerate(W, b, mu, r, warm=method == 4)
    if method == 1:
        return project_iterate(W, b, mu, r)
    if method == 2:
        out, rs = takeoff_stick(W, b, mu)
        if out is not None:
            return out, rs
        if mu == 0.0 and W[0, 0] > 0.0:
            return np.array([-b[0] / W[0, 0], 0.0, 0.0]), QUARTIC
        return last_resort(W, b, mu, r, True)
    if b[0] >= 0.0:
        return np.zeros(3), TAKEOFF
    return last_resort(W, b, mu, r, False)
