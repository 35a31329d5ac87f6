"""Gauss-Seidel over contacts coupled through body velocities (matrix-free in W's off-diagonal).

U = B + W R = B + H du with du = M^-1 H^T R, the velocity change the reactions cause. A
relaxation of contact a reads the velocity changes of its (one or two) bodies, solves its local
problem with its diagonal block W_aa, and writes the change of its reaction back into them:
O(1) work per relaxation, whatever the number of linked contacts (pe's formulation). The
iterates are those of the row-wise sweep in sweep.pyx, up to round-off.

Incidences (contact, body) are grouped by contact: contact a's are inc_ptr[a]:inc_ptr[a+1],
with body inc_body[e], H[e] (3 x 6) and K[e] = M^-1 H[e]^T (6 x 3).
The pure-Python twins are in parsolve/solvers/reference.py.
"""
from cone cimport natural_map_sq
from local cimport local_solve, relax, LOCAL_NCODES, METHOD_COUNT

ctypedef long long index_t


cdef inline void add_coupled(Py_ssize_t a, const index_t[::1] inc_ptr,
                             const index_t[::1] inc_body, const double[:, :, ::1] H,
                             const double[:, ::1] du, double* u) noexcept nogil:
    """u += H_a du: the velocity the current reactions give contact a, through its bodies."""
    cdef Py_ssize_t e, j, c, k
    cdef double x
    for e in range(inc_ptr[a], inc_ptr[a + 1]):
        j = inc_body[e]
        for c in range(3):
            x = 0.0
            for k in range(6):
                x = x + H[e, c, k] * du[j, k]
            u[c] += x


def body_gauss_seidel_sweep(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                            const double[:, :, ::1] H, const double[:, :, ::1] K,
                            const double[:, :, ::1] Wdiag, const double[:, ::1] B,
                            const double[::1] mu, double[:, ::1] R, double[:, ::1] du,
                            const index_t[::1] order, double omega, index_t[::1] counts,
                            int method=0):
    """One sweep in `order`; R and du are updated together. Returns max |dR| / max |R|."""
    cdef Py_ssize_t n = order.shape[0], i, a, e, j, k, c
    cdef double b[3]
    cdef double r[3]
    cdef double d[3]
    cdef double dmax = 0.0, rmax = 0.0, x
    cdef const double* W
    cdef int code
    assert counts.shape[0] >= LOCAL_NCODES and 0 <= method < METHOD_COUNT
    with nogil:
        for i in range(n):
            a = order[i]
            W = &Wdiag[a, 0, 0]
            # the free velocity of contact a with every other reaction applied
            for c in range(3):
                b[c] = B[a, c] - (W[3 * c] * R[a, 0] + W[3 * c + 1] * R[a, 1]
                                  + W[3 * c + 2] * R[a, 2])
            add_coupled(a, inc_ptr, inc_body, H, du, b)
            r[0] = R[a, 0]; r[1] = R[a, 1]; r[2] = R[a, 2]
            code = local_solve(W, b, mu[a], r, method)
            counts[code] += 1
            relax(r, &R[a, 0], omega, d, &dmax, &rmax)
            if d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
                for e in range(inc_ptr[a], inc_ptr[a + 1]):
                    j = inc_body[e]
                    for k in range(6):
                        du[j, k] += K[e, k, 0] * d[0] + K[e, k, 1] * d[1] + K[e, k, 2] * d[2]
    return dmax / rmax if rmax > 0.0 else 0.0


def body_apply(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
               const double[:, :, ::1] K, const double[:, ::1] R, double[:, ::1] du,
               const index_t[::1] order):
    """du += M^-1 H_a^T R_a for the contacts a in `order` (the warm start, colour by colour)."""
    cdef Py_ssize_t n = order.shape[0], i, a, e, j, k
    with nogil:
        for i in range(n):
            a = order[i]
            for e in range(inc_ptr[a], inc_ptr[a + 1]):
                j = inc_body[e]
                for k in range(6):
                    du[j, k] += K[e, k, 0] * R[a, 0] + K[e, k, 1] * R[a, 1] + K[e, k, 2] * R[a, 2]


def body_residual(const index_t[::1] inc_ptr, const index_t[::1] inc_body,
                  const double[:, :, ::1] H, const double[:, ::1] B, const double[::1] mu,
                  const double[:, ::1] R, const double[:, ::1] du, double[:, ::1] U,
                  double[:, ::1] parts):
    """U = B + H du, and per contact the squares (|e_a|^2, |B_a|^2, |R_a|^2, |U_a|^2) in
    parts (n, 4), e_a the natural-map residual of DESIGN.md section 2. The caller sums them
    (parsolve.parallel.reduce.exact_sums) so that the total does not depend on the ranks."""
    cdef Py_ssize_t n = B.shape[0], a, e, j, k, c
    cdef double x
    with nogil:
        for a in range(n):
            for c in range(3):
                U[a, c] = B[a, c]
            add_coupled(a, inc_ptr, inc_body, H, du, &U[a, 0])
            parts[a, 0] = natural_map_sq(&R[a, 0], &U[a, 0], mu[a])
            parts[a, 1] = B[a, 0] * B[a, 0] + B[a, 1] * B[a, 1] + B[a, 2] * B[a, 2]
            parts[a, 2] = R[a, 0] * R[a, 0] + R[a, 1] * R[a, 1] + R[a, 2] * R[a, 2]
            parts[a, 3] = U[a, 0] * U[a, 0] + U[a, 1] * U[a, 1] + U[a, 2] * U[a, 2]
