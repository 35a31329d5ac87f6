"""Gauss-Seidel sweeps and residuals over the rows of U = B + W R (block size 3), for rows of
any law (law.pxd dispatches on each row's kind; a row's parameters are param[a, :]).

Two forms of W:
- block CSR (gauss_seidel_sweep, delassus_residual): row a's blocks are
  blocks[indptr[a]:indptr[a+1]], in the columns indices[...]; diag[a] points at W_aa.
- through the bodies (body_*): U = B + H du with du = M^-1 H^T R, the velocity change the
  reactions cause. A relaxation of row a reads the velocity changes of its (one or two) bodies,
  solves its local problem with its diagonal block W_aa, and writes the change of its reaction
  back into them: O(1) work per relaxation, whatever the number of linked rows (pe's
  formulation). Incidences (row, body) are grouped by row: row a's are inc_ptr[a]:inc_ptr[a+1],
  with body inc_body[e], H[e] (3 x 6) and K[e] = M^-1 H[e]^T (6 x 3). The iterates are those
  of the block-CSR sweep up to round-off.
Local frame: normal first. Python twins: parsolve/solvers/twins.py, same names.
"""
from libc.math cimport sqrt, fabs
from exact cimport local_exact_sums
from codes cimport LOCAL_NCODES, METHOD_COUNT
from law cimport law_solve, law_residual_sq
from typedefs cimport index_t, kind_t
from body_sweep cimport relax, add_coupled, body_sweep_rows


cdef check_sweep(index_t[::1] counts, int method, const kind_t[::1] kind,
                 const double[:, ::1] param, const double[:, ::1] B):
    assert counts.shape[0] >= LOCAL_NCODES and 0 <= method < METHOD_COUNT
    assert kind.shape[0] == param.shape[0] == B.shape[0]


cdef double rows_sweep(const index_t[::1] indptr, const index_t[::1] indices,
                       const double[:, :, ::1] blocks, const index_t[::1] diag,
                       const double[:, ::1] B, const kind_t[::1] kind,
                       const double[:, ::1] param, double[:, ::1] R,
                       const index_t[::1] order, double omega, index_t[::1] counts,
                       int method) noexcept nogil:
    """gauss_seidel_sweep's loop."""
    cdef Py_ssize_t n = order.shape[0], i, a, k, c
    cdef double b[3]
    cdef double d[3]
    cdef double dmax = 0.0, rmax = 0.0
    cdef const double* Wb
    cdef double* Rp = &R[0, 0] if R.shape[0] else NULL
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
        relax(kind[a], &param[a, 0], &blocks[diag[a], 0, 0], b, &R[a, 0], omega, method,
              &counts[0], d, &dmax, &rmax, Rp)
    return dmax / rmax if rmax > 0.0 else 0.0


cdef double rows_residual(const index_t[::1] indptr, const index_t[::1] indices,
                          const double[:, :, ::1] blocks, const double[:, ::1] B,
                          const kind_t[::1] kind, const double[:, ::1] param,
                          const double[:, ::1] R, double[:, ::1] U,
                          double* norms) noexcept nogil:
    """delassus_residual's loop: U = W R + B, the error; norms = |B|, |R|, |U|."""
    cdef Py_ssize_t n = B.shape[0], a, k, c
    cdef double s = 0.0, nb = 0.0, nr = 0.0, nu = 0.0, den
    cdef const double* Wb
    cdef const double* Rp = &R[0, 0] if R.shape[0] else NULL
    for a in range(n):
        U[a, 0] = B[a, 0]; U[a, 1] = B[a, 1]; U[a, 2] = B[a, 2]
        for k in range(indptr[a], indptr[a + 1]):
            c = indices[k]
            Wb = &blocks[k, 0, 0]
            U[a, 0] += Wb[0] * R[c, 0] + Wb[1] * R[c, 1] + Wb[2] * R[c, 2]
            U[a, 1] += Wb[3] * R[c, 0] + Wb[4] * R[c, 1] + Wb[5] * R[c, 2]
            U[a, 2] += Wb[6] * R[c, 0] + Wb[7] * R[c, 1] + Wb[8] * R[c, 2]
        s += law_residual_sq(kind[a], &param[a, 0], &R[a, 0], &U[a, 0], Rp)
        for k in range(3):
            nb += B[a, k] * B[a, k]
            nr += R[a, k] * R[a, k]
            nu += U[a, k] * U[a, k]
    norms[0] = sqrt(nb); norms[1] = sqrt(nr); norms[2] = sqrt(nu)
    den = max(norms[0], norms[1], norms[2])
    return sqrt(s) / den if den > 0.0 else sqrt(s)


