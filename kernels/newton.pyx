"""The per-row work of the global semismooth Newton (parsolve/solvers/newton.py), one pass
over the rows per call, so that a Newton step costs a few calls whatever their number.

Each row's law gives its semismooth function Phi(R_a, U_a) = 0 (law.pxd's law_phi: for
Coulomb rows Alart-Curnier's, coulomb.pxd), with A = dPhi/dR, B = dPhi/dU the 3 x 3 blocks
of one element of its generalised Jacobian J = A + B W. Python twins: parsolve/solvers/twins.py,
same names.
"""
from law cimport law_phi, law_project, law_residual_sq
from typedefs cimport index_t, kind_t


def alart_curnier(const kind_t[::1] kind, const double[:, ::1] param,
                  const double[:, ::1] R, const double[:, ::1] U,
                  const double[::1] rho_n, const double[::1] rho_t, double[:, ::1] Phi,
                  double[:, :, ::1] A=None, double[:, :, ::1] B=None, double[:, ::1] C=None):
    """Phi (n, 3) in place and, when A and B (n, 3, 3) are given, the Jacobian blocks
    A = dPhi/dR and B = dPhi/dU in them; with C (n, 3), each row's dPhi/dr_N of its linked
    partner (zero for rows without one: laws.links)."""
    cdef Py_ssize_t n = R.shape[0], a
    cdef bint jacobian = A is not None
    cdef bint coupling = C is not None
    cdef const double* Rp = &R[0, 0] if n else NULL
    assert U.shape[0] == Phi.shape[0] == kind.shape[0] == param.shape[0] == n
    assert rho_n.shape[0] == rho_t.shape[0] == n
    assert R.shape[1] == U.shape[1] == Phi.shape[1] == 3
    assert (B is not None) == jacobian, "A and B go together"
    assert not coupling or (jacobian and C.shape[0] == n and C.shape[1] == 3)
    if jacobian:
        assert A.shape[0] == B.shape[0] == n and A.shape[1] == A.shape[2] == 3
        assert B.shape[1] == B.shape[2] == 3
    with nogil:
        for a in range(n):
            law_phi(kind[a], &param[a, 0], &R[a, 0], &U[a, 0], rho_n[a], rho_t[a], &Phi[a, 0],
                    &A[a, 0, 0] if jacobian else NULL, &B[a, 0, 0] if jacobian else NULL, Rp,
                    &C[a, 0] if coupling else NULL)


def project_admissible(const kind_t[::1] kind, const double[:, ::1] param, double[:, ::1] R):
    """R_a <- the admissible reaction nearest to R_a for every row a, in place (Newton's
    start: inside the cones for contacts), in row order (a linked row reads its partner's
    projected reaction when the partner comes first, as a contact before its rolling row)."""
    cdef Py_ssize_t n = R.shape[0], a
    cdef double z[3]
    assert kind.shape[0] == param.shape[0] == n and R.shape[1] == 3
    cdef double* Rp = &R[0, 0] if n else NULL
    with nogil:
        for a in range(n):
            z[0] = R[a, 0]; z[1] = R[a, 1]; z[2] = R[a, 2]
            law_project(kind[a], &param[a, 0], z, &R[a, 0], Rp)


