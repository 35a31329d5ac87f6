"""Broad phase: cell grids over bounding spheres, O(N) expected.

Cells have the size of the largest bounding diameter plus the margin, so a pair that can touch
lies in the same or an adjacent cell. Each pair is produced once, by its lower-numbered body
looking into its own cell and the 26 around it (kernels/broadphase.pyx: a cell list, or a
hash table of the occupied cells where bodies are spread far apart).

Mixed sizes (the largest radius more than LEVEL_RATIO times the smallest: blocks on a bed of
grains) use one grid per level of sizes (radii within a factor LEVEL_RATIO), as a hierarchical
grid does: the pairs within a level on that level's cells, and the pairs of a body of a
larger level with the smaller bodies by a look in the few cells its reach covers, the smaller
bodies hashed by their centres on cells of half the larger level's radius. The pairs and
their order are the same as one grid's.
"""
import sys

import numpy as np

from ..platform import libm
from ..tables.table import same

_NEIGHBOURS = np.array([(dx, dy, dz) for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                        for dz in (-1, 0, 1)], dtype=np.int64)
_P = np.array([73856093, 19349663, 83492791], dtype=np.uint64)


def cell_hash(cells):
    """One uint64 per row of integer cell indices (n, 3): equal cells, equal keys (distinct
    cells may collide)."""
    c = cells.astype(np.uint64)
    return (c[:, 0] * _P[0]) ^ (c[:, 1] * _P[1]) ^ (c[:, 2] * _P[2])


LEVEL_RATIO = 4.0


def candidate_pairs(x, radius, margin, extents=None):
    """Index pairs (i, j), i < j, whose bounding spheres are within `margin`, sorted by (i, j).
    extents(rows): the world half extents (k, 3) of boxes about the centres holding the
    bodies `rows` (shapes.extents); with mixed sizes a larger body then pairs only with the
    smaller ones whose spheres reach its box too (a pillar's sphere holds thousands of
    grains its box does not)."""
    n = len(x)
    if n < 2:
        return np.zeros((0, 2), np.int64)
    if radius.max() > LEVEL_RATIO * radius.min():
        return _levels(x, radius, margin, extents)
    return _one_grid(x, radius, margin)


class Skin:
    """A Verlet list over the broad phase: the pairs within margin + skin, found once and kept
    while the held bodies are the same and none has moved half the skin since (a pair within
    the margin now was then within the margin plus the skin); each step keeps those within
    the margin by candidate_pairs' own exact test, so the pairs, and their order, are
    candidate_pairs' to the bit. Where its pairs are not kept a single step (the ghosts of a
    rank change every step, every body falls fast) the plain broad phase runs instead, 1, 2,
    4 ... up to 64 steps before the skin is tried again. For one grid of sizes (mixed sizes:
    candidate_pairs every step, their boxes turn). skin [m]: 0 turns it off. builds, reuses,
    plain: how often each."""

    def __init__(self, margin, skin):
        self.margin, self.skin = float(margin), float(skin)
        self.builds = self.reuses = self.plain = 0
        self._gid = self._x0 = self._pairs = None
        self._used = self._wait = self._left = 0

    def pairs(self, x, radius, gid, margin, extents=None):
        """candidate_pairs(x, radius, margin, extents) of the bodies of ids gid."""
        if margin != self.margin or not self.skin > 0.0 or len(x) < 2:
            return candidate_pairs(x, radius, margin, extents)
        x = np.ascontiguousarray(x, float)
        radius = np.ascontiguousarray(radius, float)
        if self._kept(x, gid):                  # the bodies it was built for: one grid
            self._used += 1
            self.reuses += 1
            return _kernel.near_pairs(x, radius, float(margin), *self._pairs)
        if radius.max() > LEVEL_RATIO * radius.min():
            return candidate_pairs(x, radius, margin, extents)
        if self._pairs is not None:             # the last pairs are done: were they kept?
            self._wait = 0 if self._used else min(max(1, 2 * self._wait), 64)
            self._left, self._pairs = self._wait, None
        if self._left:
            self._left -= 1
            self.plain += 1
            return candidate_pairs(x, radius, margin, extents)
        self._gid, self._x0, self._used = gid.copy(), x.copy(), 0
        pairs = _one_grid(x, radius, margin + self.skin)
        self._pairs = (pairs[:, 0].copy(), pairs[:, 1].copy())
        self.builds += 1
        return _kernel.near_pairs(x, radius, float(margin), *self._pairs)

    def _kept(self, x, gid):
        """Whether the pairs found last hold: the same bodies, none moved half the skin."""
        if self._pairs is None or not same(gid, self._gid):
            return False
        d = x - self._x0
        return float(np.einsum("ij,ij->i", d, d).max()) <= (0.5 * self.skin) ** 2 * (1 - 1e-9)


def near_pairs(x, radius, margin, a, b):
    """The twin of kernels/broadphase.pyx's near_pairs: (k, 2), the pairs (a, b) whose
    bounding spheres are within the margin (the exact test), in their order."""
    d = x[a] - x[b]
    near = np.einsum("ij,ij->i", d, d) <= (radius[a] + radius[b] + margin) ** 2
    return np.stack([a[near], b[near]], axis=1)


