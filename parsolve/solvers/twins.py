"""Python twins of the sweeps and Newton's per-row parts (kernels/sweep.pyx, newton.pyx), with
the kernels' names and arguments: the readable specification, and what the tests hold the
compiled loops equal to. The per-row law work goes through parsolve.laws (law.pxd's twin).
"""
import math

import numpy as np

from .. import laws
from ..parallel.reduce import exact_sums
from .residual import residual_from_parts


def gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R, order, omega, counts,
                       method=0):
    dmax = rmax = 0.0
    for a in order:
        b = B[a].copy()
        for k in range(indptr[a], indptr[a + 1]):
            c = indices[k]
            if c != a:
                b += blocks[k] @ R[c]
        r, code = laws.row_solve(kind[a], blocks[diag[a]], b, param[a], R[a], method, R)
        counts[code] += 1
        if omega != 1.0:
            r = (1.0 - omega) * R[a] + omega * r
        dmax = max(dmax, np.abs(r - R[a]).max())
        rmax = max(rmax, np.abs(r).max())
        R[a] = r
    return dmax / rmax if rmax > 0.0 else 0.0


def delassus_residual(indptr, indices, blocks, B, kind, param, R, U):
    s = 0.0
    for a in range(len(B)):
        U[a] = B[a]
        for k in range(indptr[a], indptr[a + 1]):
            U[a] += blocks[k] @ R[indices[k]]
        s += laws.residual_sq(kind[a], param[a], R[a], U[a], R)
    nb, nr, nu = (float(np.linalg.norm(X)) for X in (B, R, U))
    den = max(nb, nr, nu)
    return (math.sqrt(s) / den if den > 0.0 else math.sqrt(s)), nb, nr, nu


def gauss_seidel_rows(indptr, indices, blocks, diag, B, kind, param, R, U, order, omega, counts,
                      method, tol, max_iter):
    err, it = delassus_residual(indptr, indices, blocks, B, kind, param, R, U)[0], 0
    while err > tol and it < max_iter:
        gauss_seidel_sweep(indptr, indices, blocks, diag, B, kind, param, R, order, omega,
                           counts, method)
        it += 1
        err = delassus_residual(indptr, indices, blocks, B, kind, param, R, U)[0]
    return it, err


def body_gauss_seidel_sweep(inc_ptr, inc_body, H, K, Wdiag, B, kind, param, R, du, order, omega,
                            counts, method=0):
    """U_a = B_a + sum_e H_e du_body(e), du = M^-1 H^T R."""
    dmax = rmax = 0.0
    for a in order:
        W = Wdiag[a]
        b = B[a] - W @ R[a]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            b = b + H[e] @ du[inc_body[e]]
        r, code = laws.row_solve(kind[a], W, b, param[a], R[a], method, R)
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


def body_sweep_traffic(inc_ptr, inc_body, H, K, Wdiag, B, kind, param, R, du, order):
    """The exclusive or of the 64-bit words one sweep in `order` loads (the kernel's traffic
    probe); R and du are left as they are."""
    order = np.asarray(order)
    if len(order) == 0:
        return 0
    inc = np.concatenate([np.arange(inc_ptr[a], inc_ptr[a + 1]) for a in order])
    words = [np.asarray(kind, np.uint64)[order]]
    words += [np.ascontiguousarray(X[order]).view(np.uint64).ravel()
              for X in (Wdiag, B, param[:, :1], R)]
    words += [np.ascontiguousarray(X).view(np.uint64).ravel()
              for X in (H[inc], K[inc], du[inc_body[inc]])]
    return int(np.bitwise_xor.reduce(np.concatenate(words)))


def body_apply(inc_ptr, inc_body, K, R, du, order):
    for a in order:
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            du[inc_body[e]] += K[e] @ R[a]


def body_residual(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts):
    for a in range(len(B)):
        U[a] = B[a]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            U[a] += H[e] @ du[inc_body[e]]
        parts[a] = (laws.residual_sq(kind[a], param[a], R[a], U[a], R), B[a] @ B[a],
                    R[a] @ R[a], U[a] @ U[a])


def body_gauss_seidel_rows(inc_ptr, inc_body, H, K, Wdiag, B, kind, param, R, du, U, parts,
                           order, omega, counts, method, tol, max_iter, sync=False):
    """Sweeps in `order` until the residual reaches tol or max_iter sweeps are done:
    (sweeps, residual); sync: du = M^-1 H^T R first."""
    if sync:
        du[:] = 0.0
        body_apply(inc_ptr, inc_body, K, R, du, order)
    if len(B) == 0:
        return 0, 0.0

    def residual():
        body_residual(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts)
        return residual_from_parts(exact_sums(parts))

    err, it = residual(), 0
    while err > tol and it < max_iter:
        if len(order):
            body_gauss_seidel_sweep(inc_ptr, inc_body, H, K, Wdiag, B, kind, param, R, du,
                                    order, omega, counts, method)
        it += 1
        err = residual()
    return it, err


def alart_curnier(kind, param, R, U, rho_n, rho_t, Phi, A=None, B=None, C=None):
    """Phi, and A and B when given, in place: each row's semismooth function; C (n, 3), when
    given, each row's dPhi/dr_N of its linked partner."""
    if A is None:
        Phi[:] = laws.phi_rows(kind, param, R, U, rho_n, rho_t, jacobian=False)
    elif C is None:
        Phi[:], A[:], B[:] = laws.phi_rows(kind, param, R, U, rho_n, rho_t)
    else:
        Phi[:], A[:], B[:], C[:] = laws.phi_rows(kind, param, R, U, rho_n, rho_t, coupling=True)


def project_admissible(kind, param, R):
    """R_a <- the admissible reaction nearest to R_a, in place."""
    laws.project_admissible(kind, param, R)


def newton_parts(kind, param, R, U, V, q, rho_n, rho_t, parts):
    """(|e_a|^2, |q_a|^2, |R_a|^2, |U_a|^2, |Phi(R_a, V_a)|^2, |Phi(R_a, U_a)|^2) per row in
    parts (n, 6)."""
    phi = (laws.phi_rows(kind, param, R, X, rho_n, rho_t, jacobian=False) for X in (V, U))
    for j, X in enumerate((laws.residual_vector(kind, param, R, U), q, R, U, *phi)):
        parts[:, j] = np.sum(X ** 2, axis=1)


def slope_parts(Phi, A, B, d, Wd, parts):
    """s_a = Phi_a . (A_a d_a + B_a Wd_a) as
    (max(s_a, 0), max(-s_a, 0)) in parts (n, 2)."""
    s = np.sum(Phi * (np.einsum("kij,kj->ki", A, d) + np.einsum("kij,kj->ki", B, Wd)), axis=1)
    parts[:, 0] = np.maximum(s, 0.0)
    parts[:, 1] = np.maximum(-s, 0.0)


def jacobian_blocks(indptr, blocks, diag, A, B, alpha, J):
    """A + B (W + diag(alpha) I) in W's
    block-CSR pattern, into J (nnz, 3, 3)."""
    rows = np.repeat(np.arange(len(diag)), np.diff(indptr))
    J[:] = np.einsum("kij,kjl->kil", B[rows], blocks)
    J[diag] += A + alpha[:, None, None] * B
