"""The spring law: the Python half of its room (the compiled half: kernels/spring.pxd).

R_N = a + g U_N and R_T = 0, p = (a, g): the impulse over the step of a force F(d, d') along the
row's normal (Solfec's PUT_SPRING, d the stretch, d' = U_N its rate), taken at the step's mean
stretch and rate (the trapezoidal rule, Newmark's average acceleration: no numerical damping,
unconditionally stable for a linear spring):

    d = (d(t) + d(t+h)) / 2 = d(t+h/2) + h/4 (U_N - U0),   d' = (U0 + U_N) / 2,

with U0 the rate at the step's start, linearised about U_N = U0:

    R_N = h [F0 + k (U_N - U0)],   F0 = F(d(t+h/2), U0),   k = h/4 F_d + 1/2 F_v,

so a = h (F0 - k U0) and g = h k, F_d and F_v the partial derivatives (central differences of
the user's function). A restoring, damping force has k <= 0 and the local solve
r_N = (a + g b_N) / (1 - g W_NN) never divides by zero: stable for any stiffness, on any number
of ranks (no explicit force, no rank-dependent order).
"""
from math import isfinite

import numpy as np

from ..errors import InputError
from ..tables.interactions import PARAMS
from .codes import KINDS, OUTCOMES, STATUS

KIND = KINDS.index("spring")
PARAM_NAMES = ("a", "g")
SOLVE_PARAMS = 2
SPRING, FAILED = OUTCOMES.index("spring"), OUTCOMES.index("failed")


def rows(force, d, U0, h, what):
    """The law's columns (kind, param) of the rows whose springs have force(d, d') (one
    callable per row): p = (a, g) linearised at the mid-step stretch d and the start rate U0;
    the callables' failures name `what[k]`."""
    param = np.zeros((len(d), PARAMS))
    # Python floats (the same doubles as numpy's scalars, a tenth of their cost in the
    # user's function's arithmetic); s + 0 and u + 0 as the central differences' own
    # arguments are (a stretch of -0.0 reaches the force as +0.0 in all five calls)
    for k, (f, s, u) in enumerate(zip(force, d.tolist(), U0.tolist())):
        eps_d = 1e-6 * max(abs(s), 1e-9)
        eps_v = 1e-6 * max(abs(u), 1e-9)
        try:
            F0, d1, d2, v1, v2 = (float(f(s + 0, u + 0)), float(f(s + eps_d, u + 0)),
                                  float(f(s - eps_d, u + 0)), float(f(s + 0, u + eps_v)),
                                  float(f(s + 0, u - eps_v)))
        except Exception as exc:
            raise InputError(f"{what[k]}: its force raised at d = {s:g}: {exc!r}") from None
        if not (isfinite(F0) and isfinite(d1) and isfinite(d2) and isfinite(v1)
                and isfinite(v2)):
            raise InputError(f"{what[k]}: its force returned {F0} at d = {s:g}, d' = {u:g}")
        slope = 0.25 * h * (d1 - d2) / (2 * eps_d) + 0.5 * (v1 - v2) / (2 * eps_v)
        param[k, 0], param[k, 1] = h * (F0 - slope * u), h * slope
    return {"kind": np.full(len(d), KIND, np.int8), "param": param}


def free_term(rows, U_before, t, h):
    """None of its own: the force is in (a, g)."""
    return np.zeros((len(rows), 3))


def row_solve(W, b, p, r0=None, method=0):
    W, b = np.asarray(W, float), np.asarray(b, float)
    den = 1.0 - p[1] * W[0, 0]
    if den <= 0.0:
        return (np.zeros(3) if r0 is None else np.asarray(r0, float).copy()), FAILED
    return np.array([(p[0] + p[1] * b[0]) / den, 0.0, 0.0]), SPRING


def residual_sq(p, r, u):
    e = r[0] - p[0] - p[1] * u[0]
    return float(e * e + r[1] * r[1] + r[2] * r[2])


def residual_vector(R, U, p):
    E = R.copy()
    E[:, 0] = R[:, 0] - p[:, 0] - p[:, 1] * U[:, 0]
    return E


def project_admissible(R, p):
    R[:, 1:] = 0.0


def status(R, p):
    return np.full(len(R), STATUS.index("spring"))


def phi_rows(R, U, p, rho_n, rho_t, jacobian=True):
    Phi = residual_vector(R, U, p)
    if not jacobian:
        return Phi
    n = len(R)
    A, B = np.zeros((n, 3, 3)), np.zeros((n, 3, 3))
    A[:, [0, 1, 2], [0, 1, 2]] = 1.0
    B[:, 0, 0] = -p[:, 1]
    return Phi, A, B