def _levels(x, radius, margin, extents=None):
    """candidate_pairs over one grid per level of sizes."""
    level = np.floor(libm.log(radius / radius.min()) / libm.log(LEVEL_RATIO)).astype(np.int64)
    firsts, seconds = [], []
    members = [np.flatnonzero(level == L) for L in np.unique(level)]
    for k, big in enumerate(members):
        if len(big) > 1:
            p = _one_grid(x[big], radius[big], margin)
            firsts.append(big[p[:, 0]])
            seconds.append(big[p[:, 1]])
        if k:
            _reach(x, radius, margin, big, np.concatenate(members[:k]), firsts, seconds,
                   extents)
    if not firsts:
        return np.zeros((0, 2), np.int64)
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    n = np.int64(len(x))
    key = np.unique(np.minimum(i, j) * n + np.maximum(i, j))     # sorted by (i, j)
    return np.stack([key // n, key % n], axis=1)


def _reach(x, radius, margin, big, small, firsts, seconds, extents=None):
    """Append the pairs (big body, smaller body) within reach: the smaller bodies hashed by
    their centres on cells of about half the big bodies' least reach per axis (their boxes'
    half extents, given extents, else their radii), each big body looking in the block of
    cells its reach covers (all blocks' cells at once), each candidate tested at once. Hash
    collisions may repeat a pair: _levels makes the pairs unique."""
    half = np.full((len(x), 3), np.inf)          # per axis: the big bodies' boxes
    half[big] = radius[big][:, None] if extents is None else \
        np.minimum(extents(big), radius[big][:, None])
    reach = half[big] + radius[small].max() + margin
    lo_x, hi_x = x[big] - reach, x[big] + reach
    size = np.maximum(0.5 * reach.min(axis=0), 2.0 * (radius[small].max() + margin))
    while True:                                  # at most ~8 cells per smaller body looked at
        lo = np.floor(lo_x / size).astype(np.int64)
        span = np.floor(hi_x / size).astype(np.int64) - lo + 1
        cells = np.prod(span, axis=1)
        if cells.sum() <= 8 * len(small) + 64 * len(big):
            break
        size = size * 1.5
    keys = cell_hash(np.floor(x[small] / size).astype(np.int64))
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    total = int(cells.sum())
    owner = np.repeat(np.arange(len(big)), cells)
    k = np.arange(total) - np.repeat(np.cumsum(cells) - cells, cells)
    sp = span[owner]
    iz = k % sp[:, 2]
    k //= sp[:, 2]
    cell = lo[owner] + np.stack([k // sp[:, 1], k % sp[:, 1], iz], axis=1)
    nk = cell_hash(cell)
    a = np.searchsorted(skeys, nk, side="left")
    count = np.searchsorted(skeys, nk, side="right") - a
    total = int(count.sum())
    if not total:
        return
    r = np.repeat(owner, count)
    offs = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    i, j = big[r], small[order[np.repeat(a, count) + offs]]
    d = x[i] - x[j]
    near = np.einsum("ij,ij->i", d, d) <= (radius[i] + radius[j] + margin) ** 2
    if extents is not None:                      # and the small sphere reaches the big box
        near &= (np.abs(d) <= half[i] + (radius[j] + margin)[:, None]).all(axis=1)
    firsts.append(i[near])
    seconds.append(j[near])


def _one_grid(x, radius, margin):
    """candidate_pairs on one grid (cells of the largest diameter plus the margin): the pairs
    of bodies in the same or adjacent cells (grid_candidates, compiled), then the distance
    test."""
    size = 2.0 * radius.max() + margin
    x = np.ascontiguousarray(x, float)
    a, b = _kernel.grid_candidates(np.floor(x / size).astype(np.int64), x,
                                   np.ascontiguousarray(radius, float), float(margin))
    return _kernel.near_pairs(x, np.ascontiguousarray(radius, float), float(margin), a, b)


def grid_candidates(cells, x, radius, margin):
    """The twin of kernels/broadphase.pyx's grid_candidates: (a, b), every pair a < b of
    bodies in the same or adjacent cells (cells (n, 3) of integers) whose bounding spheres
    (centres x, radii) are within the margin by a generous test (the caller's exact test
    decides), each once, sorted by (a, b): the bodies under the keys (cell_hash) of a's cell
    and its 26 neighbours, those in another cell of the same key left out."""
    n = len(cells)
    keys = cell_hash(cells)
    order = np.argsort(keys, kind="stable")
    skeys = keys[order]
    firsts, seconds = [], []
    for off in _NEIGHBOURS:
        nk = cell_hash(cells + off)
        lo = np.searchsorted(skeys, nk, side="left")
        hi = np.searchsorted(skeys, nk, side="right")
        count = np.maximum(hi - lo, 0)
        k = np.repeat(np.arange(n), count)
        offs = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        firsts.append(k)
        seconds.append(order[lo[k] + offs])
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    d = x[a] - x[b]
    reach = radius[a] + radius[b] + margin
    keep = (b > a) & (np.abs(cells[b] - cells[a]) <= 1).all(axis=1) \
        & (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]
           <= reach * reach * (1.0 + 1e-9))
    key = np.unique(a[keep] * np.int64(n) + b[keep])
    return key // n, key % n


from .._kernels import compiled  # noqa: E402  (after grid_candidates: its twin)

_modules = compiled("broadphase")
_kernel = _modules[0] if _modules is not None else sys.modules[__name__]
