"""The connector law: the Python half of its room (the compiled half: kernels/connector.pxd).

A scalar row between two body coordinates (Exudyn's CoordinateSpringDamperExt, made per step
by parsolve/elements/connectors.py): only the normal component counts, R_T = 0, and

    R_N - a - g U_N  in  -c Sgn(U_N),        p = (a, g, c),  g <= 0,  c >= 0,

U_N = v = f1 v_m1 - f0 v_m0 the connector's rate at the step's end and R_N the impulse on the
m1 side over the step (minus h times the mean connector force f_SD). With c = 0 it is the
spring law, R_N = a + g U_N: the spring-damper, the bristle friction and the limit stops,
linearised over the step (trapezoidal rule, parsolve/elements/connectors.py), so that their stiffness
and damping enter the row's W and B: implicit. c > 0 adds an exact (set-valued) Coulomb
friction impulse of bound c, the option beyond Exudyn. The local solve is exact: with
w = W_NN > 0 and 1 - g w > 0, the stick candidate r0 = -b_N / w (U_N = 0) holds when
|r0 - a| <= c, else the row slides with r = (a + g b_N + c sign(r0 - a)) / (1 - g w).

The rows act on body coordinates, not on points (their geometry, assembly/geometry.py).
"""
import numpy as np

from ..tables.interactions import PARAMS
from .codes import KINDS, OUTCOMES, STATUS
from .spring import project_admissible  # noqa: F401  (R_T = 0: the spring row's)

KIND = KINDS.index("connector")
PARAM_NAMES = ("a", "g", "c")
SOLVE_PARAMS = 3
CONNECTOR, FAILED = OUTCOMES.index("connector"), OUTCOMES.index("failed")


def rows(a, g, c=None):
    """The kind and param columns of connector rows with (a, g, c) (c None: zero)."""
    param = np.zeros((len(a), PARAMS))
    param[:, 0], param[:, 1] = a, g
    if c is not None:
        param[:, 2] = c
    return {"kind": np.full(len(a), KIND, np.int8), "param": param}


def free_term(rows, U_before, t, h):
    """None of its own: the force is in (a, g, c)."""
    return np.zeros((len(rows), 3))


def row_solve(W, b, p, r0=None, method=0):
    W, b = np.asarray(W, float), np.asarray(b, float)
    w = W[0, 0]
    den = 1.0 - p[1] * w
    if den <= 0.0 or (p[2] > 0.0 and w <= 0.0):
        return (np.zeros(3) if r0 is None else np.asarray(r0, float).copy()), FAILED
    if p[2] > 0.0:
        r = -b[0] / w
        s = r - p[0]
        if abs(s) > p[2]:
            r = (p[0] + p[1] * b[0] + (p[2] if s > 0.0 else -p[2])) / den
    else:
        r = (p[0] + p[1] * b[0]) / den
    return np.array([r, 0.0, 0.0]), CONNECTOR


def _e_n(s, u, c, rho):
    return s - np.clip(s - rho * u, -c, c)


def residual_sq(p, r, u):
    e = float(_e_n(r[0] - p[0] - p[1] * u[0], u[0], p[2], 1.0))
    return e * e + r[1] * r[1] + r[2] * r[2]


def residual_vector(R, U, p):
    E = R.copy()
    E[:, 0] = _e_n(R[:, 0] - p[:, 0] - p[:, 1] * U[:, 0], U[:, 0], p[:, 2], 1.0)
    return E


def status(R, p):
    return np.full(len(R), STATUS.index("connector"))


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True):
    """Phi_N = s - proj_[-c, c](s - rho_n U_N), s = R_N - a - g U_N; Phi_T = R_T."""
    s = R[:, 0] - p[:, 0] - p[:, 1] * U[:, 0]
    z = s - rho_n * U[:, 0]
    Phi = R.copy()
    Phi[:, 0] = s - np.clip(z, -p[:, 2], p[:, 2])
    if not jacobian:
        return Phi
    n = len(R)
    inside = np.abs(z) < p[:, 2]
    A, B = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
    A[:, [0, 1, 2], [0, 1, 2]] = 1.0
    A[:, 0, 0] = np.where(inside, 0.0, 1.0)
    B[:, 0, 0] = np.where(inside, rho_n, -p[:, 1])
    return Phi, A, B
