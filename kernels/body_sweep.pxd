# The relaxation of one row and the body-coupled sweep over a list of rows, inline, shared by
# sweep.pyx (a sweep from Python) and halo.pyx (the colour loop with its exchanges compiled).
from libc.math cimport fabs
from law cimport law_solve
from typedefs cimport index_t, kind_t


cdef inline void relax(kind_t kind, const double* p, const double* W, const double* b,
                       double* Ra, double omega, int method, index_t* counts, double* d,
                       double* dmax, double* rmax, const double* R) noexcept nogil:
    """One relaxation of row a: its law's reaction r for u = W r + b (warm from Ra), counted by
    outcome, then Ra <- (1 - omega) Ra + omega r, with d the change; track max |d|, max |r|.
    R: every row's reaction (a linked law reads its partner's)."""
    cdef int c
    cdef double x
    cdef double r[3]
    r[0] = Ra[0]; r[1] = Ra[1]; r[2] = Ra[2]
    counts[law_solve(kind, p, W, b, r, method, R)] += 1
    for c in range(3):
        if omega != 1.0:
            r[c] = (1.0 - omega) * Ra[c] + omega * r[c]
        d[c] = r[c] - Ra[c]
        x = fabs(d[c])
        if x > dmax[0]:
            dmax[0] = x
        x = fabs(r[c])
        if x > rmax[0]:
            rmax[0] = x
        Ra[c] = r[c]


cdef inline void add_coupled(Py_ssize_t a, const index_t* inc_ptr, const index_t* inc_body,
                             const double* H, const double* du, double* u) noexcept nogil:
    """u += H_a du: the velocity the current reactions give row a, through its bodies (H:
    3 x 6 per incidence, du: 6 per body, row major)."""
    cdef Py_ssize_t e, c, k
    cdef const double* He
    cdef const double* dj
    cdef double x
    for e in range(inc_ptr[a], inc_ptr[a + 1]):
        He = H + 18 * e
        dj = du + 6 * inc_body[e]
        for c in range(3):
            x = 0.0
            for k in range(6):
                x = x + He[6 * c + k] * dj[k]
            u[c] += x


cdef inline void body_sweep_rows(const index_t* ip, const index_t* ib, const double* Hp,
                                const double* Kp, const double* Wp, const double* Bp,
                                const kind_t* kp, const double* pp, Py_ssize_t width,
                                double* Rp, double* dup, const index_t* op, Py_ssize_t n,
                                double omega, index_t* cp, int method, double* dmax,
                                double* rmax) noexcept nogil:
    """Relax rows op[0:n] in turn: each reads the velocity changes du of its bodies, solves
    its local problem and writes the change of its reaction back into du (pe's
    formulation); dmax, rmax: running max |dR|, max |R|."""
    cdef Py_ssize_t i, a, e, k, c
    cdef double b[3]
    cdef double d[3]
    cdef const double* W
    cdef const double* Ke
    cdef double* dj
    cdef double* Ra
    for i in range(n):
        a = op[i]
        W = Wp + 9 * a
        Ra = Rp + 3 * a
        # the free velocity of row a with every other reaction applied
        for c in range(3):
            b[c] = Bp[3 * a + c] - (W[3 * c] * Ra[0] + W[3 * c + 1] * Ra[1]
                                    + W[3 * c + 2] * Ra[2])
        add_coupled(a, ip, ib, Hp, dup, b)
        relax(kp[a], pp + width * a, W, b, Ra, omega, method, cp, d, dmax, rmax, Rp)
        if d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
            for e in range(ip[a], ip[a + 1]):
                dj = dup + 6 * ib[e]
                Ke = Kp + 18 * e
                for k in range(6):
                    dj[k] += Ke[3 * k] * d[0] + Ke[3 * k + 1] * d[1] + Ke[3 * k + 2] * d[2]
