# The colouring's cells of rows in one compiled loop (Python twin, the same name and
# arguments: parsolve/parallel/colouring.py's row_cells), the twin's operations in its order.
import numpy as np
from libc.math cimport floor, ldexp, sqrt
from typedefs cimport index_t


def row_cells(const index_t[::1] a, const index_t[::1] b, const signed char[::1] image,
              const double[:, ::1] point, const double[:, ::1] offset,
              const double[:, ::1] x, const double[::1] radius, double margin,
              const double[::1] top, const double[::1] origin, const index_t[::1] periodic,
              index_t nlevels):
    """Each row's cell indices and level (n, 4): its reach is the largest over its bodies of
    the body's radius plus half the margin and of the distance from the row's point to the
    body's centre (for B, from point + offset where `image`: a contact across a periodic
    boundary); its level the finest whose cell (top / 2^level) is at least twice the reach;
    its cell the one holding its point (indices modulo the period where periodic)."""
    cdef index_t n = a.shape[0], i, s, j, k, level, m, c
    out = np.empty((n, 4), np.int64)
    cdef index_t[:, ::1] cells = out
    cdef double reach, d0, d1, d2, d, r, size, smallest = min(top[0], top[1], top[2])
    with nogil:
        for i in range(n):
            reach = 0.0
            for s in range(2):
                j = a[i] if s == 0 else b[i]
                if j < 0:
                    continue
                if s == 1 and image[i]:
                    d0 = (point[i, 0] + offset[i, 0]) - x[j, 0]
                    d1 = (point[i, 1] + offset[i, 1]) - x[j, 1]
                    d2 = (point[i, 2] + offset[i, 2]) - x[j, 2]
                else:
                    d0 = point[i, 0] - x[j, 0]
                    d1 = point[i, 1] - x[j, 1]
                    d2 = point[i, 2] - x[j, 2]
                d = sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                r = radius[j] + 0.5 * margin
                if d > r:
                    r = d
                if r > reach:
                    reach = r
            level = 0
            size = smallest
            for k in range(1, nlevels):
                size = 0.5 * size
                if not 2.0 * reach <= size:
                    break
                level = k
            for k in range(3):
                c = <index_t>floor((point[i, k] - origin[k]) / (top[k] / ldexp(1.0, <int>level)))
                if periodic[k]:
                    m = periodic[k] << level
                    c = ((c % m) + m) % m
                cells[i, k] = c
            cells[i, 3] = level
    return out
