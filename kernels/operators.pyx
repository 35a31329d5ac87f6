# W's block rows on one rank summed as PETSc sums them, in one compiled pass (Python twin, the
# same name and arguments: parsolve/parallel/operators.py's block_rows).
import numpy as np
from typedefs cimport index_t
from counting cimport counting_sort


def block_rows(const index_t[::1] rows, const index_t[::1] cols, const double[:, ::1] blocks,
               index_t n):
    """(indptr, block columns, blocks (nnz, 3, 3)) of the n block rows holding the sums of
    `blocks` (m, 9) at (rows, cols): entries in (row, column) order, each set by its first
    block and added to by the others in their order (MatSetValuesBlocked with ADD_VALUES).
    Two stable counting sorts (by column, then by row) give that order in O(m + n)."""
    cdef Py_ssize_t m = rows.shape[0], i, j, e, c, k
    cdef index_t width = n
    for i in range(m):
        if cols[i] + 1 > width:
            width = cols[i] + 1
    by_col = np.empty(m, np.int64)
    order = np.empty(m, np.int64)
    count = np.zeros(width + 1, np.int64)
    start = np.zeros(n + 1, np.int64)
    cdef index_t[::1] bc = by_col, o = order, cnt = count, st = start
    with nogil:
        if m:                                          # by column, then by row, stable
            counting_sort(&cols[0], NULL, m, width, &cnt[0], &bc[0])
            counting_sort(&rows[0], &bc[0], m, n, &st[0], &o[0])
    # entries: runs of equal (row, column) in that order
    cdef Py_ssize_t nnz = 0
    for j in range(m):
        if j == 0 or rows[o[j]] != rows[o[j - 1]] or cols[o[j]] != cols[o[j - 1]]:
            nnz += 1
    indptr = np.zeros(n + 1, np.int64)
    indices = np.empty(nnz, np.int64)
    out = np.empty((nnz, 3, 3))
    cdef index_t[::1] ip = indptr, ix = indices
    cdef double[:, :, ::1] W = out
    cdef double* w
    cdef const double* b
    with nogil:
        e = -1
        for j in range(m):
            i = o[j]
            b = &blocks[i, 0]
            if j == 0 or rows[i] != rows[o[j - 1]] or cols[i] != cols[o[j - 1]]:
                e += 1
                ix[e] = cols[i]
                ip[rows[i] + 1] += 1
                w = &W[e, 0, 0]
                for k in range(9):
                    w[k] = b[k]
            else:
                for k in range(9):
                    w[k] += b[k]
        for c in range(n):
            ip[c + 1] += ip[c]
    return indptr, indices, out
