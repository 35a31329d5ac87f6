"""Interaction laws. A law is a row kind: every interaction is a 3-D row of U = B + W R (as in
Solfec), and its kind selects the law C(U, R) = 0 the row obeys. Each law lives in one room:
its module here (parameters and their checks, the free term B's shift, which may depend on the
time t, the Python twins) and one Cython header in kernels/ with its inline local solve,
residual and Newton pieces, dispatched by kernels/law.pxd.

The functions below are the Python dispatcher (the twin of law.pxd): the solvers, residuals,
checkpoint and output call these and never name a law.

A LINKED law reads another row's normal impulse during the solve (rolling resistance, bounded
by its contact's): `link` writes that row's index into its parameters once the rows are in
sweep order, and the functions below hand it the reactions (the kernels get their base
pointer).
"""
import numpy as np

from ..tables.table import FEW_ROWS
from . import bilateral, bond, connector, coulomb, rolling, spring
from .codes import KINDS, METHODS, OUTCOMES

LAWS = (coulomb, bilateral, spring, connector, rolling, bond)  # indexed by kind (codes.KINDS)
NCODES = len(OUTCOMES)
assert tuple(law.KIND for law in LAWS) == tuple(range(len(KINDS)))


def _groups(kind):
    """(law, rows) for each law present among the rows of `kind`."""
    kind = np.asarray(kind)
    n = len(kind)
    if not n:
        return []
    if n <= FEW_ROWS:                             # a few rows: read in Python
        kinds = kind.tolist()
        if kinds.count(kinds[0]) == n:
            return [(LAWS[kinds[0]], slice(None))]
        return [(LAWS[k], np.flatnonzero(kind == k)) for k in sorted(set(kinds))]
    if (kind == kind[0]).all():                         # one law: all rows, no copy
        return [(LAWS[int(kind[0])], slice(None))]
    present = np.flatnonzero(np.bincount(kind.astype(np.intp), minlength=len(LAWS)))
    return [(LAWS[k], np.flatnonzero(kind == k)) for k in present]


def _linked(law, idx, param, R):
    """The extra argument of a LINKED law's vectorised functions: its rows' linked normal
    impulses (nothing for another law)."""
    if not getattr(law, "LINKED", False):
        return ()
    return (law.linked_normal(param[idx], R),)


def link(rows):
    """Each LINKED row's partner index into its parameters, in place (rows in their final
    order: the stepper calls this once they are in sweep order)."""
    for law, idx in _groups(rows.kind):
        if getattr(law, "LINKED", False):
            law.link(rows, np.arange(len(rows))[idx])


def links(kind, param):
    """(rows, partners): the LINKED rows with a partner and its index (Newton's coupling
    blocks)."""
    out = [(np.arange(len(kind))[idx], param[idx, 2].astype(np.int64))
           for law, idx in _groups(kind) if getattr(law, "LINKED", False)]
    if not out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, c = (np.concatenate(x) for x in zip(*out))
    return a[c >= 0], c[c >= 0]


def solve_params(kind, param):
    """The parameter columns the local solves read, contiguous: as many as the laws present
    need (two for contacts alone: mu and the compliance), so that the sweep streams no more
    than it uses; zero columns added where `param` has fewer (a hand-made problem's)."""
    width = max([law.SOLVE_PARAMS for law, _ in _groups(kind)] or [1])
    if param.shape[1] < width:
        wide = np.zeros((len(param), width))
        wide[:, :param.shape[1]] = param
        return wide
    return np.ascontiguousarray(param[:, :width])


def free_term(rows, U_before, t, h):
    """B's shift (n, 3) of every row, from its law: impacts, gaps, targets, drift."""
    groups = _groups(rows.kind)
    if len(groups) == 1:                              # one law: its shift is all there is
        law, _ = groups[0]
        return np.ascontiguousarray(law.free_term(rows, U_before, t, h), float)
    shift = np.zeros((len(rows), 3))
    for law, idx in groups:
        shift[idx] = law.free_term(rows if isinstance(idx, slice) else rows.take(idx),
                                   U_before[idx], t, h)
    return shift


def row_solve(kind, W, b, p, r0=None, method=0, R=None):
    """One row's reaction and outcome code (twin of law.pxd's law_solve); R: all the rows'
    reactions (a LINKED law reads its partner's)."""
    law = LAWS[int(kind)]
    if getattr(law, "LINKED", False):
        return law.row_solve(W, b, p, r0, method, R)
    return law.row_solve(W, b, p, r0, method)


def residual_sq(kind, p, r, u, R=None):
    """|e|^2 of one row (twin of law.pxd's law_residual_sq)."""
    law = LAWS[int(kind)]
    if getattr(law, "LINKED", False):
        return law.residual_sq(p, r, u, R)
    return law.residual_sq(p, r, u)


def residual_vector(kind, param, R, U):
    """e (n, 3), each row's natural-map residual: zero iff (U, R) satisfy the row's law."""
    if len(R) == 0:
        return np.zeros((0, 3))
    E = np.empty_like(R)
    for law, idx in _groups(kind):
        E[idx] = law.residual_vector(R[idx], U[idx], param[idx],
                                     *_linked(law, idx, param, R))
    return E


def project_admissible(kind, param, R):
    """R_a <- the admissible reaction nearest to R_a, in place (twin of law_project, in row
    order: a LINKED row reads its partner as projected if the partner comes first)."""
    groups = _groups(kind)
    for law, idx in sorted(groups, key=lambda g: getattr(g[0], "LINKED", False)):
        sub = R[idx] if not isinstance(idx, slice) else R
        law.project_admissible(sub, param[idx], *_linked(law, idx, param, R))
        R[idx] = sub


def status(kind, param, R):
    """Each row's status in the results (codes.STATUS), from its law, as int8."""
    out = np.zeros(len(R), np.int8)
    for law, idx in _groups(kind):
        out[idx] = law.status(R[idx], param[idx], *_linked(law, idx, param, R))
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


def compliance(kind, param):
    """Each row's normal compliance c (n,): u_N + c r_N is the normal velocity its law reads
    (a compliant contact's, laws/coulomb.py; zero for the laws without one)."""
    c = np.zeros(len(kind))
    for law, idx in _groups(kind):
        if hasattr(law, "compliance"):
            c[idx] = law.compliance(param[idx])
    return c


def phi_rows(kind, param, R, U, rho_n, rho_t, jacobian=True, coupling=False):
    """Each row's semismooth function Phi (n, 3), with A and B (n, 3, 3) when asked (twin of
    law.pxd's law_phi), and with coupling C (n, 3): dPhi_a/dr_N of a LINKED row's partner
    (zero for other rows)."""
    n = len(R)
    Phi, A, B = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3))
    C = np.zeros((n, 3))
    for law, idx in _groups(kind):
        extra = _linked(law, idx, param, R)
        out = law.phi_rows(R[idx], U[idx], param[idx], rho_n[idx], rho_t[idx], jacobian,
                           *extra)
        if jacobian:
            Phi[idx], A[idx], B[idx] = out[:3]
            if extra:
                C[idx] = out[3]
        else:
            Phi[idx] = out
    if not jacobian:
        return Phi
    return (Phi, A, B, C) if coupling else (Phi, A, B)


__all__ = ["LAWS", "KINDS", "OUTCOMES", "METHODS", "NCODES", "coulomb", "bilateral", "spring",
           "connector", "rolling", "bond", "link", "links",
           "solve_params", "free_term", "row_solve", "residual_sq", "residual_vector",
           "project_admissible", "phi_rows", "status", "cones", "compliance"]