def gauss_seidel_sweep(const index_t[::1] indptr, const index_t[::1] indices,
                       const double[:, :, ::1] blocks, const index_t[::1] diag,
                       const double[:, ::1] B, const kind_t[::1] kind,
                       const double[:, ::1] param, double[:, ::1] R,
                       const index_t[::1] order, double omega, index_t[::1] counts,
                       int method=0):
    """One sweep over the rows in `order`: R_a <- (1-omega) R_a + omega local(W_aa, b_a).

    counts[k] is incremented for each local solve that ended in outcome k (LOCAL_* codes);
    method is the Coulomb local solver (METHOD_*, parsolve.laws.codes.METHODS).
    Returns the largest change of a reaction, relative to the largest reaction (0 when all zero).
    """
    cdef double x
    check_sweep(counts, method, kind, param, B)
    with nogil:
        x = rows_sweep(indptr, indices, blocks, diag, B, kind, param, R, order, omega, counts,
                       method)
    return x


def delassus_residual(const index_t[::1] indptr, const index_t[::1] indices,
                      const double[:, :, ::1] blocks, const double[:, ::1] B,
                      const kind_t[::1] kind, const double[:, ::1] param,
                      const double[:, ::1] R, double[:, ::1] U):
    """U = W R + B and the residual of parsolve/solvers/residual.py.

    Returns (error, |B|, |R|, |U|) with error = sqrt(sum |e_a|^2) / max(|B|, |R|, |U|).
    """
    cdef double e
    cdef double norms[3]
    assert kind.shape[0] == param.shape[0] == B.shape[0]
    with nogil:
        e = rows_residual(indptr, indices, blocks, B, kind, param, R, U, norms)
    return e, norms[0], norms[1], norms[2]


def gauss_seidel_rows(const index_t[::1] indptr, const index_t[::1] indices,
                      const double[:, :, ::1] blocks, const index_t[::1] diag,
                      const double[:, ::1] B, const kind_t[::1] kind,
                      const double[:, ::1] param, double[:, ::1] R, double[:, ::1] U,
                      const index_t[::1] order, double omega, index_t[::1] counts,
                      int method, double tol, Py_ssize_t max_iter):
    """Sweeps in `order` until the residual (delassus_residual's) reaches tol or max_iter
    sweeps are done, the residual after every sweep: GaussSeidel's loop on block-CSR rows in
    one call, so that a small problem does not pay two calls from Python a sweep. Returns
    (sweeps, residual); the iterates are those of the loop in Python, bit for bit."""
    cdef double err
    cdef double norms[3]
    cdef Py_ssize_t it = 0
    check_sweep(counts, method, kind, param, B)
    with nogil:
        err = rows_residual(indptr, indices, blocks, B, kind, param, R, U, norms)
        while err > tol and it < max_iter:
            rows_sweep(indptr, indices, blocks, diag, B, kind, param, R, order, omega, counts,
                       method)
            it += 1
            err = rows_residual(indptr, indices, blocks, B, kind, param, R, U, norms)
    return it, err


cdef struct Incidences:
    # the raw pointers of a body-coupled sweep's arrays (NULL where an array is empty)
    const index_t* ip
    const index_t* ib
    const double* H
    const double* K
    const double* W
    const double* B
    const double* p
    double* R
    double* du


cdef Incidences incidences(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                           const double[:, :, ::1] H, const double[:, :, ::1] K,
                           const double[:, :, ::1] Wdiag, const double[:, ::1] B,
                           const double[:, ::1] param, double[:, ::1] R, double[:, ::1] du):
    """The sweep's arrays as raw pointers (the loop reads them so: with memoryview slices it
    lost 6 %, their fields no longer staying in registers); n > 0 rows."""
    cdef Incidences a
    a.ip = &inc_ptr[0]
    a.ib = &inc_body[0] if inc_body.shape[0] else NULL
    a.H = &H[0, 0, 0] if H.shape[0] else NULL
    a.K = &K[0, 0, 0] if K.shape[0] else NULL
    a.W = &Wdiag[0, 0, 0]
    a.B = &B[0, 0]
    a.p = &param[0, 0]
    a.R = &R[0, 0]
    a.du = &du[0, 0] if du.shape[0] else NULL
    return a


