"""Rolling and spinning resistance: the Python half of its room (the compiled half:
kernels/rolling.pxd).

A sphere with Coulomb friction alone rolls forever and piles at angles far below a real sand's;
the codes granular users pick (Siconos' rolling friction contact after Acary and Bourrier 2021,
Chrono's rolling and spinning friction, Yade's and LIGGGHTS' rolling models) bound the moment a
contact transmits. Here each contact whose pair of materials has a rolling coefficient mu_r or a
spinning coefficient mu_s (lengths [m], model.surface(..., rolling=, spinning=)) gets a
companion row of the rotation geometry (assembly/geometry.py): U = E (w_A - w_B), the relative
angular velocity in the contact's frame, spin about the normal first, then the two rolling
components; R the angular impulse on A [N m s]. Its law:

    |R_S| <= mu_s r_N,   |R_R| <= mu_r r_N,   -U in the normal cone of that set at R,

r_N the contact's normal impulse: a moment inside its bounds holds the relative rotation
(U = 0), one at its bound opposes it (maximal dissipation; Siconos' 5-D cone with its rolling
part, Chrono's NSC rolling and spinning friction). The bound is mu_r times the normal force.

The companion is made by detection next to its contact (contact/detect.py), with the key
tables/keys.rolling_key(contact's), so it persists, warm-starts, migrates and is owned with it;
`link` writes the contact's row index into param[:, 2] once the rows are in sweep order, and
the solves read r_N from the reactions (law.pxd passes them). The sweep relaxes the contact
first (its key is smaller), then the companion with the contact's current r_N; Newton's
Jacobian takes the companion's dependence on r_N as a block (rolling row, contact row), inside
W's pattern since the two rows share their bodies. Parameters: param = (mu_s, mu_r, contact's
row index or -1).
"""
import math

import numpy as np

from ..tables.interactions import PARAMS
from .codes import KINDS, OUTCOMES, STATUS
from .linalg import disc_min

KIND = KINDS.index("rolling")
PARAM_NAMES = ("mu_s", "mu_r", "contact")
SOLVE_PARAMS = 3
LINKED = True                       # its solves read another row's normal impulse
ROLLING, FAILED = OUTCOMES.index("rolling"), OUTCOMES.index("failed")
OPEN, STICKING, AT_BOUND = (STATUS.index(s) for s in ("open", "sticking", "rolling"))


def rows(mu_s, mu_r):
    """The kind and param columns of rolling rows of coefficients mu_s, mu_r [m] (the link to
    their contact made later, by `link`)."""
    mu_s = np.asarray(mu_s, float)
    param = np.zeros((len(mu_s), PARAMS))
    param[:, 0], param[:, 1], param[:, 2] = mu_s, mu_r, -1.0
    return {"kind": np.full(len(mu_s), KIND, np.int8), "param": param}


def link(rows, idx):
    """param[idx, 2] = the index in `rows` of each rolling row's contact (same k1, k2 its
    contact's key; -1 if absent, e.g. dropped with its bodies)."""
    from ..tables.keys import CONTACT, contact_of

    contacts = np.flatnonzero(rows.origin == CONTACT)
    k1 = np.concatenate([rows.k1[contacts], rows.k1[idx]])
    k2 = np.concatenate([rows.k2[contacts], contact_of(rows.k2[idx])])
    query = np.concatenate([np.zeros(len(contacts), bool), np.ones(len(idx), bool)])
    at = np.concatenate([contacts, np.arange(len(idx))])
    o = np.lexsort((query, k2, k1))
    hit = (k1[o][1:] == k1[o][:-1]) & (k2[o][1:] == k2[o][:-1]) & ~query[o][:-1] & query[o][1:]
    found = np.full(len(idx), -1, np.int64)
    found[at[o][1:][hit]] = at[o][:-1][hit]
    rows.param[idx, 2] = found


def linked_normal(p, R):
    """The normal impulse of each row's contact (0 without one or where it pulls)."""
    c = p[:, 2].astype(np.int64)
    rn = np.where(c >= 0, R[np.maximum(c, 0), 0] if len(R) else 0.0, 0.0)
    return np.maximum(rn, 0.0)


def free_term(rows, U_before, t, h):
    """None: no impact, no gap."""
    return np.zeros((len(rows), 3))


def _normal(p, R):
    """rolling.pxd's rolling_normal for one row."""
    c = int(p[2])
    if c < 0:
        return 0.0
    x = float(R[c][0])
    return x if x > 0.0 else 0.0


def _objective(W, b, r):
    s = 0.0
    for i in range(3):
        s += r[i] * (0.5 * (W[3 * i] * r[0] + W[3 * i + 1] * r[1] + W[3 * i + 2] * r[2]) + b[i])
    return s


def _spin_at(W, b, s, rho):
    x = disc_min(W[4], 0.5 * (W[5] + W[7]), W[8], b[1] + W[3] * s, b[2] + W[6] * s, rho)
    return [s, x[0], x[1]]


