"""Broad phase: hashed cell grids over bounding spheres, O(N) expected.

Cells have the size of the largest bounding diameter plus the margin, so a pair that can touch
lies in the same or an adjacent cell. Each pair is produced once, from the lower cell of the
13 "forward" neighbours plus its own cell. Hash collisions only add candidates, which the
distance test removes.

Mixed sizes (the largest radius more than LEVEL_RATIO times the smallest: blocks on a bed of
grains) use one grid per level of sizes (radii within a factor LEVEL_RATIO), as a hierarchical
grid does: the pairs within a level on that level's cells, and the pairs of a body of a
larger level with the smaller bodies on the larger level's cells (the smaller bodies hashed
there by their centres). The pairs and their order are the same as one grid's.
"""
import numpy as np

_FORWARD = np.array([(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)
                     if (dx, dy, dz) > (0, 0, 0)], dtype=np.int64)
_ALL = np.array([(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)],
                dtype=np.int64)
_P = np.array([73856093, 19349663, 83492791], dtype=np.uint64)


def cell_hash(cells):
    """One uint64 per row of integer cell indices (n, 3): equal cells, equal keys (distinct
    cells may collide)."""
    c = cells.astype(np.uint64)
    return (c[:, 0] * _P[0]) ^ (c[:, 1] * _P[1]) ^ (c[:, 2] * _P[2])


LEVEL_RATIO = 4.0


def candidate_pairs(x, radius, margin):
    """Index pairs (i, j), i < j, whose bounding spheres are within `margin`, sorted by (i, j)."""
    n = len(x)
    if n < 2:
        return np.zeros((0, 2), np.int64)
    if radius.max() > LEVEL_RATIO * radius.min():
        return _levels(x, radius, margin)
    return _one_grid(x, radius, margin)


def _levels(x, radius, margin):
    """candidate_pairs over one grid per level of sizes."""
    level = np.floor(np.log(radius / radius.min()) / np.log(LEVEL_RATIO)).astype(np.int64)
    firsts, seconds = [], []
    members = [np.flatnonzero(level == L) for L in np.unique(level)]
    for k, big in enumerate(members):
        size = 2.0 * radius[big].max() + margin
        if len(big) > 1:
            p = _one_grid(x[big], radius[big], margin, filtered=False)
            firsts.append(big[p[:, 0]])
            seconds.append(big[p[:, 1]])
        small = np.concatenate(members[:k]) if k else np.zeros(0, np.int64)
        if not len(small):
            continue
        cells_small = np.floor(x[small] / size).astype(np.int64)
        keys = cell_hash(cells_small)
        order = np.argsort(keys, kind="stable")
        skeys = keys[order]
        cells_big = np.floor(x[big] / size).astype(np.int64)
        for off in _ALL:
            nk = cell_hash(cells_big + off)
            lo = np.searchsorted(skeys, nk, side="left")
            hi = np.searchsorted(skeys, nk, side="right")
            count = np.maximum(hi - lo, 0)
            total = int(count.sum())
            if total:                                # each big body with the small in a cell
                rows = np.repeat(np.arange(len(big)), count)
                offs = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
                firsts.append(big[rows])
                seconds.append(small[order[lo[rows] + offs]])
    return _filtered(firsts, seconds, x, radius, margin)


def _one_grid(x, radius, margin, filtered=True):
    """candidate_pairs on one grid (cells of the largest diameter plus the margin); without
    the distance filter when `filtered` is False."""
    n = len(x)
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
    if not filtered:
        return _filtered(firsts, seconds, x, radius, margin, test=False)
    return _filtered(firsts, seconds, x, radius, margin)


def _filtered(firsts, seconds, x, radius, margin, test=True):
    """The distinct pairs (i < j) among the candidates within reach, sorted by (i, j)."""
    if not firsts:                          # no two bodies in the same or adjacent cells
        return np.zeros((0, 2), np.int64)
    i = np.concatenate(firsts)
    j = np.concatenate(seconds)
    a, b = np.minimum(i, j), np.maximum(i, j)
    keep = a != b
    a, b = a[keep], b[keep]
    if not test:
        return np.stack([a, b], axis=1)
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