def body_gauss_seidel_sweep(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                            const double[:, :, ::1] H, const double[:, :, ::1] K,
                            const double[:, :, ::1] Wdiag, const double[:, ::1] B,
                            const kind_t[::1] kind, const double[:, ::1] param,
                            double[:, ::1] R, double[:, ::1] du,
                            const index_t[::1] order, double omega, index_t[::1] counts,
                            int method=0):
    """One sweep in `order`; R and du are updated together. Returns max |dR| / max |R|."""
    cdef Py_ssize_t n = order.shape[0]
    cdef Py_ssize_t width = param.shape[1]
    cdef double dmax = 0.0, rmax = 0.0
    check_sweep(counts, method, kind, param, B)
    if n == 0:
        return 0.0
    cdef Incidences s = incidences(inc_ptr, inc_body, H, K, Wdiag, B, param, R, du)
    cdef const kind_t* kp = &kind[0]
    cdef const index_t* op = &order[0]
    cdef index_t* cp = &counts[0]
    with nogil:
        body_sweep_rows(s.ip, s.ib, s.H, s.K, s.W, s.B, kp, s.p, width, s.R, s.du, op, n, omega,
                        cp, method, &dmax, &rmax)
    return dmax / rmax if rmax > 0.0 else 0.0


def body_sweep_traffic(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                       const double[:, :, ::1] H, const double[:, :, ::1] K,
                       const double[:, :, ::1] Wdiag, const double[:, ::1] B,
                       const kind_t[::1] kind, const double[:, ::1] param, double[:, ::1] R,
                       double[:, ::1] du, const index_t[::1] order):
    """The memory traffic of one body_gauss_seidel_sweep alone: the same loop over the same
    arrays in the same order (order, inc_ptr, B, W_aa, kind, mu, R; per incidence the body
    index, H, K and the body's du row), every word loaded and R and du written back
    unchanged, with an exclusive or of the words' bits in place of the arithmetic. Its rate
    is the sweep's memory-traffic limit on this machine, measured instead of estimated from
    bytes and a bandwidth (bench/bench_gs.py). Returns the exclusive or."""
    cdef Py_ssize_t n = order.shape[0], width = param.shape[1], i, a, e, k
    cdef unsigned long long x = 0, y = 0
    cdef const unsigned long long* w
    cdef double* dj
    cdef double* Ra
    if n == 0:
        return 0
    cdef Incidences s = incidences(inc_ptr, inc_body, H, K, Wdiag, B, param, R, du)
    with nogil:
        for i in range(n):
            a = order[i]
            x ^= <unsigned long long>kind[a]
            w = <const unsigned long long*>(s.W + 9 * a)
            for k in range(9):
                x ^= w[k]
            w = <const unsigned long long*>(s.B + 3 * a)
            x ^= w[0] ^ w[1] ^ w[2]
            x ^= (<const unsigned long long*>(s.p + width * a))[0]
            Ra = s.R + 3 * a
            w = <const unsigned long long*>Ra
            x ^= w[0] ^ w[1] ^ w[2]
            for e in range(s.ip[a], s.ip[a + 1]):
                dj = s.du + 6 * s.ib[e]
                w = <const unsigned long long*>(s.H + 18 * e)
                for k in range(18):
                    y ^= w[k]
                w = <const unsigned long long*>(s.K + 18 * e)
                for k in range(18):
                    y ^= w[k]
                w = <const unsigned long long*>dj
                for k in range(6):
                    x ^= w[k]
                    dj[k] = dj[k] + 0.0
            for k in range(3):
                Ra[k] = Ra[k] + 0.0
    return x ^ y


def body_apply(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
               const double[:, :, ::1] K, const double[:, ::1] R, double[:, ::1] du,
               const index_t[::1] order):
    """du += M^-1 H_a^T R_a for the rows a in `order` (the warm start, colour by colour)."""
    with nogil:
        _body_apply(inc_ptr, inc_body, K, R, du, order)


cdef void _body_apply(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                      const double[:, :, ::1] K, const double[:, ::1] R, double[:, ::1] du,
                      const index_t[::1] order) noexcept nogil:
    cdef Py_ssize_t n = order.shape[0], i, a, e, j, k
    for i in range(n):
        a = order[i]
        for e in range(inc_ptr[a], inc_ptr[a + 1]):
            j = inc_body[e]
            for k in range(6):
                du[j, k] += K[e, k, 0] * R[a, 0] + K[e, k, 1] * R[a, 1] + K[e, k, 2] * R[a, 2]


cdef void body_parts(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                     const double[:, :, ::1] H, const double[:, ::1] B, const kind_t[::1] kind,
                     const double[:, ::1] param, const double[:, ::1] R,
                     const double[:, ::1] du, double[:, ::1] U,
                     double[:, ::1] parts) noexcept nogil:
    """body_residual's U and parts."""
    cdef Py_ssize_t n = B.shape[0], a, c
    cdef const double* Rp = &R[0, 0] if R.shape[0] else NULL
    for a in range(n):
        for c in range(3):
            U[a, c] = B[a, c]
        add_coupled(a, &inc_ptr[0], &inc_body[0] if inc_body.shape[0] else NULL,
                    &H[0, 0, 0] if H.shape[0] else NULL,
                    &du[0, 0] if du.shape[0] else NULL, &U[a, 0])
        parts[a, 0] = law_residual_sq(kind[a], &param[a, 0], &R[a, 0], &U[a, 0], Rp)
        parts[a, 1] = B[a, 0] * B[a, 0] + B[a, 1] * B[a, 1] + B[a, 2] * B[a, 2]
        parts[a, 2] = R[a, 0] * R[a, 0] + R[a, 1] * R[a, 1] + R[a, 2] * R[a, 2]
        parts[a, 3] = U[a, 0] * U[a, 0] + U[a, 1] * U[a, 1] + U[a, 2] * U[a, 2]


