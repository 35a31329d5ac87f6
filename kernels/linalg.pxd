# 3 x 3 linear algebra on row-major blocks and 3-vectors, inline for every kernel that
# cimports it.
from libc.math cimport fabs, sqrt


cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline void sub3(const double* a, const double* b, double* c) noexcept nogil:
    c[0], c[1], c[2] = a[0] - b[0], a[1] - b[1], a[2] - b[2]


cdef inline void cross3(const double* a, const double* b, double* c) noexcept nogil:
    """c = a x b (c must not alias a or b)."""
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


cdef inline void disc_min(double s00, double s01, double s11, double c0, double c1,
                          double radius, double* x) noexcept nogil:
    """x = argmin 1/2 x^T S x + c^T x over the disc |x| <= radius, S = [[s00, s01], [s01, s11]]
    positive definite: the trust-region problem in two dimensions. Inside: S x = -c; on the
    circle: (S + lam I) x = -c with lam > 0, found by Newton on 1/radius - 1/|x(lam)| (More
    and Sorensen: from lam = 0 the iterates rise to the root without overshooting it), then
    scaled onto the circle."""
    cdef double a = s00, d = s11, det = s00 * s11 - s01 * s01, lam = 0.0, n, y0, y1, step
    cdef int k
    if radius <= 0.0 or det <= 0.0:
        x[0] = 0.0; x[1] = 0.0
        return
    x[0] = (-c0 * d + c1 * s01) / det
    x[1] = (-c1 * a + c0 * s01) / det
    n = sqrt(x[0] * x[0] + x[1] * x[1])
    if n <= radius:
        return
    for k in range(100):
        y0 = (x[0] * d - x[1] * s01) / det            # (S + lam I)^-1 x
        y1 = (x[1] * a - x[0] * s01) / det
        step = (n - radius) / radius * (n * n) / (x[0] * y0 + x[1] * y1)
        if not step > 1e-15 * lam:
            break
        lam = lam + step
        a = s00 + lam
        d = s11 + lam
        det = a * d - s01 * s01
        x[0] = (-c0 * d + c1 * s01) / det
        x[1] = (-c1 * a + c0 * s01) / det
        n = sqrt(x[0] * x[0] + x[1] * x[1])
    x[0] = x[0] * (radius / n)
    x[1] = x[1] * (radius / n)
