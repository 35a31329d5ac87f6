"""The bilateral law: the Python half of its room (the compiled half: kernels/bilateral.pxd).

The first m components of the row's velocity vanish, U_i = 0 for i < m, with the reaction
free in them, and the other components carry no reaction, R_i = 0 for i >= m; m = param[:, 0]
in 1..3, and param[:, 1:4] the free term's shift (read at assembly, not by the solves). m = 3
holds a point of a body to a point of another (or of the world): Solfec's fixed
point; m = 1 holds their relative velocity along one direction, the first axis of the row's
frame: Solfec's fixed direction; m = 2 keeps a point on a line. A prescribed velocity, or the
correction of a drift in position, enters through the free term B (a target -U*), not here.
"""
import numpy as np

from ..errors import InputError
from ..tables.interactions import PARAMS
from ..tables.table import FEW_ROWS
from .codes import KINDS, OUTCOMES, STATUS
from .linalg import solve3

KIND = KINDS.index("bilateral")
PARAM_NAMES = ("components", "shift_n", "shift_t1", "shift_t2")
SOLVE_PARAMS = 1
BILATERAL, FAILED = OUTCOMES.index("bilateral"), OUTCOMES.index("failed")


def rows(components, shift=0.0):
    """The kind and param columns of bilateral rows of m = `components` (1..3) equalities
    and free-term shift `shift` (n, 3), local frame: a drift correction e / h, a prescribed
    motion's -velo(t + h)."""
    m = np.asarray(components, float)
    if len(m) <= FEW_ROWS:                # a few rows: in Python
        bad = [v for v in m.tolist() if v not in (1.0, 2.0, 3.0)]
    else:                                 # three comparisons: np.isin costs more
        bad = m[(m != 1) & (m != 2) & (m != 3)][:1].tolist()
    if bad:
        raise InputError(f"bilateral rows: components must be 1, 2 or 3, got {bad[0]:g}")
    param = np.zeros((len(m), PARAMS))
    param[:, 0] = m
    param[:, 1:4] = shift
    return {"kind": np.full(len(m), KIND, np.int8), "param": param}


def components(param):
    """m, the number of equalities of bilateral rows (int)."""
    return param[:, 0].astype(int)


def shift(param):
    """The free term's shift (n, 3) of bilateral rows."""
    return param[:, 1:4]


def free_term(rows, U_before, t, h):
    """The shift its maker gave (`rows`): the drift correction e / h and a prescribed
    motion's -velo(t + h), in the row's frame."""
    return shift(rows.param).copy()


def row_solve(W, b, p, r0=None, method=0):
    """r with (W r + b)_i = 0 for i < m and r_i = 0 for i >= m: (r, BILATERAL), or r0 and
    FAILED when the m x m block of W is singular."""
    W, b = np.asarray(W, float), np.asarray(b, float)
    r = np.zeros(3) if r0 is None else np.asarray(r0, float).copy()
    m = int(p[0])
    if m >= 3:
        x = solve3(W, -b)
        return (r, FAILED) if x is None else (x, BILATERAL)
    if m == 2:
        det = W[0, 0] * W[1, 1] - W[0, 1] * W[1, 0]
        if det == 0.0:
            return r, FAILED
        return np.array([(-b[0] * W[1, 1] + b[1] * W[0, 1]) / det,
                         (-b[1] * W[0, 0] + b[0] * W[1, 0]) / det, 0.0]), BILATERAL
    if W[0, 0] <= 0.0:
        return r, FAILED
    return np.array([-b[0] / W[0, 0], 0.0, 0.0]), BILATERAL


def status(R, p):
    """Every bilateral row's status is "bilateral" (codes.STATUS)."""
    return np.full(len(R), STATUS.index("bilateral"))


def _mask(p):
    """(n, 3) True where a component is an equality (i < m)."""
    return np.arange(3)[None, :] < p[:, :1]


def residual_sq(p, r, u):
    m = int(p[0])
    return float(sum(u[i] * u[i] if i < m else r[i] * r[i] for i in range(3)))


def residual_vector(R, U, p):
    """e (n, 3): U_i where i < m (the equality), R_i elsewhere (no reaction)."""
    return np.where(_mask(p), U, R)


def project_admissible(R, p):
    R[~_mask(p)] = 0.0


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True):
    """Phi_i = rho_i U_i for i < m, R_i otherwise; A = dPhi/dR, B = dPhi/dU (bilateral.pxd)."""
    eq = _mask(p)
    rho = np.stack([rho_n, rho_t, rho_t], axis=1)
    Phi = np.where(eq, rho * U, R)
    if not jacobian:
        return Phi
    n = len(R)
    A, B = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
    i = np.arange(3)
    A[:, i, i] = np.where(eq, 0.0, 1.0)
    B[:, i, i] = np.where(eq, rho, 0.0)
    return Phi, A, B