def body_residual(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                  const double[:, :, ::1] H, const double[:, ::1] B, const kind_t[::1] kind,
                  const double[:, ::1] param, const double[:, ::1] R,
                  const double[:, ::1] du, double[:, ::1] U, double[:, ::1] parts):
    """U = B + H du, and per row the squares (|e_a|^2, |B_a|^2, |R_a|^2, |U_a|^2) in
    parts (n, 4), e_a the row's natural-map residual (parsolve/solvers/residual.py). The caller
    sums them (parsolve.parallel.reduce.exact_sums) so that the total does not depend on the
    ranks."""
    assert kind.shape[0] == param.shape[0] == B.shape[0]
    with nogil:
        body_parts(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts)


cdef double exact_residual(const double[:, ::1] parts) noexcept nogil:
    """residual_from_parts(exact_sums(parts)) for the rows of one rank alone, in C with the
    same operations (exact.pxd; parsolve/solvers/residual.py)."""
    cdef double total[4]
    cdef double x, e, b, r, u, den
    cdef int c
    local_exact_sums(parts, total)
    for c in range(4):                                     # residual_from_parts
        x = total[c]
        if 0.0 > x:
            x = 0.0
        total[c] = sqrt(x)
    e, b, r, u = total[0], total[1], total[2], total[3]
    den = b
    if r > den:
        den = r
    if u > den:
        den = u
    return e / den if den > 0.0 else e


cdef double body_residual_rows(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                               const double[:, :, ::1] H, const double[:, ::1] B,
                               const kind_t[::1] kind, const double[:, ::1] param,
                               const double[:, ::1] R, const double[:, ::1] du,
                               double[:, ::1] U, double[:, ::1] parts) noexcept nogil:
    """body_residual's parts, then their residual on one rank (exact_residual)."""
    body_parts(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts)
    return exact_residual(parts)


def body_gauss_seidel_rows(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                           const double[:, :, ::1] H, const double[:, :, ::1] K,
                           const double[:, :, ::1] Wdiag, const double[:, ::1] B,
                           const kind_t[::1] kind, const double[:, ::1] param,
                           double[:, ::1] R, double[:, ::1] du, double[:, ::1] U,
                           double[:, ::1] parts, const index_t[::1] order, double omega,
                           index_t[::1] counts, int method, double tol, Py_ssize_t max_iter,
                           bint sync=False):
    """GaussSeidel's loop through the bodies on one rank in one call (as gauss_seidel_rows on
    block-CSR rows): sweeps in `order` until the residual (body_residual's parts summed as
    exact_sums sums them on one rank) reaches tol or max_iter sweeps are done, measured
    before and after each sweep. Returns (sweeps, residual); the iterates and the residual
    are those of the loop in Python, bit for bit. sync: du = M^-1 H^T R first (du zeroed,
    then body_apply in `order`: Problem.sync on one rank)."""
    cdef Py_ssize_t n = order.shape[0], it = 0
    cdef Py_ssize_t width = param.shape[1]
    cdef double err, dmax = 0.0, rmax = 0.0
    check_sweep(counts, method, kind, param, B)
    assert U.shape[0] == parts.shape[0] == B.shape[0] and parts.shape[1] == 4
    if sync:
        du[:, :] = 0.0
        with nogil:
            _body_apply(inc_ptr, inc_body, K, R, du, order)
    if B.shape[0] == 0:
        return 0, 0.0
    cdef Incidences s = incidences(inc_ptr, inc_body, H, K, Wdiag, B, param, R, du)
    cdef const kind_t* kp = &kind[0]
    cdef const index_t* op = &order[0] if n else NULL
    cdef index_t* cp = &counts[0]
    with nogil:
        err = body_residual_rows(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts)
        while err > tol and it < max_iter:
            if n:
                body_sweep_rows(s.ip, s.ib, s.H, s.K, s.W, s.B, kp, s.p, width, s.R, s.du, op,
                                n, omega, cp, method, &dmax, &rmax)
            it += 1
            err = body_residual_rows(inc_ptr, inc_body, H, B, kind, param, R, du, U, parts)
    return it, err
