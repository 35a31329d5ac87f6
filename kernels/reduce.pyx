# The exact sums' local arithmetic in compiled loops (Python twins, the same names and
# arguments: parsolve/parallel/reduce.py's column_max, integer_sums and local_sums): each term
# scaled by a power of two and floored to an integer, integers summed: exact, so any order
# gives the same bits.
import numpy as np
from libc.math cimport floor, ldexp, isfinite
from typedefs cimport index_t
from exact cimport local_exact_sums


def column_max(const double[:, ::1] columns):
    """The largest term of each column of `columns` (n, k); zeros for n = 0."""
    cdef index_t n = columns.shape[0], k = columns.shape[1], i, c
    out = np.zeros(k)
    cdef double[::1] m = out
    if n:
        for c in range(k):
            m[c] = columns[0, c]
        with nogil:
            for i in range(1, n):
                for c in range(k):
                    if columns[i, c] > m[c] or columns[i, c] != columns[i, c]:
                        if m[c] == m[c]:
                            m[c] = columns[i, c]
    return out


def integer_sums(const double[:, ::1] columns, const index_t[::1] shifts,
                 const signed char[::1] summed):
    """Per column c with summed[c]: the sum of floor(term * 2^shifts[c]) as int64 (0
    elsewhere)."""
    cdef index_t n = columns.shape[0], k = columns.shape[1], i, c
    out = np.zeros(k, np.int64)
    cdef long long[::1] s = out
    with nogil:
        for i in range(n):
            for c in range(k):
                if summed[c]:
                    s[c] += <long long>floor(ldexp(columns[i, c], <int>shifts[c]))
    return out


def local_sums(const double[:, ::1] columns):
    """exact_sums of the non-negative columns (n, k) of one rank: (k,)."""
    out = np.empty(columns.shape[1])
    cdef double[::1] o = out
    if columns.shape[1]:
        with nogil:
            local_exact_sums(columns, &o[0])
    return out
