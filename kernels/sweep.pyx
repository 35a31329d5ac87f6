"""Gauss-Seidel sweep and residual over a block-sparse Delassus operator (block size 3).

W is held as block CSR: row alpha's blocks are blocks[indptr[alpha]:indptr[alpha+1]], in the
columns indices[...]; diag[alpha] points at W_alpha,alpha. Local frame: normal first.
The pure-Python twins are in parsolve/solvers/reference.py.
"""
from libc.math cimport sqrt
from cone cimport natural_map_sq
from local cimport local_solve, relax, LOCAL_NCODES, METHOD_COUNT

ctypedef long long index_t


def gauss_seidel_sweep(const index_t[::1] indptr, const index_t[::1] indices,
                       const double[:, :, ::1] blocks, const index_t[::1] diag,
                       const double[:, ::1] B, const double[::1] mu, double[:, ::1] R,
                       const index_t[::1] order, double omega, index_t[::1] counts,
                       int method=0):
    """One sweep over the contacts in `order`: R_a <- (1-omega) R_a + omega local(W_aa, b_a, mu_a).

    counts[k] is incremented for each local solve that ended in outcome k (LOCAL_* codes);
    method is the local solver (METHOD_*, the index in reference.LOCAL_SOLVERS).
    Returns the largest change of a reaction, relative to the largest reaction (0 when all zero).
    """
    cdef Py_ssize_t n = order.shape[0], i, a, k, c
    cdef double b[3]
    cdef double r[3]
    cdef double d[3]
    cdef double dmax = 0.0, rmax = 0.0
    cdef const double* Wb
    cdef int code
    assert counts.shape[0] >= LOCAL_NCODES and 0 <= method < METHOD_COUNT
    with nogil:
        for i in range(n):
            a = order[i]
            b[0] = B[a, 0]; b[1] = B[a, 1]; b[2] = B[a, 2]
            for k in range(indptr[a], indptr[a + 1]):
                c = indices[k]
                if c == a:
                    continue
                Wb = &blocks[k, 0, 0]
                b[0] += Wb[0] * R[c, 0] + Wb[1] * R[c, 1] + Wb[2] * R[c, 2]
                b[1] += Wb[3] * R[c, 0] + Wb[4] * R[c, 1] + Wb[5] * R[c, 2]
                b[2] += Wb[6] * R[c, 0] + Wb[7] * R[c, 1] + Wb[8] * R[c, 2]
            r[0] = R[a, 0]; r[1] = R[a, 1]; r[2] = R[a, 2]
            code = local_solve(&blocks[diag[a], 0, 0], b, mu[a], r, method)
            counts[code] += 1
            relax(r, &R[a, 0], omega, d, &dmax, &rmax)
    return dmax / rmax if rmax > 0.0 else 0.0


def delassus_residual(const index_t[::1] indptr, const index_t[::1] indices,
                      const double[:, :, ::1] blocks, const double[:, ::1] B,
                      const double[::1] mu, const double[:, ::1] R, double[:, ::1] U):
    """U = W R + B and the residual of DESIGN.md section 2 (Siconos' natural-map error).

    Returns (error, |B|, |R|, |U|) with error = sqrt(sum |e_a|^2) / max(|B|, |R|, |U|).
    """
    cdef Py_ssize_t n = B.shape[0], a, k, c
    cdef double s = 0.0, nb = 0.0, nr = 0.0, nu = 0.0, den
    cdef const double* Wb
    with nogil:
        for a in range(n):
            U[a, 0] = B[a, 0]; U[a, 1] = B[a, 1]; U[a, 2] = B[a, 2]
            for k in range(indptr[a], indptr[a + 1]):
                c = indices[k]
                Wb = &blocks[k, 0, 0]
                U[a, 0] += Wb[0] * R[c, 0] + Wb[1] * R[c, 1] + Wb[2] * R[c, 2]
                U[a, 1] += Wb[3] * R[c, 0] + Wb[4] * R[c, 1] + Wb[5] * R[c, 2]
                U[a, 2] += Wb[6] * R[c, 0] + Wb[7] * R[c, 1] + Wb[8] * R[c, 2]
            s += natural_map_sq(&R[a, 0], &U[a, 0], mu[a])
            for k in range(3):
                nb += B[a, k] * B[a, k]
                nr += R[a, k] * R[a, k]
                nu += U[a, k] * U[a, k]
    nb = sqrt(nb); nr = sqrt(nr); nu = sqrt(nu)
    den = max(nb, nr, nu)
    return (sqrt(s) / den if den > 0.0 else sqrt(s)), nb, nr, nu
