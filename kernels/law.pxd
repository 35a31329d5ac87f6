# The one dispatch point of the laws (Solfec's DIAGONAL_BLOCK_Solver, Siconos' GMP_ProblemOps):
# the sweeps, the residuals and Newton's per-row parts call these four functions and never
# name a law. A row's law is its kind; p points at its parameters (parsolve.laws: the law's
# SOLVE_PARAMS first columns of its param row); R at all the rows' reactions (n x 3, row
# major), which a linked law reads its partner's normal impulse from (rolling resistance, its
# contact's). Adding a law: one header and one case in each. A contact's p = (mu, c): c its
# normal compliance (parsolve/laws/coulomb.py), the law's u_N read as u_N + c r_N.
from codes cimport *
from typedefs cimport kind_t
from coulomb cimport local_solve, ac_phi
from coulomb_cone cimport project_cone, natural_map_sq
from bilateral cimport bilateral_solve, bilateral_residual_sq, bilateral_phi, bilateral_project
from spring cimport spring_solve, spring_residual_sq, spring_phi, spring_project
from connector cimport connector_solve, connector_residual_sq, connector_phi, connector_project
from rolling cimport rolling_solve, rolling_residual_sq, rolling_phi, rolling_project
from bond cimport bond_solve, bond_residual_sq, bond_phi, bond_project


cdef inline int law_solve(kind_t kind, const double* p, const double* W, const double* b,
                          double* r, int method, const double* R) noexcept nogil:
    """The row's reaction r (warm on entry) for its local problem u = W r + b; an outcome
    code (LOCAL_*). method: the Coulomb local solver (METHOD_*)."""
    cdef double Wc[9]
    cdef int k
    if kind == KIND_COULOMB:
        if p[1] == 0.0:
            return local_solve(W, b, p[0], r, method)
        for k in range(9):                                # compliant: W + c e_N e_N^T
            Wc[k] = W[k]
        Wc[0] += p[1]
        return local_solve(Wc, b, p[0], r, method)
    if kind == KIND_BILATERAL:
        return bilateral_solve(W, b, p, r)
    if kind == KIND_SPRING:
        return spring_solve(W, b, p, r)
    if kind == KIND_ROLLING:
        return rolling_solve(W, b, p, R, r)
    if kind == KIND_BOND:
        return bond_solve(W, b, p, r)
    return connector_solve(W, b, p, r)


cdef inline double law_residual_sq(kind_t kind, const double* p, const double* r,
                                   const double* u, const double* R) noexcept nogil:
    """|e|^2, e the row's natural-map residual: zero iff (u, r) satisfy the law."""
    cdef double uc[3]
    if kind == KIND_COULOMB:
        if p[1] == 0.0:
            return natural_map_sq(r, u, p[0])
        uc[0] = u[0] + p[1] * r[0]; uc[1] = u[1]; uc[2] = u[2]
        return natural_map_sq(r, uc, p[0])
    if kind == KIND_BILATERAL:
        return bilateral_residual_sq(p, r, u)
    if kind == KIND_SPRING:
        return spring_residual_sq(p, r, u)
    if kind == KIND_ROLLING:
        return rolling_residual_sq(p, r, u, R)
    if kind == KIND_BOND:
        return bond_residual_sq(p, r, u)
    return connector_residual_sq(p, r, u)


cdef inline void law_phi(kind_t kind, const double* p, const double* r, const double* u,
                         double rho_n, double rho_t, double* phi, double* A,
                         double* B, const double* R, double* C) noexcept nogil:
    """The row's semismooth function Phi(r, u) = 0 of the global Newton, and when A is not
    NULL its blocks A = dPhi/dr, B = dPhi/du; when C is not NULL, dPhi/dr_N (3) of a linked
    row's partner (zero for the others)."""
    cdef double uc[3]
    if C != NULL and kind != KIND_ROLLING:
        C[0] = 0.0; C[1] = 0.0; C[2] = 0.0
    if kind == KIND_COULOMB:
        if p[1] == 0.0:
            ac_phi(r, u, p[0], rho_n, rho_t, phi, A, B, False)
        else:                                  # compliant: Phi(r, u + c r_N e_N)
            uc[0] = u[0] + p[1] * r[0]; uc[1] = u[1]; uc[2] = u[2]
            ac_phi(r, uc, p[0], rho_n, rho_t, phi, A, B, False)
            if A != NULL:
                A[0] += p[1] * B[0]; A[3] += p[1] * B[3]; A[6] += p[1] * B[6]
    elif kind == KIND_BILATERAL:
        bilateral_phi(p, r, u, rho_n, rho_t, phi, A, B)
    elif kind == KIND_SPRING:
        spring_phi(p, r, u, phi, A, B)
    elif kind == KIND_ROLLING:
        rolling_phi(p, r, u, rho_n, rho_t, R, phi, A, B, C)
    elif kind == KIND_BOND:
        bond_phi(p, r, u, rho_n, rho_t, phi, A, B)
    else:
        connector_phi(p, r, u, rho_n, phi, A, B)


cdef inline void law_project(kind_t kind, const double* p, const double* z, double* r,
                             const double* R) noexcept nogil:
    """r = the admissible reaction nearest to z (Newton's start)."""
    if kind == KIND_COULOMB:
        project_cone(z, p[0], r)
    elif kind == KIND_BILATERAL:
        bilateral_project(p, z, r)
    elif kind == KIND_SPRING:
        spring_project(z, r)
    elif kind == KIND_ROLLING:
        rolling_project(p, z, R, r)
    elif kind == KIND_BOND:
        bond_project(p, z, r)
    else:
        connector_project(z, r)
