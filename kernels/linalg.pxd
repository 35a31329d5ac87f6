# 3 x 3 linear algebra on row-major blocks and 3-vectors, inline for every kernel that
# cimports it.
from libc.math cimport fabs


cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline void sub3(const double* a, const double* b, double* c) noexcept nogil:
    c[0], c[1], c[2] = a[0] - b[0], a[1] - b[1], a[2] - b[2]


cdef inline void cross3(const double* a, const double* b, double* c) noexcept nogil:
    c[0] = a[1] * b[2] - a[2] * b[1]
    c[1] = a[2] * b[0] - a[0] * b[2]
    c[2] = a[0] * b[1] - a[1] * b[0]


cdef inline void matvec3(const double* W, const double* x, double* y) noexcept nogil:
    y[0] = W[0] * x[0] + W[1] * x[1] + W[2] * x[2]
    y[1] = W[3] * x[0] + W[4] * x[1] + W[5] * x[2]
    y[2] = W[6] * x[0] + W[7] * x[1] + W[8] * x[2]


cdef inline bint solve3(const double* W, const double* b, double* x) noexcept nogil:
    """x = W^-1 b by cofactors; False when W is singular to round-off."""
    cdef double c00 = W[4] * W[8] - W[5] * W[7]
    cdef double c01 = W[5] * W[6] - W[3] * W[8]
    cdef double c02 = W[3] * W[7] - W[4] * W[6]
    cdef double det = W[0] * c00 + W[1] * c01 + W[2] * c02
    cdef double scale = fabs(W[0]) + fabs(W[4]) + fabs(W[8])
    if fabs(det) <= 1e-14 * scale * scale * scale:
        return False
    cdef double inv = 1.0 / det
    x[0] = (c00 * b[0] + (W[2] * W[7] - W[1] * W[8]) * b[1] + (W[1] * W[5] - W[2] * W[4]) * b[2]) * inv
    x[1] = (c01 * b[0] + (W[0] * W[8] - W[2] * W[6]) * b[1] + (W[2] * W[3] - W[0] * W[5]) * b[2]) * inv
    x[2] = (c02 * b[0] + (W[1] * W[6] - W[0] * W[7]) * b[1] + (W[0] * W[4] - W[1] * W[3]) * b[2]) * inv
    return True
