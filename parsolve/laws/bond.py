"""The cohesive bond: the Python half of its room (the compiled half: kernels/bond.pxd).

Masonry with mortar, bonded granular media and rock need joints that carry tension and
cohesion until they break (LMGC90's cohesive laws, Solfec's cohesion in its surface material,
Yade's cohesive-frictional law). A bond row holds a point of body A to a point of body B (or of
the world), U = 0, while its reaction stays in the strength domain

    S = {R_N >= -T h, |R_T| <= C h + mu R_N}

(Mohr-Coulomb with a tension cut-off, impulses over the step h; T the tensile strength and C
the cohesion [N] per bond point, mu the friction coefficient): the associated law
R = P_S(R - U), -U in the normal cone of S at R, solved exactly (the W-metric projection onto
S: the unconstrained point if it lies in S, else a convex one-dimensional search on R_N with
the tangential part a disc's trust-region solve). The joint moves only where its reaction is at
the strength, and then opens or slips: the bond's element (parsolve/elements/bonds.py) breaks
it after such a step, once and for good, and from then on the row is inert (R = 0) and the
contacts detection finds between the two bodies act (while their bonds all hold, the element
drops them: the bonds replace them).

Parameters: param = (t = T h, c = C h, mu, mode), mode 0 intact, 1 broken (inert). The free
term carries the drift of the two points, (p_A - p_B) / h in
the row's frame, as a fixed point's does (the row's offset is p_B - p_A).
"""
import math

import numpy as np

from ..tables.interactions import PARAMS
from .codes import KINDS, OUTCOMES, STATUS
from .linalg import disc_min, solve3

KIND = KINDS.index("bond")
PARAM_NAMES = ("t", "c", "mu", "mode")
SOLVE_PARAMS = 4
INTACT, BROKEN = 0.0, 1.0                         # modes
BOND, FAILED = OUTCOMES.index("bond"), OUTCOMES.index("failed")
BONDED, BROKEN_STATUS = (STATUS.index(s) for s in ("bonded", "broken"))


def rows(t, c, mu, mode):
    """The kind and param columns of bond rows: strengths as impulses over the step t = T h,
    c = C h [N s], friction mu, mode (INTACT or BROKEN)."""
    t = np.asarray(t, float)
    param = np.zeros((len(t), PARAMS))
    param[:, 0], param[:, 1], param[:, 2], param[:, 3] = t, c, mu, mode
    return {"kind": np.full(len(t), KIND, np.int8), "param": param}


def free_term(rows, U_before, t, h):
    """The drift of an intact bond's points, (p_A - p_B) / h in its frame; none when inert."""
    shift = -np.einsum("nij,nj->ni", rows.frame, rows.offset) / h
    shift[rows.param[:, 3] != INTACT] = 0.0
    return shift


def inside(p, r):
    return r[0] >= -p[0] and math.sqrt(r[1] * r[1] + r[2] * r[2]) <= p[1] + p[2] * r[0]


def project(p, z):
    """P_S(z) (bond.pxd's bond_project, operation for operation)."""
    t, c, mu = p[0], p[1], p[2]
    if p[3] != 0.0:
        return [0.0, 0.0, 0.0]
    nt = math.sqrt(z[1] * z[1] + z[2] * z[2])
    if nt <= c + mu * z[0]:
        r = [z[0], z[1], z[2]]
    else:
        rho = (c + mu * z[0] + mu * mu * nt) / (1.0 + mu * mu)
        if rho <= 0.0:
            r = [-c / mu if mu > 0.0 else z[0], 0.0, 0.0]
        else:
            r = [(z[0] + mu * nt - mu * c) / (1.0 + mu * mu), rho * (z[1] / nt),
                 rho * (z[2] / nt)]
    if r[0] >= -t:
        return r
    rho = c - mu * t
    if nt > rho:
        return [-t, rho * (z[1] / nt), rho * (z[2] / nt)]
    return [-t, z[1], z[2]]


def _tangent_min(W, b, p, rn):
    rho = p[1] + p[2] * rn
    x = disc_min(W[4], 0.5 * (W[5] + W[7]), W[8], b[1] + W[3] * rn, b[2] + W[6] * rn, rho)
    un = W[0] * rn + W[1] * x[0] + W[2] * x[1] + b[0]
    u1 = W[3] * rn + W[4] * x[0] + W[5] * x[1] + b[1]
    u2 = W[6] * rn + W[7] * x[0] + W[8] * x[1] + b[2]
    slope = un + p[2] * (u1 * x[0] + u2 * x[1]) / rho if rho > 0.0 else \
        un - p[2] * math.sqrt(u1 * u1 + u2 * u2)
    return [rn, x[0], x[1]], slope