def row_solve(W, b, p, r0=None, method=0, R=None):
    """One row's reaction and outcome (twin of rolling.pxd's rolling_solve, operation for
    operation); R: the reactions its contact's normal impulse is read from."""
    W = [float(x) for x in np.asarray(W).reshape(-1)]
    b = [float(x) for x in b]
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    rn = _normal(p, R) if R is not None else 0.0
    w = W[0]
    if not w > 0.0:
        return r, FAILED
    s00 = W[4] - W[3] * W[1] / w
    s01 = 0.5 * ((W[5] - W[3] * W[2] / w) + (W[7] - W[6] * W[1] / w))
    s11 = W[8] - W[6] * W[2] / w
    if not (s00 > 0.0 and s00 * s11 - s01 * s01 > 0.0):
        return r, FAILED
    s, rho = p[0] * rn, p[1] * rn
    if s == 0.0 and rho == 0.0:
        return np.zeros(3), ROLLING
    x = disc_min(s00, s01, s11, b[1] - W[3] * b[0] / w, b[2] - W[6] * b[0] / w, rho)
    spin = -(b[0] + W[1] * x[0] + W[2] * x[1]) / w
    if abs(spin) <= s:
        return np.array([spin, x[0], x[1]]), ROLLING
    plus, minus = _spin_at(W, b, s, rho), _spin_at(W, b, -s, rho)
    return np.array(plus if _objective(W, b, plus) < _objective(W, b, minus) else minus), \
        ROLLING


def _project(z, s, rho):
    nt = math.sqrt(z[1] * z[1] + z[2] * z[2])
    r0 = s if z[0] > s else (-s if z[0] < -s else z[0])
    if nt <= rho:
        return np.array([r0, z[1], z[2]])
    return np.array([r0, rho * (z[1] / nt), rho * (z[2] / nt)])


def residual_sq(p, r, u, R=None):
    rn = _normal(p, R) if R is not None else 0.0
    z = [r[0] - u[0], r[1] - u[1], r[2] - u[2]]
    q = _project(z, p[0] * rn, p[1] * rn)
    return float((r[0] - q[0]) ** 2 + (r[1] - q[1]) ** 2 + (r[2] - q[2]) ** 2)


def project_rows(Z, p, rn):
    """The projection of each row of Z onto its bounds (vectorised)."""
    s, rho = p[:, 0] * rn, p[:, 1] * rn
    nt = np.hypot(Z[:, 1], Z[:, 2])
    P = np.empty_like(Z)
    P[:, 0] = np.clip(Z[:, 0], -s, s)
    scale = np.where(nt > rho, rho / np.where(nt > 0, nt, 1.0), 1.0)
    P[:, 1:] = Z[:, 1:] * scale[:, None]
    return P


def residual_vector(R, U, p, rn):
    """e (n, 3): R - P(R - U)."""
    return R - project_rows(R - U, p, rn)


def project_admissible(R, p, rn):
    R[:] = project_rows(R, p, rn)


def status(R, p, rn, rtol=1e-9):
    """Each row's status: open without a normal impulse, rolling at a bound (spinning or
    rolling against its resistance), sticking inside them (codes.STATUS)."""
    s, rho = p[:, 0] * rn, p[:, 1] * rn
    at = ((s > 0) & (np.abs(R[:, 0]) >= (1 - rtol) * s)) | \
        ((rho > 0) & (np.hypot(R[:, 1], R[:, 2]) >= (1 - rtol) * rho))
    return np.where(rn <= 0, OPEN, np.where(at, AT_BOUND, STICKING))


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True, rn=None):
    """Phi = R - P(Z), Z = (R_S - rho_n U_S, R_R - rho_t U_R), and with the Jacobian the
    blocks A = dPhi/dR, B = dPhi/dU (n, 3, 3) and C = dPhi/dr_N (n, 3), the column on the
    contact's normal impulse (rolling.pxd's rolling_phi)."""
    n = len(R)
    s, rho = p[:, 0] * rn, p[:, 1] * rn
    Z = np.stack([R[:, 0] - rho_n * U[:, 0], R[:, 1] - rho_t * U[:, 1],
                  R[:, 2] - rho_t * U[:, 2]], axis=1)
    Phi = R - project_rows(Z, p, rn)
    if not jacobian:
        return Phi
    nz = np.hypot(Z[:, 1], Z[:, 2])
    clipped = (Z[:, 0] > s) | (Z[:, 0] < -s)
    slide = nz > rho
    scale = np.where(slide, rho / np.where(slide, nz, 1.0), 1.0)
    h = np.where(nz[:, None] > 0, Z[:, 1:] / np.where(nz > 0, nz, 1.0)[:, None], Z[:, 1:])
    Q = np.where(slide[:, None, None],
                 scale[:, None, None] * (np.eye(2) - h[:, :, None] * h[:, None, :]), np.eye(2))
    A, B = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
    A[:, 0, 0] = np.where(clipped, 1.0, 0.0)
    B[:, 0, 0] = np.where(clipped, 0.0, rho_n)
    A[:, 1:, 1:] = np.eye(2) - Q
    B[:, 1:, 1:] = rho_t[:, None, None] * Q
    C = np.zeros((n, 3))
    pos = rn > 0
    C[:, 0] = np.where(pos & clipped, np.where(Z[:, 0] > s, -p[:, 0], p[:, 0]), 0.0)
    C[:, 1:] = np.where((pos & slide)[:, None], -(p[:, 1:2] * h), 0.0)
    return Phi, A, B, C
