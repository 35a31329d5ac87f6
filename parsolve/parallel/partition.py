"""Geometric partition: recursive coordinate bisection (RCB) of whole cells.

Space is cut into cubic cells from a fixed origin. The P ranks are the leaves of a binary tree:
a node holding ranks [first, first + k) splits them into floor(k/2) ranks below a cut and
ceil(k/2) above it, along one axis, at a cell boundary. Each rank thus owns a box of whole cells
(open towards infinity at the outside), and a cell belongs to exactly one rank. A body belongs
to the rank of the cell holding its centre, a contact to the rank of the cell holding its point.

The cuts are weighted medians of the load (Domain.body_load: one per body at set-up, later the
measured cost of each body), taken level by level: each subdomain is cut across the longest
extent of its box of loaded cells, where the load splits in the proportion of the ranks on
either side. The histograms are reduced exactly (the weights are quantised to integers whose
total is below 2^53, so every partial sum of doubles is exact), so every rank computes the
same cuts, whatever the order of the reduction. A rank on a slower core, or holding denser
packing, gets fewer bodies; a rebalance moves the cuts and the bodies follow by migration.

axes=(a,) restricts the cuts to one axis: slabs, the partition before this one.
"""
import math
import sys

import numpy as np
from mpi4py import MPI

BIG = 2 ** 40                      # the cell index of "unbounded": no model is that many cells


