"""Interaction laws. A law is a row kind: every interaction is a 3-D row of U = B + W R (as in
Solfec), and its kind selects the law C(U, R) = 0 the row obeys. Each law lives in one room:
its module here (parameters and their checks, the free term B's shift, which may depend on the
time t, the Python twins) and one Cython header in kernels/ with its inline local solve,
residual and Newton pieces, dispatched by kernels/law.pxd.

The functions below are the Python dispatcher (the twin of law.pxd): the solvers, residuals,
checkpoint and output call these and never name a law.
"""
import numpy as np

from . import bilateral, connector, coulomb, spring
from .codes import KINDS, METHODS, OUTCOMES

LAWS = (coulomb, bilateral, spring, connector)       # indexed by kind (codes.KINDS)
NCODES = len(OUTCOMES)
assert tuple(law.KIND for law in LAWS) == tuple(range(len(KINDS)))


def _groups(kind):
    """(law, rows) for each law present among the rows of `kind`."""
    kind = np.asarray(kind)
    if len(kind) and (kind == kind[0]).all():           # one law: all rows, no copy
        return [(LAWS[int(kind[0])], slice(None))]
    return [(law, np.flatnonzero(kind == law.KIND)) for law in LAWS
            if (kind == law.KIND).any()]


def solve_params(kind, param):
    """The parameter columns the local solves read, contiguous: as many as the laws present
    need (one for contacts alone), so that the sweep streams no more than it uses."""
    width = max([law.SOLVE_PARAMS for law, _ in _groups(kind)] or [1])
    return np.ascontiguousarray(param[:, :width])


def free_term(rows, U_before, t, h):
    """B's shift (n, 3) of every row, from its law: impacts, gaps, targets, drift."""
    shift = np.zeros((len(rows), 3))
    for law, idx in _groups(rows.kind):
        shift[idx] = law.free_term(rows if isinstance(idx, slice) else rows.take(idx),
                                   U_before[idx], t, h)
    return shift


def row_solve(kind, W, b, p, r0=None, method=0):
    """One row's reaction and outcome code (twin of law.pxd's law_solve)."""
    return LAWS[int(kind)].row_solve(W, b, p, r0, method)


def residual_sq(kind, p, r, u):
    """|e|^2 of one row (twin of law.pxd's law_residual_sq)."""
    return LAWS[int(kind)].residual_sq(p, r, u)


def residual_vector(kind, param, R, U):
    """e (n, 3), each row's natural-map residual: zero iff (U, R) satisfy the row's law."""
    if len(R) == 0:
        return np.zeros((0, 3))
    E = np.empty_like(R)
    for law, idx in _groups(kind):
        E[idx] = law.residual_vector(R[idx], U[idx], param[idx])
    return E


def project_admissible(kind, param, R):
    """R_a <- the admissible reaction nearest to R_a, in place (twin of law_project)."""
    for law, idx in _groups(kind):
        sub = R[idx] if not isinstance(idx, slice) else R
        law.project_admissible(sub, param[idx])
        R[idx] = sub


def status(kind, param, R):
    """Each row's status in the results (codes.STATUS), from its law, as int8."""
    out = np.zeros(len(R), np.int8)
    for law, idx in _groups(kind):
        out[idx] = law.status(R[idx], param[idx])
    return out


def cones(kind, param):
    """Each row's friction-cone slope mu (n,) for the interior-point solver, from its law's
    `cone`; raises ValueError naming the kinds with no cone (or a slope <= 0)."""
    mu = np.full(len(kind), np.nan)
    for law, idx in _groups(kind):
        if hasattr(law, "cone"):
            mu[idx] = law.cone(param[idx])
    bad = ~(mu > 0.0)
    if bad.any():
        names = sorted({KINDS[int(k)] for k in np.asarray(kind)[bad]})
        raise ValueError(f"{int(bad.sum())} row(s) of kind {', '.join(names)} have no "
                         "friction cone of slope > 0")
    return mu


def phi_rows(kind, param, R, U, rho_n, rho_t, jacobian=True):
    """Each row's semismooth function Phi (n, 3), with A and B (n, 3, 3) when asked (twin of
    law.pxd's law_phi)."""
    n = len(R)
    Phi, A, B = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3))
    for law, idx in _groups(kind):
        out = law.phi_rows(R[idx], U[idx], param[idx], rho_n[idx], rho_t[idx], jacobian)
        if jacobian:
            Phi[idx], A[idx], B[idx] = out
        else:
            Phi[idx] = out
    return (Phi, A, B) if jacobian else Phi


__all__ = ["LAWS", "KINDS", "OUTCOMES", "METHODS", "NCODES", "coulomb", "bilateral", "spring",
           "connector",
           "solve_params", "free_term", "row_solve", "residual_sq", "residual_vector",
           "project_admissible", "phi_rows", "status", "cones"]
