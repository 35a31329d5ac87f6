# The colouring's cells of rows and their sweep order, each in one compiled pass (Python
# twins, the same names and arguments: parsolve/parallel/colouring.py's row_cells and
# sweep_order), row_cells with the twin's operations in its order.
import numpy as np
from libc.math cimport floor, ldexp, sqrt
from libc.stdlib cimport malloc, free, qsort
from typedefs cimport index_t
from counting cimport counting_sort


def row_cells(const index_t[::1] a, const index_t[::1] b, const signed char[::1] row_origin,
              signed char imaged, const double[:, ::1] point, const double[:, ::1] offset,
              const double[:, ::1] x, const double[::1] radius, double margin,
              const double[::1] top, const double[::1] origin, const index_t[::1] periodic,
              index_t nlevels):
    """Each row's cell indices and level (n, 4): its reach is the largest over its bodies of
    the body's radius plus half the margin and of the distance from the row's point to the
    body's centre (for B, from point + offset where the row's origin is `imaged`: a contact
    across a periodic boundary); its level the finest whose cell (top / 2^level) is at least
    twice the reach; its cell the one holding its point (indices modulo the period where
    periodic)."""
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
                if s == 1 and row_origin[i] == imaged:
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


cdef struct Key:
    index_t k1, k2, i


cdef int by_key(const void* p, const void* q) noexcept nogil:
    cdef const Key* a = <const Key*>p
    cdef const Key* b = <const Key*>q
    if a.k1 != b.k1:
        return -1 if a.k1 < b.k1 else 1
    if a.k2 != b.k2:
        return -1 if a.k2 < b.k2 else 1
    return -1 if a.i < b.i else (1 if a.i > b.i else 0)


def sweep_order(const index_t[:, ::1] cells, const index_t[::1] k1, const index_t[::1] k2,
                index_t ncolours):
    """(permutation, bounds): the rows sorted by (colour, k1, k2), ties in their order (a
    stable sort), and each colour's range [bounds[c], bounds[c + 1]) after it. A row's colour
    is 8 times its level (cells[:, 3], when given) plus the parity pattern of its cell."""
    cdef Py_ssize_t n = cells.shape[0], i, c, j
    cdef int width = cells.shape[1]
    cdef index_t colour
    order = np.empty(n, np.int64)
    bounds = np.zeros(ncolours + 1, np.int64)
    cdef index_t[::1] o = order, bd = bounds
    cdef Key* keys = <Key*>malloc(n * sizeof(Key)) if n else NULL
    cdef index_t* col = <index_t*>malloc(n * sizeof(index_t)) if n else NULL
    if n and (keys == NULL or col == NULL):
        free(keys); free(col)
        raise MemoryError("colouring.sweep_order")
    try:
        for i in range(n):
            colour = (cells[i, 0] & 1) + 2 * (cells[i, 1] & 1) + 4 * (cells[i, 2] & 1) \
                + (8 * cells[i, 3] if width > 3 else 0)
            if not 0 <= colour < ncolours:
                raise ValueError(f"sweep_order: row {i} has colour {colour}, not below "
                                 f"{ncolours}")
            col[i] = colour
        with nogil:
            if n:
                counting_sort(col, NULL, n, ncolours, &bd[0], &o[0])    # by colour, stable
            for j in range(n):
                i = o[j]
                keys[j].k1 = k1[i]
                keys[j].k2 = k2[i]
                keys[j].i = i
            for c in range(ncolours):                   # each colour by key, then index
                if bd[c + 1] - bd[c] > 1:
                    qsort(&keys[bd[c]], bd[c + 1] - bd[c], sizeof(Key), by_key)
            for j in range(n):
                o[j] = keys[j].i
    finally:
        free(keys); free(col)
    return order, bounds