class RCBPartition:
    def __init__(self, size, cell, axes=(0, 1, 2), cuts=None, origin=None, periodic=None):
        """cell: the cells' side (or one per axis), from `origin` (default 0); periodic: the
        number of cells per period along each axis (0: not periodic): boxes near either end
        of a period are then neighbours. cuts: optional (axis, cut) per internal node of the
        tree, in the order of `internal` (a set partition, for tests); otherwise every cut at
        cell 0 along the first allowed axis until the first balance."""
        self.size = int(size)
        self.cell = np.broadcast_to(np.asarray(cell, float), (3,)).copy()
        self.origin = np.zeros(3) if origin is None else np.asarray(origin, float)
        self.periodic = np.zeros(3, np.int64) if periodic is None else np.asarray(periodic)
        self.axes = tuple(int(a) for a in axes)
        self._tree(self.size)
        if cuts is None:
            cuts = [(self.axes[0], 0)] * len(self.internal)
        self.set_cuts(cuts)

    # -- the tree ------------------------------------------------------------------------------
    def _tree(self, size):
        """Nodes in breadth-first order: ranks [first, first + count), children, depth."""
        first, count, depth, left, right = [0], [size], [0], [-1], [-1]
        i = 0
        while i < len(first):
            if count[i] > 1:
                k = count[i] // 2
                for f, c in ((first[i], k), (first[i] + k, count[i] - k)):
                    first.append(f)
                    count.append(c)
                    depth.append(depth[i] + 1)
                    left.append(-1)
                    right.append(-1)
                left[i], right[i] = len(first) - 2, len(first) - 1
            i += 1
        self.first, self.count, self.depth, self.left, self.right = (
            np.array(a, np.int64) for a in (first, count, depth, left, right))
        self.internal = np.flatnonzero(self.count > 1)
        self.leaf_rank = np.where(self.count == 1, self.first, -1)

    def set_cuts(self, cuts):
        """Set (axis, cut) of every internal node; recomputes the subdomains' boxes."""
        cuts = np.asarray(cuts, np.int64).reshape(-1, 2)
        self.axis = np.full(len(self.first), -1, np.int64)
        self.cut = np.zeros(len(self.first), np.int64)
        self.axis[self.internal], self.cut[self.internal] = cuts[:, 0], cuts[:, 1]
        lo = np.full((len(self.first), 3), -BIG, np.int64)
        hi = np.full((len(self.first), 3), BIG, np.int64)
        for i in self.internal:                       # parents come before their children
            a, c, l, r = self.axis[i], self.cut[i], self.left[i], self.right[i]
            lo[l], hi[l], lo[r], hi[r] = lo[i], hi[i], lo[i], hi[i]
            hi[l, a] = min(hi[i, a], c)
            lo[r, a] = max(lo[i, a], c)
        leaves = self.leaf_rank >= 0
        self.lo = np.empty((self.size, 3), np.int64)
        self.hi = np.empty((self.size, 3), np.int64)
        self.lo[self.leaf_rank[leaves]] = lo[leaves]
        self.hi[self.leaf_rank[leaves]] = hi[leaves]

    def cuts(self):
        """(axis, cut) of every internal node: what set_cuts takes."""
        return np.stack([self.axis[self.internal], self.cut[self.internal]], axis=1)

    def key(self):
        """Bytes that change whenever a cut does."""
        return self.cuts().tobytes()

    # -- queries -------------------------------------------------------------------------------
    def cells(self, points):
        return np.floor((np.asarray(points, float).reshape(-1, 3) - self.origin)
                        / self.cell).astype(np.int64)

    def owner(self, points):
        """The rank owning each point (the rank of the box holding its cell)."""
        return self._descend(self.cells(points))

    def owner_of_cells(self, cells):
        """The rank owning each row of cell indices (n, 3)."""
        return self._descend(np.asarray(cells, np.int64).reshape(-1, 3))

    def _descend(self, cells, cut=None, axis=None):
        """The leaf rank of each row of cell indices, under the given (or current) cuts;
        compiled (kernels/partition.pyx), twin `descend` below."""
        cut = self.cut if cut is None else cut
        axis = self.axis if axis is None else axis
        return _kernel.descend(np.ascontiguousarray(cells, np.int64), axis, cut, self.left,
                               self.right, self.leaf_rank)

    def holders(self, points, reach=None):
        """(row, rank) for every rank whose box, grown by reach[k] cells (default 1), holds the
        cell of point k (its owner included): rows in order, each row's ranks ascending.
        Computed from the point, its reach and the cuts alone, so every rank finds the same
        holders of a body. Compiled (kernels/partition.pyx), twin `holders` below."""
        cells = self.cells(points)
        reach = np.ones(len(cells), np.int64) if reach is None else \
            np.ascontiguousarray(reach, np.int64)
        full = (self.lo < self.hi).all(axis=1).view(np.int8)  # no empty box holds anything
        return _kernel.holders(cells, reach, self.axis, self.cut, self.left, self.right,
                               self.leaf_rank, full)

    def neighbours(self, rank, reach=2):
        """The ranks whose box lies within `reach` cells of `rank`'s box in every axis (itself
        included): a symmetric relation, found in O(P) from the boxes."""
        lo, hi = self.lo[rank], self.hi[rank]
        full = (self.lo < self.hi).all(axis=1)        # an empty box holds nothing
        close = (self.lo - reach < hi) & (lo - reach < self.hi)
        for a in np.flatnonzero(self.periodic):       # or across the period's ends
            n = int(self.periodic[a])
            blo, bhi = np.clip(self.lo[:, a], 0, n), np.clip(self.hi[:, a], 0, n)
            for k in (-n, n):
                close[:, a] |= (blo + k - reach < bhi[rank]) & (blo[rank] - reach < bhi + k)
        near = close.all(axis=1) & full[rank] & full
        near[rank] = True
        return np.flatnonzero(near)

    # -- balance -------------------------------------------------------------------------------
    def balance(self, comm, points, weights=None, gain=None):
        """New cuts that split the total weight of `points` (all ranks') in proportion to the
        ranks on either side of each cut; returns whether the cuts were moved.

        gain: move them only if that cuts the excess of max/avg over 1 by this factor at
        least (0.5: halves it). A cut moves by whole cells, and when one cell layer is a
        large share of a subdomain's load the best cut may overshoot as much as it corrects;
        moving it would then trade one imbalance for its mirror image every few steps."""
        if self.size == 1:
            return False
        cells = self.cells(points)
        w = _quantised(comm, np.ones(len(cells)) if weights is None else weights)
        if w is None:                                 # no body on any rank
            return False
        axis, cut = self.axis.copy(), self.cut.copy()
        node = np.zeros(len(cells), np.int64)
        for d in range(int(self.depth.max())):
            level = self.internal[self.depth[self.internal] == d]
            slot = np.full(len(self.first), -1)
            slot[level] = np.arange(len(level))
            at = slot[node]
            lo, hi = _boxes(comm, cells, at, len(level))
            axis[level], cut[level] = self._median_cuts(comm, cells, w, at, level, lo, hi)
            n = node[at >= 0]
            up = cells[at >= 0, axis[n]] >= cut[n]
            node[at >= 0] = np.where(up, self.right[n], self.left[n])
        if gain is not None:
            # float on every rank: numpy's bincount of no cells is int64 even with weights,
            # and a rank without bodies would reduce ints against the others' doubles
            loads = np.concatenate([np.bincount(self._descend(cells, c, a), weights=w,
                                                minlength=self.size)
                                    for c, a in ((self.cut, self.axis), (cut, axis))]
                                   ).astype(float)
            total = np.empty_like(loads)
            comm.Allreduce(loads, total, op=MPI.SUM)              # integers: exact
            now, new = _max_over_avg(total[:self.size]), _max_over_avg(total[self.size:])
            if new - 1.0 > gain * (now - 1.0):
                return False
        self.set_cuts(np.stack([axis[self.internal], cut[self.internal]], axis=1))
        return True

    def _median_cuts(self, comm, cells, w, at, level, lo, hi):
        """(axis, cut) of each node of `level`: across the longest extent of its box of
        loaded cells [lo, hi] (of the allowed axes; the first on a tie), at the cell boundary
        nearest the point where the load splits as floor(k/2) : ceil(k/2)."""
        extent = np.where(np.isin(np.arange(3), self.axes), hi - lo, -1)
        axis = np.argmax(extent, axis=1)
        empty = (hi < lo).any(axis=1)                 # no load in the node: cut anywhere
        axis[empty] = self.axes[0]
        rows = np.arange(len(level))
        first = np.where(empty, 0, lo[rows, axis])
        width = np.where(empty, 1, hi[rows, axis] - first + 1)
        offset = np.concatenate([[0], np.cumsum(width)])
        mine = at >= 0
        bins = offset[at[mine]] + cells[mine, axis[at[mine]]] - first[at[mine]]
        hist = np.bincount(bins, weights=w[mine], minlength=offset[-1]).astype(float)
        total = np.empty_like(hist)
        comm.Allreduce(hist, total, op=MPI.SUM)                   # integers: exact
        cut = np.empty(len(level), np.int64)
        for j, i in enumerate(level):
            cum = np.cumsum(total[offset[j]:offset[j + 1]])
            target = cum[-1] * (self.count[i] // 2) / self.count[i]
            k = min(int(np.searchsorted(cum, target, side="left")), len(cum) - 1)
            before = cum[k - 1] if k > 0 else 0.0     # the load below layer k
            # cut below or above the layer holding the target, whichever is nearer to it
            cut[j] = first[j] + k + (cum[k] - target <= target - before)
        return axis, cut

    def imbalance(self, comm, load):
        """max/avg over the ranks of `load` (bodies, or measured seconds of work)."""
        return _max_over_avg(np.array(comm.allgather(load), float))

    def nbytes(self):
        """Bytes of the tree and the boxes: O(P), the same on every rank."""
        return sum(a.nbytes for a in (self.first, self.count, self.depth, self.left,
                                      self.right, self.axis, self.cut, self.leaf_rank,
                                      self.lo, self.hi))


def _boxes(comm, cells, at, n):
    """(lo, hi) cell indices of the bounding box of the points at each of n nodes, over all
    ranks (hi < lo where a node holds no point)."""
    local = np.full((n, 6), BIG, np.int64)
    mine = at >= 0
    np.minimum.at(local, at[mine], np.hstack([cells[mine], -cells[mine]]))
    box = np.empty_like(local)
    comm.Allreduce(local, box, op=MPI.MIN)
    return box[:, :3], -box[:, 3:]


def _quantised(comm, weights):
    """The weights as integer-valued doubles, on one global scale chosen so that the total
    over all ranks stays below 2^53: every sum of them, in any order, is exact. None when
    there is no body on any rank."""
    w = np.asarray(weights, float)
    stats = np.array([w.max() if len(w) else 0.0, len(w)], float)
    total = np.empty(2)
    comm.Allreduce(stats[:1], total[:1], op=MPI.MAX)
    comm.Allreduce(stats[1:], total[1:], op=MPI.SUM)
    wmax, n = total
    if n == 0:
        return None
    if wmax <= 0:
        return np.ones(len(w))
    shift = 52 - int(math.ceil(math.log2(n))) - int(np.frexp(wmax)[1])
    return np.floor(np.ldexp(w, shift))


def _max_over_avg(per_rank):
    total = per_rank.sum()
    return per_rank.max() * len(per_rank) / total if total else 1.0


def descend(cells, axis, cut, left, right, leaf_rank):
    """The twin of kernels/partition.pyx's descend (RCBPartition._descend says what it is)."""
    node = np.zeros(len(cells), np.int64)
    rows = np.arange(len(cells))
    while len(rows):
        n = node[rows]
        up = cells[rows, axis[n]] >= cut[n]
        node[rows] = np.where(up, right[n], left[n])
        rows = rows[axis[node[rows]] >= 0]
    return leaf_rank[node]


def holders(cells, reach, axis, cut, left, right, leaf_rank, full):
    """The twin of kernels/partition.pyx's holders (RCBPartition.holders says what it is)."""
    rows = np.arange(len(cells))
    node = np.zeros(len(cells), np.int64)
    done_rows, done_nodes = [rows[:0]], [node[:0]]
    while len(rows):
        inner = axis[node] >= 0
        done_rows.append(rows[~inner])
        done_nodes.append(node[~inner])
        rows, node = rows[inner], node[inner]
        v = cells[rows, axis[node]]
        k = reach[rows]
        down = v - k < cut[node]                  # the range [v - k, v + k] meets each side
        up = v + k >= cut[node]
        rows = np.concatenate([rows[down], rows[up]])
        node = np.concatenate([left[node[down]], right[node[up]]])
    rows, rank = np.concatenate(done_rows), leaf_rank[np.concatenate(done_nodes)]
    keep = np.asarray(full, bool)[rank]
    rows, rank = rows[keep], rank[keep]
    o = np.lexsort((rank, rows))
    return rows[o], rank[o]


from .._kernels import compiled  # noqa: E402  (after the twins)

_modules = compiled("partition")
_kernel = _modules[0] if _modules is not None else sys.modules[__name__]
