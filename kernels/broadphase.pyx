# The broad phase's candidate pairs in one compiled pass (Python twin, the same name and
# arguments: parsolve/contact/broadphase.py's grid_candidates). Where the cells' box holds
# few cells per body, the bodies are counted into a dense array of cells (a cell list), and a
# body's 27 neighbouring cells are 9 runs of consecutive cells; elsewhere (bodies spread
# far apart) a hash table of the occupied cells, each with the list of its bodies.
import numpy as np
from libc.stdlib cimport malloc, realloc, free, qsort
from typedefs cimport index_t
from counting cimport counting_sort

cdef double DENSE_CELLS_PER_BODY = 8.0    # the dense cell list up to this many cells a body
cdef unsigned long long P0 = 73856093, P1 = 19349663, P2 = 83492791


cdef inline unsigned long long cell_key(index_t c0, index_t c1, index_t c2) noexcept nogil:
    """broadphase.cell_hash of one cell (uint64 arithmetic, wrapping)."""
    return ((<unsigned long long>c0) * P0) ^ ((<unsigned long long>c1) * P1) \
        ^ ((<unsigned long long>c2) * P2)


cdef inline index_t slot_of(unsigned long long key, index_t mask) noexcept nogil:
    cdef unsigned long long z = key + 0x9e3779b97f4a7c15ULL    # splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL
    return <index_t>((z ^ (z >> 31)) & <unsigned long long>mask)


cdef int by_index(const void* p, const void* q) noexcept nogil:
    cdef index_t x = (<const index_t*>p)[0], y = (<const index_t*>q)[0]
    return (x > y) - (x < y)


cdef int grow(index_t** buf, index_t* cap, index_t need) noexcept nogil:
    """Make room for `need` entries in *buf (doubling); 0 when out of memory."""
    cdef index_t c = cap[0]
    cdef index_t* p
    if need <= c:
        return 1
    while c < need:
        c = 2 * c
    p = <index_t*>realloc(buf[0], c * sizeof(index_t))
    if p == NULL:
        return 0
    buf[0], cap[0] = p, c
    return 1


cdef struct Pairs:
    index_t* a
    index_t* b
    index_t* local                       # one body's partners before sorting
    index_t n, cap_a, cap_b, cap_local, count
    const double* x                      # the centres (n, 3), radii and margin of the
    const double* radius                 # generous distance test
    double margin


cdef double GENEROUS = 1.0 + 1e-9       # the test's slack: the caller's exact test decides


cdef inline bint near(const Pairs* p, index_t a, index_t b) noexcept nogil:
    """Whether the bounding spheres of a and b are within the margin, generously."""
    cdef const double* xa = p.x + 3 * a
    cdef const double* xb = p.x + 3 * b
    cdef double d0 = xa[0] - xb[0], d1 = xa[1] - xb[1], d2 = xa[2] - xb[2]
    cdef double reach = p.radius[a] + p.radius[b] + p.margin
    return d0 * d0 + d1 * d1 + d2 * d2 <= reach * reach * GENEROUS


cdef inline int take(Pairs* p, const index_t* sorted_bodies, index_t a, index_t lo,
                     index_t hi) noexcept nogil:
    """Add to a's partners the bodies sorted_bodies[lo:hi] after a and near it; 0 when out
    of memory."""
    cdef index_t m, b
    if not grow(&p.local, &p.cap_local, p.count + hi - lo):
        return 0
    for m in range(lo, hi):
        b = sorted_bodies[m]
        if b > a and near(p, a, b):
            p.local[p.count] = b
            p.count += 1
    return 1


cdef inline int flush(Pairs* p, index_t a) noexcept nogil:
    """a's partners, sorted, appended to the pairs; 0 when out of memory."""
    cdef index_t k
    if p.count > 1:
        qsort(p.local, p.count, sizeof(index_t), by_index)
    if not (grow(&p.a, &p.cap_a, p.n + p.count) and grow(&p.b, &p.cap_b, p.n + p.count)):
        return 0
    for k in range(p.count):
        p.a[p.n] = a
        p.b[p.n] = p.local[k]
        p.n += 1
    p.count = 0
    return 1


