# A stable counting sort by small integer keys, shared by the kernels that order rows by a cell,
# a colour, a column or a row (broadphase.pyx, colouring.pyx, operators.pyx).
from typedefs cimport index_t


cdef inline void counting_sort(const index_t* key, const index_t* items, Py_ssize_t m,
                               Py_ssize_t nkeys, index_t* start, index_t* out) noexcept nogil:
    """out[0:m] = items (0..m-1 when items is NULL) ordered by key[item] in [0, nkeys), ties
    in their order; start[0:nkeys + 1] = the first position of each key (start[nkeys] = m)."""
    cdef Py_ssize_t j, i, k
    for k in range(nkeys + 1):
        start[k] = 0
    for j in range(m):
        i = items[j] if items != NULL else j
        start[key[i] + 1] += 1
    for k in range(nkeys):
        start[k + 1] += start[k]
    for j in range(m):
        i = items[j] if items != NULL else j
        out[start[key[i]]] = i
        start[key[i]] += 1
    for k in range(nkeys, 0, -1):           # back to each key's first position
        start[k] = start[k - 1]
    start[0] = 0
