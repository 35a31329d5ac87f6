"""How far from its centre a body's rows may be owned: its reach, in partition cells, which
decides which ranks hold a copy of it (parallel.Domain).

A row of the finest colouring level is owned with the cell of its point, within the body's
diameter plus the margin of its centre (the travel of a step included: the ghosts are made
before the half step). A row of a coarser level (a large body's, or a long joint's) is owned
with the finest cell at its coarse cell's centre (parallel.colouring.Levels.anchor), up to a
coarsest cell ("top") away: its bodies must reach that far. Those are the coarse bodies
themselves (larger than the finest level, or linked by joints and connectors), and the fine
ones beside a coarse body: in a cell of a quarter of the top cell within k(R) such cells of a
coarse body's (k covers the widest gap a contact with a body of radius R allows). A grain far
from every boulder keeps a reach of its own diameter: the ghost layer of a polydisperse bed
stays thin away from the boulders.
The coarse bodies are held first, with a reach wide enough that every holder of a fine body
holds all the coarse bodies beside it and so finds the same reach for it: every rank computes
the same holders of a body.
"""
import numpy as np

_BIAS = 2 ** 20                      # cell indices packed into one int64 key, 21 bits each


class Reach:
    """levels: the colouring's Levels; margin: the contact margin; linked: the ids of the
    bodies with joints or connectors; period: periodic.Period (images of the coarse bodies
    count beside the boundary)."""

    def __init__(self, levels, margin, linked, period):
        self.levels, self.margin, self.linked, self.period = levels, margin, linked, period
        self.top = float(np.max(levels.top))
        self.finest = float(np.min(levels.finest))
        self.one = levels.nlevels == 1
        self.staged = not self.one                # coarse bodies are held first
        # "beside" is marked on cells of a quarter of the top cell, as far from a coarse body
        # of radius R as a contact reaches (2 (R + r) + margin, r <= finest / 2 for a fine
        # body), in cells: k(R)
        self.mark = np.asarray(levels.top, float) / 4.0
        self.kmax = self._k(np.array([0.5 * self.top]))[0]

    def _linked(self, gid):
        """Whether each body has joints or connectors (none: no search)."""
        return np.isin(gid, self.linked) if len(self.linked) else np.zeros(len(gid), bool)

    def _k(self, R):
        return np.ceil((2.0 * R + self.finest + self.margin) / self.mark.min()).astype(np.int64)

    def _cells(self, length):
        return np.ceil(length / self.finest).astype(np.int64)

    def coarse(self, gid, radius):
        """The bodies whose rows may be coarse whatever their neighbours."""
        if self.one:
            return np.zeros(len(gid), bool)
        level = self.levels.level(radius + self.margin)        # a contact's point: in the gap
        return (level < self.levels.nlevels - 1) | self._linked(gid)

    def cells(self, gid, radius, x, coarse=None):
        """The reach of each body in partition cells. coarse: (x, radius) of the coarse bodies
        this rank holds (all those beside these bodies), or None: fine bodies are then taken
        as beside one (the bound)."""
        if self.one:                             # the rows' points; the joints' whole cell
            r = np.where(self._linked(gid), self.top, 2.0 * radius + self.margin)
            return self._cells(r)
        big = self.coarse(gid, radius)
        beside = np.ones(len(gid), bool) if coarse is None else self._beside(x, *coarse)
        out = self._cells(2.0 * radius + self.margin)
        out[beside] = self._cells(self.top + 2.0 * radius[beside] + self.margin) + 1
        # the coarse bodies: as far as any holder of a fine body beside them
        out[big] = self._cells(2.0 * (self.kmax + 2) * self.mark.max() + 2.0 * self.top
                               + 2.0 * radius[big] + 2.0 * self.margin) + 2
        return out

    def _beside(self, x, xc, rc):
        """Whether each point x lies in a marking cell within k(R) cells of the cell of a
        coarse body of radius R (or of its periodic image)."""
        if not len(xc) or not len(x):
            return np.zeros(len(x), bool)
        if self.period:
            idx, shift = self.period.images(xc, (self.kmax + 1) * self.mark.max())
            xc, rc = np.concatenate([xc, xc[idx] + shift]), np.concatenate([rc, rc[idx]])
        origin = self.levels.origin
        cc = np.floor((xc - origin) / self.mark).astype(np.int64)
        k = self._k(rc)
        marked = []
        for kk in np.unique(k):
            r = np.arange(-kk, kk + 1)
            off = np.stack(np.meshgrid(r, r, r, indexing="ij"), -1).reshape(-1, 3)
            marked.append(_key((cc[k == kk][:, None, :] + off[None]).reshape(-1, 3)))
        marked = np.unique(np.concatenate(marked))
        keys = _key(np.floor((x - origin) / self.mark).astype(np.int64))
        pos = np.minimum(np.searchsorted(marked, keys), len(marked) - 1)
        return marked[pos] == keys


def _key(cells):
    c = cells + _BIAS
    return (c[:, 0] << 42) | (c[:, 1] << 21) | c[:, 2]
