# The exact sums of one rank's columns in C (parsolve/parallel/reduce.py's exact_sums with no
# other rank, operation for operation): each column's terms scaled by one power of two chosen
# from its largest, floored and summed as integers (exact, so any order gives the same bits),
# then scaled back. Shared by reduce.pyx (local_sums) and sweep.pyx (the compiled loop's
# residual).
from libc.math cimport floor, ldexp, frexp, log2, ceil, isfinite


cdef inline void local_exact_sums(const double[:, ::1] columns, double* out) noexcept nogil:
    """out[c] = the exact sum of column c of the non-negative columns (n, k); a column whose
    largest term is not finite sums to that term (nan, +inf), one whose largest is not
    positive to 0."""
    cdef Py_ssize_t n = columns.shape[0], k = columns.shape[1], i, c
    cdef double m, x
    cdef int shift, exponent
    cdef long long acc
    cdef int rows = <int>ceil(log2(<double>(n if n > 1 else 1)))
    for c in range(k):
        m = columns[0, c] if n else 0.0                   # column_max's
        for i in range(1, n):
            x = columns[i, c]
            if x > m or x != x:
                if m == m:
                    m = x
        if not isfinite(m):
            out[c] = m
            continue
        frexp(m, &exponent)
        shift = 62 - rows - exponent
        acc = 0
        for i in range(n):
            acc += <long long>floor(ldexp(columns[i, c], shift))
        out[c] = ldexp(<double>acc, -shift) if m > 0.0 else 0.0
