# The partition tree's queries over many points, each one compiled pass (Python twins, the same
# names and arguments: parsolve/parallel/partition.py's descend and holders). Integers only:
# kernel and twin agree exactly.
import numpy as np
from libc.stdlib cimport malloc, realloc, free
from typedefs cimport index_t


def descend(const index_t[:, ::1] cells, const index_t[::1] axis, const index_t[::1] cut,
            const index_t[::1] left, const index_t[::1] right, const index_t[::1] leaf_rank):
    """The leaf rank of each row of cell indices (n, 3) under the cuts: from the root, to the
    right child where the cell's index along the node's axis is at least its cut."""
    cdef Py_ssize_t n = cells.shape[0], i
    cdef index_t node
    out = np.empty(n, np.int64)
    cdef index_t[::1] rank = out
    with nogil:
        for i in range(n):
            node = 0
            while axis[node] >= 0:
                node = right[node] if cells[i, axis[node]] >= cut[node] else left[node]
            rank[i] = leaf_rank[node]
    return out


def holders(const index_t[:, ::1] cells, const index_t[::1] reach, const index_t[::1] axis,
            const index_t[::1] cut, const index_t[::1] left, const index_t[::1] right,
            const index_t[::1] leaf_rank, const signed char[::1] full):
    """(row, rank) for every rank whose box, grown by reach[k] cells, holds cell k, among the
    ranks with a non-empty box (full[rank]): rows in order, each row's ranks ascending."""
    cdef Py_ssize_t n = cells.shape[0], nodes = axis.shape[0], i, top, m = 0, cap, j, s
    cdef index_t node, v, k, r
    cdef index_t* stack = <index_t*>malloc((nodes + 1) * sizeof(index_t))
    cap = 2 * n + 16
    cdef index_t* rows = <index_t*>malloc(cap * sizeof(index_t))
    cdef index_t* ranks = <index_t*>malloc(cap * sizeof(index_t))
    cdef index_t* grown
    if stack == NULL or rows == NULL or ranks == NULL:
        free(stack); free(rows); free(ranks)
        raise MemoryError("partition.holders")
    try:
        with nogil:
            for i in range(n):
                stack[0] = 0
                top = 1
                s = m                                     # this row's first pair
                while top:
                    top -= 1
                    node = stack[top]
                    if axis[node] < 0:
                        r = leaf_rank[node]
                        if not full[r]:
                            continue
                        if m == cap:
                            cap *= 2
                            grown = <index_t*>realloc(rows, cap * sizeof(index_t))
                            if grown == NULL:
                                with gil:
                                    raise MemoryError("partition.holders")
                            rows = grown
                            grown = <index_t*>realloc(ranks, cap * sizeof(index_t))
                            if grown == NULL:
                                with gil:
                                    raise MemoryError("partition.holders")
                            ranks = grown
                        j = m                             # insert keeping ranks ascending
                        while j > s and ranks[j - 1] > r:
                            ranks[j] = ranks[j - 1]
                            j -= 1
                        ranks[j] = r
                        rows[m] = i
                        m += 1
                        continue
                    v = cells[i, axis[node]]
                    k = reach[i]
                    if v - k < cut[node]:                # [v - k, v + k] meets the left side
                        stack[top] = left[node]
                        top += 1
                    if v + k >= cut[node]:               # and the right
                        stack[top] = right[node]
                        top += 1
        out_rows, out_ranks = np.empty(m, np.int64), np.empty(m, np.int64)
        got_rows, got_ranks = out_rows, out_ranks
        copy(rows, got_rows, m)
        copy(ranks, got_ranks, m)
        return out_rows, out_ranks
    finally:
        free(stack); free(rows); free(ranks)


cdef void copy(const index_t* src, index_t[::1] dst, Py_ssize_t m) noexcept:
    cdef Py_ssize_t j
    for j in range(m):
        dst[j] = src[j]
