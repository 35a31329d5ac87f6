"""Geometric partition: slabs of whole cells along one axis.

Rank r owns the cells whose index along `axis` lies in [bounds[r-1], bounds[r]) (bounds has
P - 1 interior entries; the first and last slabs are open). A body belongs to the rank of the
cell holding its centre, a contact to the rank of the cell holding its point. Slabs are set
from a histogram of the load per cell column (weighted median cuts): at set-up the load is
one per body; later each body weighs what its rank measured it costs (Domain.migrate), so a
rank on a slower core, or holding denser packing, gets fewer bodies. A rebalance moves the
cuts, and the bodies follow by migration.
"""
import numpy as np
from mpi4py import MPI


class SlabPartition:
    def __init__(self, size, cell, axis=0, bounds=None):
        self.size = size
        self.cell = float(cell)
        self.axis = int(axis)
        self.bounds = np.zeros(max(size - 1, 0), np.int64) if bounds is None else \
            np.asarray(bounds, np.int64)

    def column(self, points):
        return np.floor(points[:, self.axis] / self.cell).astype(np.int64)

    def owner(self, points):
        """The rank owning each point."""
        return np.searchsorted(self.bounds, self.column(points), side="right").astype(np.int64)

    def holders(self, points, width):
        """(first, last) ranks whose slab, widened by `width`, holds each point."""
        lo = np.floor((points[:, self.axis] - width) / self.cell).astype(np.int64)
        hi = np.floor((points[:, self.axis] + width) / self.cell).astype(np.int64)
        return (np.searchsorted(self.bounds, lo, side="right"),
                np.searchsorted(self.bounds, hi, side="right"))

    def balance(self, comm, points, weights=None, gain=None):
        """New cuts that split the total weight of `points` (all ranks') evenly; returns
        whether the cuts were moved.

        gain: move them only if that cuts the excess of max/avg over 1 by this factor at
        least (0.5: halves it). A cut moves by whole columns, and when one column is a
        large share of a slab's load the best cut may overshoot as much as it corrects;
        moving it would then trade one imbalance for its mirror image every few steps."""
        if self.size == 1:
            return False
        col = self.column(points)
        lo = comm.allreduce(int(col.min()) if len(col) else np.iinfo(np.int64).max, op=MPI.MIN)
        hi = comm.allreduce(int(col.max()) if len(col) else np.iinfo(np.int64).min, op=MPI.MAX)
        if lo > hi:
            return False
        w = np.ones(len(col)) if weights is None else np.asarray(weights, float)
        # float on every rank: bincount of no points gives int64 even with weights, and the
        # ranks would reduce buffers of different types (different cuts on different ranks)
        hist = np.bincount(col - lo, weights=w, minlength=hi - lo + 1).astype(float)
        total = np.empty_like(hist)
        comm.Allreduce(hist, total, op=MPI.SUM)
        cum = np.cumsum(total)
        targets = cum[-1] * np.arange(1, self.size) / self.size
        i = np.minimum(np.searchsorted(cum, targets, side="left"), len(cum) - 1)
        before = np.where(i > 0, cum[i - 1], 0.0)        # the weight left of column i
        # cut before or after the column holding the target, whichever is nearer to it
        cuts = np.maximum.accumulate((lo + i + (cum[i] - targets <= targets - before))
                                     .astype(np.int64))
        if gain is not None:
            columns = lo + np.arange(len(total))
            now, new = (_max_over_avg(np.bincount(
                np.searchsorted(b, columns, side="right"), weights=total, minlength=self.size))
                for b in (self.bounds, cuts))
            if new - 1.0 > gain * (now - 1.0):
                return False
        self.bounds = cuts
        return True

    def imbalance(self, comm, load):
        """max/avg over the ranks of `load` (bodies, or measured seconds of work)."""
        return _max_over_avg(np.array(comm.allgather(load), float))


def _max_over_avg(per_rank):
    total = per_rank.sum()
    return per_rank.max() * len(per_rank) / total if total else 1.0
