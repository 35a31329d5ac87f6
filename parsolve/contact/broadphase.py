"""Broad phase: a hashed cell grid over bounding spheres, O(N) expected.

Cells have the size of the largest bounding diameter plus the margin, so a pair that can touch
lies in the same or an adjacent cell. Each pair is produced once, from the lower cell of the
13 "forward" neighbours plus its own cell. Hash collisions only add candidates, which the
distance test removes.
"""
import numpy as np

_FORWARD = np.array([(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)
                     if (dx, dy, dz) > (0, 0, 0)], dtype=np.int64)
_P = np.array([73856093, 19349663, 83492791], dtype=np.uint64)


def cell_hash(cells):
    """One uint64 per row of integer cell indices (n, 3): equal cells, equal keys (distinct
    cells may collide)."""
    c = cells.astype(np.uint64)
    return (c[:, 0] * _P[0]) ^ (c[:, 1] * _P[1]) ^ (c[:, 2] * _P[2])


def candidate_pairs(x, radius, margin):
    """Index pairs (i, j), i < j, whose bounding spheres are within `margin`, sorted by (i, j)."""
    n = len(x)
    if n < 2:
        return np.zeros((0, 2), np.int64)
    size = 2.0 * radius.max() + margin
    cells = np.floor(x / size).astype(np.int64)
    keys = cell_hash(cells)
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    firsts, seconds = [], []
    # same cell: every later member of the run
    start = np.searchsorted(skeys, skeys, side="left")
    end = np.searchsorted(skeys, skeys, side="right")
    pos = np.arange(n)
    _expand(order, pos + 1, end, firsts, seconds)
    del start
    for off in _FORWARD:
        nk = cell_hash(cells[order] + off)
        lo = np.searchsorted(skeys, nk, side="left")
        hi = np.searchsorted(skeys, nk, side="right")
        _expand(order, lo, hi, firsts, seconds)
    if not firsts:                          # no two bodies in the same or adjacent cells
        return np.zeros((0, 2), np.int64)
    i = np.concatenate(firsts)
    j = np.concatenate(seconds)
    a, b = np.minimum(i, j), np.maximum(i, j)
    keep = a != b
    a, b = a[keep], b[keep]
    d = x[a] - x[b]
    near = np.einsum("ij,ij->i", d, d) <= (radius[a] + radius[b] + margin) ** 2
    pairs = np.unique(np.stack([a[near], b[near]], axis=1), axis=0)
    return pairs


def _expand(order, lo, hi, firsts, seconds):
    """Append the pairs (order[k], order[m]) for lo[k] <= m < hi[k]."""
    count = np.maximum(hi - lo, 0)
    total = int(count.sum())
    if total == 0:
        return
    k = np.repeat(np.arange(len(lo)), count)
    offs = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    firsts.append(order[k])
    seconds.append(order[lo[k] + offs])
