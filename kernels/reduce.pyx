# The exact sums' local arithmetic in compiled loops (Python twins, the same names and
# arguments: parsolve/parallel/reduce.py's column_max, integer_sums and local_sums): each term
# scaled by a power of two and floored to an integer, integers summed: exact, so any order
# gives the same bits.
import numpy as np
from typedefs cimport index_t
from exact cimport column_max_of, integer_sum_of, local_exact_sums


def column_max(const double[:, ::1] columns):
    """The largest term of each column of `columns` (n, k); zeros for n = 0."""
    cdef index_t c
    out = np.zeros(columns.shape[1])
    cdef double[::1] m = out
    with nogil:
        for c in range(columns.shape[1]):
            m[c] = column_max_of(columns, c)
    return out


def integer_sums(const double[:, ::1] columns, const index_t[::1] shifts,
                 const signed char[::1] summed):
    """Per column c with summed[c]: the sum of floor(term * 2^shifts[c]) as int64 (0
    elsewhere)."""
    cdef index_t c
    out = np.zeros(columns.shape[1], np.int64)
    cdef long long[::1] s = out
    with nogil:
        for c in range(columns.shape[1]):
            if summed[c]:
                s[c] = integer_sum_of(columns, c, <int>shifts[c])
    return out


def local_sums(const double[:, ::1] columns):
    """exact_sums of the non-negative columns (n, k) of one rank: (k,)."""
    out = np.empty(columns.shape[1])
    cdef double[::1] o = out
    if columns.shape[1]:
        with nogil:
            local_exact_sums(columns, &o[0])
    return out


cdef inline double part(double v, double sign) noexcept nogil:
    """numpy's maximum(sign * v, 0): the positive (sign 1) or negative (sign -1) part of v,
    nan for nan."""
    cdef double t = sign * v
    return t if (t > 0.0 or t != t) else 0.0


def local_signed(columns):
    """(2k,): the exact sums of the positive and of the negative parts of each 1-D array of
    `columns` (k contiguous float arrays of any lengths, the shorter zero-padded), interleaved:
    local_sums of the table of those parts (the twin's), the table filled in one pass."""
    cdef Py_ssize_t k = len(columns), n = 0, i, c, m
    for column in columns:
        n = max(n, column.shape[0])
    table = np.zeros((n, 2 * k))
    out = np.empty(2 * k)
    cdef double[:, ::1] t = table
    cdef double[::1] o = out
    cdef const double[::1] v
    for c in range(k):
        v = columns[c]
        m = v.shape[0]
        with nogil:
            for i in range(m):
                t[i, 2 * c] = part(v[i], 1.0)
                t[i, 2 * c + 1] = part(v[i], -1.0)
    if k:
        with nogil:
            local_exact_sums(t, &o[0])
    return out