cdef int dense(Pairs* p, const index_t* cells, index_t n, const index_t* low,
               const index_t* span) noexcept nogil:
    """The pairs through a cell list over the cells' box low + [0, span): 0 when out of
    memory."""
    cdef index_t ncell = span[0] * span[1] * span[2], a, c, dx, dy, x, y, z0, z1, base, ok = 1
    cdef index_t* first = <index_t*>malloc((ncell + 1) * sizeof(index_t))
    cdef index_t* bodies = <index_t*>malloc((n if n else 1) * sizeof(index_t))
    cdef index_t* cell = <index_t*>malloc((n if n else 1) * sizeof(index_t))
    if first == NULL or bodies == NULL or cell == NULL:
        free(first); free(bodies); free(cell)
        return 0
    for a in range(n):
        cell[a] = ((cells[3 * a] - low[0]) * span[1] + (cells[3 * a + 1] - low[1])) * span[2] \
            + (cells[3 * a + 2] - low[2])
    counting_sort(cell, NULL, n, ncell, first, bodies)      # the bodies by cell, stable
    for a in range(n):
        z0 = cells[3 * a + 2] - low[2] - 1
        z1 = z0 + 2
        if z0 < 0:
            z0 = 0
        if z1 > span[2] - 1:
            z1 = span[2] - 1
        for dx in range(-1, 2):
            x = cells[3 * a] - low[0] + dx
            if x < 0 or x >= span[0]:
                continue
            for dy in range(-1, 2):
                y = cells[3 * a + 1] - low[1] + dy
                if y < 0 or y >= span[1]:
                    continue
                base = (x * span[1] + y) * span[2]
                if not take(p, bodies, a, first[base + z0], first[base + z1 + 1]):
                    ok = 0
        if not (ok and flush(p, a)):
            ok = 0
            break
    free(first); free(bodies); free(cell)
    return ok


cdef inline index_t find(const index_t* slots, index_t mask, index_t c0, index_t c1,
                         index_t c2) noexcept nogil:
    """The slot of cell (c0, c1, c2) in the open-addressed table (4 words a slot: the cell
    and its first body, -1 when empty), or of the empty slot where it would go."""
    cdef index_t s = slot_of(cell_key(c0, c1, c2), mask)
    while slots[4 * s + 3] >= 0 and not (slots[4 * s] == c0 and slots[4 * s + 1] == c1
                                         and slots[4 * s + 2] == c2):
        s = (s + 1) & mask
    return s


cdef int hashed(Pairs* p, const index_t* cells, index_t n) noexcept nogil:
    """The pairs through a hash table of the occupied cells, each with the list of its
    bodies: 0 when out of memory."""
    cdef index_t mask = 1, s, a, b, dx, dy, dz, ok = 1
    while mask < 2 * n + 2:
        mask = 2 * mask
    cdef index_t* slots = <index_t*>malloc(4 * mask * sizeof(index_t))
    cdef index_t* after = <index_t*>malloc(n * sizeof(index_t))       # the next in a cell
    if slots == NULL or after == NULL:
        free(slots); free(after)
        return 0
    mask -= 1
    for s in range(mask + 1):
        slots[4 * s + 3] = -1
    for a in range(n - 1, -1, -1):
        s = find(slots, mask, cells[3 * a], cells[3 * a + 1], cells[3 * a + 2])
        if slots[4 * s + 3] < 0:
            slots[4 * s], slots[4 * s + 1], slots[4 * s + 2] = \
                cells[3 * a], cells[3 * a + 1], cells[3 * a + 2]
        after[a] = slots[4 * s + 3]
        slots[4 * s + 3] = a
    for a in range(n):
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                for dz in range(-1, 2):
                    s = find(slots, mask, cells[3 * a] + dx, cells[3 * a + 1] + dy,
                             cells[3 * a + 2] + dz)
                    b = slots[4 * s + 3]
                    while b >= 0:
                        if b > a and near(p, a, b):
                            if not grow(&p.local, &p.cap_local, p.count + 1):
                                ok = 0
                                break
                            p.local[p.count] = b
                            p.count += 1
                        b = after[b]
        if not (ok and flush(p, a)):
            ok = 0
            break
    free(slots); free(after)
    return ok


