# The exact sums of one rank's columns in C (parsolve/parallel/reduce.py's exact_sums with no
# other rank, operation for operation): each column's terms scaled by one power of two chosen
# from its largest, floored and summed as integers (exact, so any order gives the same bits),
# then scaled back. Shared by reduce.pyx (local_sums) and sweep.pyx (the compiled loop's
# residual).
from libc.math cimport floor, ldexp, frexp, log2, ceil, isfinite


cdef inline double column_max_of(const double[:, ::1] columns, Py_ssize_t c) noexcept nogil:
    """The largest term of column c (the first NaN met, if any); 0 for no rows."""
    cdef Py_ssize_t n = columns.shape[0], i
    cdef double m = columns[0, c] if n else 0.0, x
    for i in range(1, n):
        x = columns[i, c]
        if x > m or x != x:
            if m == m:
                m = x
    return m


cdef inline long long floor_int(double y) noexcept nogil:
    """floor(y) as an integer (|y| < 2^63): y truncated, one less for a negative y with a
    fraction; no call into libm."""
    cdef long long t = <long long>y
    if <double>t > y:
        t -= 1
    return t


cdef inline long long integer_sum_of(const double[:, ::1] columns, Py_ssize_t c,
                                     int shift) noexcept nogil:
    """The sum of floor(term * 2^shift) over column c. Where 2^shift is a normal double the
    product is one multiplication (ldexp's value: both are the exact product correctly
    rounded), else ldexp."""
    cdef Py_ssize_t i
    cdef long long acc = 0
    cdef double scale
    if -1022 <= shift <= 1023:
        scale = ldexp(1.0, shift)
        for i in range(columns.shape[0]):
            acc += floor_int(columns[i, c] * scale)
    else:
        for i in range(columns.shape[0]):
            acc += <long long>floor(ldexp(columns[i, c], shift))
    return acc


cdef inline void local_exact_sums(const double[:, ::1] columns, double* out) noexcept nogil:
    """out[c] = the exact sum of column c of the non-negative columns (n, k); a column whose
    largest term is not finite sums to that term (nan, +inf), one whose largest is not
    positive to 0."""
    cdef Py_ssize_t n = columns.shape[0], c
    cdef double m
    cdef int shift, exponent
    cdef int rows = <int>ceil(log2(<double>(n if n > 1 else 1)))
    for c in range(columns.shape[1]):
        m = column_max_of(columns, c)
        if not isfinite(m):
            out[c] = m
            continue
        frexp(m, &exponent)
        shift = 62 - rows - exponent
        out[c] = ldexp(<double>integer_sum_of(columns, c, shift), -shift) if m > 0.0 else 0.0