def newton_parts(const kind_t[::1] kind, const double[:, ::1] param,
                 const double[:, ::1] R, const double[:, ::1] U, const double[:, ::1] V,
                 const double[:, ::1] q, const double[::1] rho_n,
                 const double[::1] rho_t, double[:, ::1] parts):
    """Per row the squares Newton's tests sum, in parts (n, 6): |e_a|^2, |q_a|^2, |R_a|^2,
    |U_a|^2 (the residual of parsolve/solvers/residual.py, e_a the natural-map residual),
    |Phi(R_a, V_a)|^2 (twice the merit of the regularised problem, V its velocity) and
    |Phi(R_a, U_a)|^2 (of the problem itself). The caller sums them over ranks
    (parsolve.parallel.reduce.exact_sums)."""
    cdef Py_ssize_t n = R.shape[0], a
    cdef double phi[3]
    cdef const double* Rp = &R[0, 0] if n else NULL
    assert U.shape[0] == V.shape[0] == q.shape[0] == parts.shape[0] == n
    assert parts.shape[1] == 6 and kind.shape[0] == param.shape[0] == n
    assert rho_n.shape[0] == rho_t.shape[0] == n
    assert R.shape[1] == U.shape[1] == V.shape[1] == q.shape[1] == 3
    with nogil:
        for a in range(n):
            parts[a, 0] = law_residual_sq(kind[a], &param[a, 0], &R[a, 0], &U[a, 0], Rp)
            parts[a, 1] = q[a, 0] * q[a, 0] + q[a, 1] * q[a, 1] + q[a, 2] * q[a, 2]
            parts[a, 2] = R[a, 0] * R[a, 0] + R[a, 1] * R[a, 1] + R[a, 2] * R[a, 2]
            parts[a, 3] = U[a, 0] * U[a, 0] + U[a, 1] * U[a, 1] + U[a, 2] * U[a, 2]
            law_phi(kind[a], &param[a, 0], &R[a, 0], &V[a, 0], rho_n[a], rho_t[a], phi,
                    NULL, NULL, Rp, NULL)
            parts[a, 4] = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
            law_phi(kind[a], &param[a, 0], &R[a, 0], &U[a, 0], rho_n[a], rho_t[a], phi,
                    NULL, NULL, Rp, NULL)
            parts[a, 5] = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]


def slope_parts(const double[:, ::1] Phi, const double[:, :, ::1] A,
                const double[:, :, ::1] B, const double[:, ::1] d, const double[:, ::1] Wd,
                double[:, ::1] parts):
    """Per contact s_a = Phi_a . (A_a d_a + B_a (W d)_a), the merit's derivative along d, as
    (max(s_a, 0), max(-s_a, 0)) in parts (n, 2): exact_sums takes non-negative terms."""
    cdef Py_ssize_t n = Phi.shape[0], a, i
    cdef double s, x
    assert A.shape[0] == B.shape[0] == d.shape[0] == Wd.shape[0] == parts.shape[0] == n
    assert parts.shape[1] == 2 and Phi.shape[1] == d.shape[1] == Wd.shape[1] == 3
    with nogil:
        for a in range(n):
            s = 0.0
            for i in range(3):
                x = ((A[a, i, 0] * d[a, 0] + A[a, i, 1] * d[a, 1] + A[a, i, 2] * d[a, 2])
                     + (B[a, i, 0] * Wd[a, 0] + B[a, i, 1] * Wd[a, 1] + B[a, i, 2] * Wd[a, 2]))
                s += Phi[a, i] * x
            parts[a, 0] = s if s > 0.0 else 0.0
            parts[a, 1] = -s if s < 0.0 else 0.0


def jacobian_blocks(const index_t[::1] indptr, const double[:, :, ::1] blocks,
                    const index_t[::1] diag, const double[:, :, ::1] A,
                    const double[:, :, ::1] B, const double[::1] alpha, double[:, :, ::1] J):
    """The blocks of J = A + B (W + diag(alpha) I) in W's block-CSR pattern (row a's blocks at
    indptr[a]:indptr[a+1], its diagonal one at diag[a]) into J (nnz, 3, 3): the Jacobian of
    the problem regularised by alpha_a (R_a - anchor_a) in U_a (the proximal point's)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, a, k, i, l
    cdef const double* Ba
    assert diag.shape[0] == A.shape[0] == B.shape[0] == alpha.shape[0] == n
    assert J.shape[0] == blocks.shape[0] >= indptr[n] and blocks.shape[1] == blocks.shape[2] == 3
    with nogil:
        for a in range(n):
            Ba = &B[a, 0, 0]
            for k in range(indptr[a], indptr[a + 1]):
                for i in range(3):
                    for l in range(3):
                        J[k, i, l] = (Ba[3 * i] * blocks[k, 0, l] + Ba[3 * i + 1] * blocks[k, 1, l]
                                      + Ba[3 * i + 2] * blocks[k, 2, l])
            k = diag[a]
            for i in range(3):
                for l in range(3):
                    J[k, i, l] += A[a, i, l] + alpha[a] * Ba[3 * i + l]