def row_solve(W, b, p, r0=None, method=0):
    """One row's reaction and outcome (twin of bond.pxd's bond_solve, operation for
    operation)."""
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    if p[3] != 0.0:
        return np.zeros(3), BOND
    x = solve3(W, -np.asarray(b, float))
    if x is None:
        return r, FAILED
    if inside(p, x):
        return x, BOND
    W = [float(v) for v in np.asarray(W).reshape(-1)]
    b = [float(v) for v in b]
    lo = -p[0]
    if p[2] > 0.0 and -p[1] / p[2] > lo:
        lo = -p[1] / p[2]
    out, flo = _tangent_min(W, b, p, lo)
    if flo >= 0.0:
        return np.array(out), BOND
    scale = abs(x[0] - lo) + p[0] + p[1] + abs(lo)
    step = scale if scale > 0.0 else 1.0
    for _ in range(200):
        hi = lo + step
        fhi = _tangent_min(W, b, p, hi)[1]
        if fhi >= 0.0:
            break
        lo, flo = hi, fhi
        step = 2.0 * step
    side = 0
    for _ in range(200):
        if not hi - lo > 1e-15 * (abs(lo) + abs(hi) + scale):
            break
        m = hi - fhi * (hi - lo) / (fhi - flo)
        if not (lo < m < hi):
            m = 0.5 * (lo + hi)
        fm = _tangent_min(W, b, p, m)[1]
        if fm == 0.0:
            lo = hi = m
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
    return np.array(_tangent_min(W, b, p, 0.5 * (lo + hi))[0]), BOND


def residual_sq(p, r, u):
    q = project(p, [r[0] - u[0], r[1] - u[1], r[2] - u[2]])
    return float((r[0] - q[0]) ** 2 + (r[1] - q[1]) ** 2 + (r[2] - q[2]) ** 2)


def project_rows(Z, p):
    """P_S of each row of Z (vectorised `project`)."""
    t, c, mu = p[:, 0], p[:, 1], p[:, 2]
    nt = np.hypot(Z[:, 1], Z[:, 2])
    safe = np.where(nt > 0, nt, 1.0)
    rho = (c + mu * Z[:, 0] + mu * mu * nt) / (1.0 + mu * mu)
    P = np.empty_like(Z)
    P[:, 0] = np.where(rho <= 0.0, np.where(mu > 0, -c / np.where(mu > 0, mu, 1.0), Z[:, 0]),
                       (Z[:, 0] + mu * nt - mu * c) / (1.0 + mu * mu))
    P[:, 1:] = np.maximum(rho, 0.0)[:, None] * Z[:, 1:] / safe[:, None]
    inside = nt <= c + mu * Z[:, 0]
    P[inside] = Z[inside]
    cut = P[:, 0] < -t                                  # the cut-off's half-space, its circle
    edge = c - mu * t
    scale = np.where(nt > edge, edge / safe, 1.0)
    P[cut, 0] = -t[cut]
    P[cut, 1:] = Z[cut, 1:] * scale[cut, None]
    P[p[:, 3] != INTACT] = 0.0
    return P


def residual_vector(R, U, p):
    """e (n, 3): R - P_S(R - U)."""
    return R - project_rows(R - U, p)


def project_admissible(R, p):
    R[:] = project_rows(R, p)


def status(R, p):
    """bonded (intact) or broken (codes.STATUS)."""
    return np.where(p[:, 3] == INTACT, BONDED, BROKEN_STATUS)


def _jacobian(p, z, q):
    """P', the Jacobian of P_S at z (q = P_S(z)): bond.pxd's case by case."""
    t, c, mu = p[0], p[1], p[2]
    P = np.zeros((3, 3))
    nt = math.hypot(z[1], z[2])
    h1, h2 = (z[1] / nt, z[2] / nt) if nt > 0.0 else (0.0, 0.0)
    if p[3] != 0.0:
        return P
    if z[0] >= -t and nt <= c + mu * z[0]:
        return np.eye(3)
    if q[0] > -t:
        rho = (c + mu * z[0] + mu * mu * nt) / (1.0 + mu * mu)
        if rho > 0.0:
            k, f = 1.0 / (1.0 + mu * mu), rho / nt
            P[0] = [k, k * mu * h1, k * mu * h2]
            P[1, 0], P[2, 0] = k * mu * h1, k * mu * h2
            P[1, 1] = k * mu * mu * h1 * h1 + f * (1.0 - h1 * h1)
            P[1, 2] = P[2, 1] = k * mu * mu * h1 * h2 - f * h1 * h2
            P[2, 2] = k * mu * mu * h2 * h2 + f * (1.0 - h2 * h2)
        elif mu == 0.0:
            P[0, 0] = 1.0
        return P
    if nt <= c - mu * t:
        P[1, 1] = P[2, 2] = 1.0
    elif nt > 0.0:
        f = (c - mu * t) / nt
        P[1, 1], P[1, 2], P[2, 2] = f * (1.0 - h1 * h1), -f * h1 * h2, f * (1.0 - h2 * h2)
        P[2, 1] = P[1, 2]
    return P


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True):
    """Phi = R - P_S(Z), Z = R - rho U (rho_n normal, rho_t tangent); A = I - P', B = P' rho."""
    n = len(R)
    rho = np.stack([rho_n, rho_t, rho_t], axis=1)
    Z = R - rho * U
    Q = project_rows(Z, p)
    Phi = R - Q
    if not jacobian:
        return Phi
    P = np.array([_jacobian(pa, z, q) for pa, z, q in zip(p, Z, Q)]).reshape(n, 3, 3)
    return Phi, np.eye(3) - P, P * rho[:, None, :]
