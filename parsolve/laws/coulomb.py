"""Signorini-Coulomb's law (contacts): the Python half of its room.

A contact row's velocity U = (U_N, U_T) and impulse R = (R_N, R_T), normal first, obey
    R in K_mu,  U_N + mu |U_T| in the dual cone's sense:  0 <= R_N _|_ U_N >= 0 and
    R_T = -mu R_N U_T / |U_T| when U_T != 0, |R_T| <= mu R_N otherwise
(De Saxce's bipotential form; the natural map r - P_K(r - (u_N + mu |u_T|, u_T)) vanishes at
its solutions). Parameters: param[:, 0] = mu (the local solve's), param[:, 1] = c, the normal
compliance (below), param[:, 2] = e, Newton's restitution coefficient, which enters through the
free term: the solver enforces U_N + e min(U_N(t), 0) + max(gap, 0)/h >= 0 (impacts and
closing gaps).

A compliant contact (c > 0; Chrono's contact compliance, Solfec's spring-dashpot surfaces,
the DEM codes' normal spring) has a linear normal spring of stiffness k, loaded by the
contact's approach and taken implicitly (backward Euler): its force changes over the step by
k times the approach h (-U_N), so its impulse is R_N = R_N' - h^2 k U_N, R_N' the row's
reaction at the previous step (the warm start's; zero for a new contact). With c = 1 / (h^2 k)
that is Signorini's law on U_N + max(gap, 0)/h + c (R_N - R_N'): the law is the rigid one's
with u_N read as u_N + c r_N (the local solve sees W + c e_N e_N^T; the residual and
Alart-Curnier's function take u_N + c r_N) and the free term shifted by -c R_N'. At rest
U_N = 0 and the spring holds what the approach loaded into it; it unloads as the contact
separates, and the contact opens once it is unloaded. The spring reads no overlap: an overlap
found at detection (a contact met between two steps, at h U_N of travel) is not pushed out, as
on a rigid contact, which would turn it into a rebound for a stiff spring. W + c e_N e_N^T is
regular, so a hyperstatic pile's problem is strongly monotone in its normal part, and
Gauss-Seidel converges where on rigid contacts it can wander. The tangential part stays rigid
(no creep of a sticking contact).

The compiled half: kernels/coulomb_cone.pxd, coulomb.pxd and coulomb_quartic.pxd (the
compliance in kernels/law.pxd). Here: the rows' parameters and free term, and the twins of the
cone operations and of Alart-Curnier's function, scalar and vectorised; the local solvers'
twins are in coulomb_local.py.
"""
import math

import numpy as np

from ..tables.interactions import PARAMS
from .codes import KINDS, STATUS

OPEN, STICKING, SLIDING = (STATUS.index(s) for s in ("open", "sticking", "sliding"))

KIND = KINDS.index("coulomb")
PARAM_NAMES = ("mu", "c", "e")
SOLVE_PARAMS = 2                    # the local solve reads mu and c


def rows(mu, e, c=0.0):
    """The kind and param columns of contact rows with friction mu, restitution e and normal
    compliance c = 1 / (h^2 k) [1/kg] (0: rigid; k the spring's stiffness [N/m])."""
    mu = np.asarray(mu, float)
    param = np.zeros((len(mu), PARAMS))
    param[:, 0], param[:, 1], param[:, 2] = mu, c, e
    return {"kind": np.full(len(mu), KIND, np.int8), "param": param}


def compliance(p):
    """Each row's normal compliance c (the interior point adds it to W's normal diagonal)."""
    return p[:, 1]


def _compliant(u, r, c):
    """u_N + c r_N of one row: the normal velocity the law sees (u itself where c = 0)."""
    if c == 0.0:
        return u
    u = np.array(u, float)
    u[0] += c * r[0]
    return u


def cone(p):
    """The friction cone's slope per row for the interior-point solver: R in
    {mu R_N >= |R_T|} and its dual holds U_N + mu |U_T| (None where the law has no cone)."""
    return p[:, 0]


def free_term(rows, U_before, t, h):
    """B's shift of contact rows: Newton's impact law and the closing of gaps (normal part);
    a compliant row's spring as the previous step left it, -c R_N' (rows.R: the warm start)."""
    shift = np.zeros((len(rows), 3))
    p = rows.param
    shift[:, 0] = p[:, 2] * np.minimum(U_before[:, 0], 0.0) + np.maximum(rows.gap, 0.0) / h
    if p[:, 1].any():
        shift[:, 0] -= p[:, 1] * rows.R[:, 0]
    return shift


def status(R, p, rtol=1e-9):
    """Each contact's status (codes.STATUS): open (no normal reaction), sticking (inside the
    friction cone) or sliding (on it)."""
    tangential = np.hypot(R[:, 1], R[:, 2])
    return np.where(R[:, 0] <= 0, OPEN,
                    np.where(tangential >= (1 - rtol) * p[:, 0] * R[:, 0], SLIDING, STICKING))