def grid_candidates(const index_t[:, ::1] cells, const double[:, ::1] x,
                    const double[::1] radius, double margin):
    """(a, b): every pair a < b of bodies in the same or adjacent cells (cells (n, 3) of
    integers) whose bounding spheres (centres x, radii) are within the margin, by a generous
    test (within 1e-9 of it relative: the caller decides exactly), each once, sorted by
    (a, b)."""
    cdef index_t n = cells.shape[0], i, k, ok
    cdef index_t low[3]
    cdef index_t span[3]
    cdef double volume = 1.0
    cdef Pairs p
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    for k in range(3):
        low[k], span[k] = cells[0, k], cells[0, k]
    for i in range(n):
        for k in range(3):
            if cells[i, k] < low[k]:
                low[k] = cells[i, k]
            if cells[i, k] > span[k]:
                span[k] = cells[i, k]
    for k in range(3):
        volume *= <double>(span[k] - low[k]) + 1.0
        span[k] = span[k] - low[k] + 1
    p.n = p.count = 0
    p.x, p.radius, p.margin = &x[0, 0], &radius[0], margin
    p.cap_a = p.cap_b = 16 * n
    p.cap_local = 64
    p.a = <index_t*>malloc(p.cap_a * sizeof(index_t))
    p.b = <index_t*>malloc(p.cap_b * sizeof(index_t))
    p.local = <index_t*>malloc(p.cap_local * sizeof(index_t))
    ok = p.a != NULL and p.b != NULL and p.local != NULL
    if ok:
        with nogil:
            if volume <= DENSE_CELLS_PER_BODY * n + 1024:
                ok = dense(&p, &cells[0, 0], n, low, span)
            else:
                ok = hashed(&p, &cells[0, 0], n)
    A = np.empty(p.n if ok else 0, np.int64)
    B = np.empty(p.n if ok else 0, np.int64)
    cdef index_t[::1] va = A
    cdef index_t[::1] vb = B
    if ok:
        for k in range(p.n):
            va[k] = p.a[k]
            vb[k] = p.b[k]
    free(p.a); free(p.b); free(p.local)
    if not ok:
        raise MemoryError("broad phase: no memory for the candidate pairs")
    return A, B


def near_pairs(const double[:, ::1] x, const double[::1] radius, double margin,
               const index_t[::1] a, const index_t[::1] b):
    """(k, 2): the pairs (a[k], b[k]) whose bounding spheres are within the margin, in their
    order: |x_a - x_b|^2 <= (r_a + r_b + margin)^2, the square summed as numpy's einsum sums
    it ((d0 d0 + d2 d2) + d1 d1), so the pairs are the twin's (near_pairs) to the bit."""
    cdef Py_ssize_t m = a.shape[0], k, n = 0, i, j
    cdef double d0, d1, d2, reach
    out = np.empty((m, 2), np.int64)
    cdef index_t[:, ::1] o = out
    with nogil:
        for k in range(m):
            i, j = a[k], b[k]
            d0 = x[i, 0] - x[j, 0]
            d1 = x[i, 1] - x[j, 1]
            d2 = x[i, 2] - x[j, 2]
            reach = radius[i] + radius[j] + margin
            if (d0 * d0 + d2 * d2) + d1 * d1 <= reach * reach:
                o[n, 0] = i
                o[n, 1] = j
                n += 1
    return out[:n].copy()