def norm2(x, y):
    """sqrt(x^2 + y^2) as the kernels compute it (not math.hypot, which avoids underflow)."""
    return math.sqrt(x * x + y * y)


def project_cone(z, mu):
    zn, nt = z[0], norm2(z[1], z[2])
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
    ut = norm2(u[1], u[2])
    z = np.array([r[0] - (u[0] + mu * ut), r[1] - u[1], r[2] - u[2]])
    return float(np.linalg.norm(np.asarray(r) - project_cone(z, mu)))


def residual_sq(p, r, u):
    """|e|^2 of one row (p its parameters), e the natural map's residual."""
    return natural_map(r, _compliant(u, r, p[1]), p[0]) ** 2


def ac_phi(r, u, mu, rho_n, rho_t, jacobian=True, fast_norm=False):
    """Alart-Curnier's Phi(r, u) and, if asked, its blocks A = dPhi/dr and B = dPhi/du, as
    coulomb.pxd's ac_phi, operation for operation (|z_T| by hypot, as numpy's, or with
    fast_norm by sqrt(z1^2 + z2^2), as the local Newton's)."""
    sn = r[0] - rho_n * u[0]
    pos = sn > 0.0
    radius = mu * sn if pos else 0.0
    z1, z2 = r[1] - rho_t * u[1], r[2] - rho_t * u[2]
    nz = norm2(z1, z2) if fast_norm else float(np.hypot(z1, z2))
    slide = nz > radius
    scale = radius / nz if slide else 1.0
    phi = np.array([rho_n * u[0] if pos else r[0], r[1] - scale * z1, r[2] - scale * z2])
    if not jacobian:
        return phi, None, None
    h1, h2 = (z1 / nz, z2 / nz) if nz > 0.0 else (z1, z2)
    p11, p12, p22 = 1.0, 0.0, 1.0
    if slide:
        p11, p12, p22 = scale * (1.0 - h1 * h1), scale * (0.0 - h1 * h2), scale * (1.0 - h2 * h2)
    dn = mu if (slide and pos) else 0.0
    A = np.array([[0.0 if pos else 1.0, 0.0, 0.0],
                  [-(dn * h1), 1.0 - p11, 0.0 - p12],
                  [-(dn * h2), 0.0 - p12, 1.0 - p22]])
    B = np.array([[rho_n if pos else 0.0, 0.0, 0.0],
                  [rho_n * (dn * h1), rho_t * p11, rho_t * p12],
                  [rho_n * (dn * h2), rho_t * p12, rho_t * p22]])
    return phi, A, B


def row_solve(W, b, p, r0=None, method=0):
    """One row's reaction and outcome (the dispatcher's entry: mu = p[0])."""
    from .coulomb_local import local_solve

    if p[1] != 0.0:                                   # compliant: W + c e_N e_N^T
        W = np.array(W, float)
        W[0, 0] += p[1]
    return local_solve(W, b, p[0], r0, method)


def project_rows(R, U, mu):
    """P_K(r - (u_N + mu |u_T|, u_T)) row by row, vectorised (the natural map's projection)."""
    ut = np.hypot(U[:, 1], U[:, 2])
    z = R - np.stack([U[:, 0] + mu * ut, U[:, 1], U[:, 2]], axis=1)
    zn, nt = z[:, 0], np.hypot(z[:, 1], z[:, 2])
    rn = (zn + mu * nt) / (1.0 + mu * mu)
    with np.errstate(over="ignore", invalid="ignore"):      # rows the masks below replace
        s = np.where(nt > 0, mu * rn / np.where(nt > 0, nt, 1.0), 0.0)
        P = np.stack([rn, s * z[:, 1], s * z[:, 2]], axis=1)
    inside = (nt <= mu * zn) & (zn > 0)
    P[inside] = z[inside]
    P[mu * nt <= -zn] = 0.0
    return P


def residual_vector(R, U, p):
    """e (n, 3) per row: R - P_K(R - (U_N + mu |U_T|, U_T)), the natural map's residual (U_N
    + c R_N for U_N)."""
    c = p[:, 1]
    return R - project_rows(R, _compliant_rows(U, R, c) if c.any() else U, p[:, 0])


def _compliant_rows(U, R, c):
    """A copy of U with U_N + c R_N, row by row."""
    U = U.copy()
    U[:, 0] += c * R[:, 0]
    return U


def project_admissible(R, p):
    """R_a <- P_K(R_a), in place (inside the cones)."""
    R[:] = project_rows(R, np.zeros_like(R), p[:, 0])


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True):
    """Alart-Curnier's Phi (n, 3) and, if asked, the blocks A = dPhi/dR and B = dPhi/dU
    (n, 3, 3) of one element of its generalised Jacobian, vectorised over contacts (the
    definitions of ac_phi)."""
    mu, c = p[:, 0], p[:, 1]
    soft = c.any()
    if soft:
        U = _compliant_rows(U, R, c)
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
    if soft:                                  # dPhi/dR through U_N + c R_N
        A[:, :, 0] += c[:, None] * B[:, :, 0]
    return Phi, A, B
