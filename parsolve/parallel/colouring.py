"""A deterministic colouring of the rows for Gauss-Seidel: by the parity of their cell, on
cells of several sizes.

Space is cut into cubic cells from a fixed origin, at levels l = 0, 1, ... of side top / 2^l
(top: at least the largest body diameter plus the margin, and twice the joints' reach). A row
(contact, joint, connector) has a reach: the largest, over its bodies, of the body's radius plus
half the margin and of the distance from the row's point to the body's centre. It belongs to
the finest level whose cell is at least twice its reach, and there to the cell that holds its
point; its colour is 8 l plus the parity pattern of the cell's indices. Two rows of one colour
in different cells are more than a cell apart, and each lies within half a cell of every body
it touches, so no body touches both: within a colour, cells can be relaxed in any order or at
once on different ranks. Small grains thus get small cells whatever the largest body, and a
row with a large body (or a long joint) gets a cell as large as it needs. Inside a cell the
rows are visited in key order, and all the rows of a cell belong to one rank (the one that
owns the finest cell at its centre). Sweeping the colours in turn gives one Gauss-Seidel order that
depends on the geometry and the global ids alone, never on the partition: 1 and P ranks
iterate alike. With bodies of one size (within a factor 2) there is one level, the cells of
the largest body: the colouring before levels.
"""
import sys

import numpy as np

from ..tables.keys import CONTACT
from ..tables.table import FEW_ROWS, same

NCOLOURS = 8                       # per level
MAX_LEVELS = 8                     # cells down to top / 128; finer rows share the last level


def cell_ids(cells):
    """One integer per row of cell indices (n, k), equal exactly when the rows are equal."""
    order = np.lexsort(cells.T)
    s = cells[order]
    new = np.ones(len(s), bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    ids = np.empty(len(s), np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids


def colours_of(cells):
    """The colour of each row of cell indices (n, 3), or (n, 4) with the level last: 8 l plus
    the parity pattern of the cell."""
    c = cells[:, :3] & 1
    level = cells[:, 3] if cells.shape[1] > 3 else 0
    return (c[:, 0] + 2 * c[:, 1] + 4 * c[:, 2] + NCOLOURS * level).astype(np.int64)


def sweep_order(cells, k1, k2, ncolours):
    """(permutation, bounds): the rows of cell indices `cells` (with their level last, if
    any) sorted by (colour, key), which is the sweep order, and the range [bounds[c],
    bounds[c + 1]) colour c occupies after the permutation. Storing rows in this order lets
    every sweep stream through memory. The twin of kernels/colouring.pyx's sweep_order
    (which Levels.order calls)."""
    colour = colours_of(cells)
    if len(colour) and not (0 <= colour.min() and colour.max() < ncolours):
        bad = int(np.flatnonzero((colour < 0) | (colour >= ncolours))[0])
        raise ValueError(f"sweep_order: row {bad} has colour {int(colour[bad])}, not below "
                         f"{ncolours}")
    order = np.lexsort((k2, k1, colour))
    return order, np.searchsorted(colour[order], np.arange(ncolours + 1))


class Levels:
    """The cells of the colouring: level l has cells of side top / 2^l, l < nlevels.

    top: the coarsest cell (at least twice every row's reach), a number or one per axis;
    smallest: the smallest reach a row can have (the smallest body radius plus half the
    margin), which sets how many levels there are. The finest cell, top / 2^(nlevels - 1), is
    also the partition's cell. origin: where the cells start (default 0); periodic: the number
    of coarsest cells per period along each axis (0: not periodic; an even number: the
    parities repeat), so that cell indices wrap."""

    def __init__(self, top, smallest, origin=None, periodic=None):
        self.top = np.broadcast_to(np.asarray(top, float), (3,)).copy()
        self.origin = np.zeros(3) if origin is None else np.asarray(origin, float)
        self.periodic = np.zeros(3, np.int64) if periodic is None else np.asarray(periodic)
        self.nlevels = int(self.level(np.array([float(smallest)]), MAX_LEVELS)[0]) + 1
        self.ncolours = NCOLOURS * self.nlevels
        self.finest = self.top / 2 ** (self.nlevels - 1)
        # row_cells' arguments as the kernel takes them; the last order of a few rows
        self._origin = np.ascontiguousarray(self.origin, float)
        self._periodic = np.ascontiguousarray(self.periodic, np.int64)
        self._last = None

    def level(self, reach, nlevels=None):
        """The finest level whose cell is at least twice each reach (0 for the coarsest)."""
        nlevels = self.nlevels if nlevels is None else nlevels
        level = np.zeros(len(reach), np.int64)
        size = self.top.min()
        for k in range(1, nlevels):
            size = 0.5 * size                     # exact: the cells of every rank agree
            fits = 2.0 * reach <= size
            if not fits.any():
                break
            level[fits] = k
        return level

    def cells(self, points, reach):
        """Each row's cell indices and level, (n, 4)."""
        level = self.level(reach)
        size = self.top[None, :] / (2.0 ** level)[:, None]
        cells = np.floor((points - self.origin) / size).astype(np.int64)
        for a in np.flatnonzero(self.periodic):               # indices modulo the period
            cells[:, a] %= self.periodic[a] << level
        return np.hstack([cells, level[:, None]])

    def row_cells(self, rows, bodies, margin):
        """The cell indices and level (n, 4) of `rows` (with body indices a, b into
        `bodies`): each row's reach is the largest over its bodies of the radius plus half the
        margin and of the distance from the row's point to the centre (to B's image for a
        contact across a periodic boundary: B's point is point + offset); compiled
        (kernels/colouring.pyx), twin `row_cells` below."""
        return _kernel.row_cells(rows.a, rows.b, rows.origin, CONTACT, rows.point, rows.offset,
                                 bodies.x, bodies.radius, float(margin), self.top,
                                 self._origin, self._periodic, self.nlevels)

    def anchor(self, cells):
        """The finest cell that decides the owner of each row: a row of the finest level is
        owned with the cell of its point, a row of a coarser level with the finest cell at
        its cell's centre, so that a coarse cell's rows (which may share bodies) are all
        relaxed by one rank, in their key order."""
        k = (self.nlevels - 1 - cells[:, 3])[:, None]
        return cells[:, :3] * (1 << k) + ((1 << k) >> 1)

    def order(self, cells, k1, k2):
        """(permutation, colours): sweep_order of rows with these cells and keys, colour c's
        rows after the permutation as colours[c] (compiled: kernels/colouring.pyx); for a
        few rows, the last answer again while their cells and keys are the same (read
        only)."""
        if not len(cells):                 # no rows (a ball in flight): every colour empty
            none = np.zeros(0, np.int64)
            return none, [none] * self.ncolours
        last = self._last                  # a mechanism's few rows, the same cells and keys
        if last is not None and same(k1, last[1]) and same(k2, last[2]) \
                and same(cells.ravel(), last[0]):
            return last[3]
        order, bounds = _kernel.sweep_order(cells, k1, k2, self.ncolours)
        rows = np.arange(len(order))
        made = order, Colours([rows[bounds[c]:bounds[c + 1]] for c in range(self.ncolours)],
                              rows)
        if len(order) <= FEW_ROWS:
            self._last = (cells.ravel().copy(), k1.copy(), k2.copy(), made)
        return made


class Colours(list):
    """Each colour's rows (a list of int64 arrays) that come in turn: `whole`, their
    concatenation, is known beforehand."""

    def __init__(self, colours, whole):
        super().__init__(colours)
        self.whole = whole


class ColourSchedule:
    """The order of a pass over the contacts (a Gauss-Seidel sweep, or du = M^-1 H^T R), and
    the exchanges that keep every copy of a body equal.

    colours[c] lists colour c's contacts; on several ranks the cells holding a contact that
    touches a body with copies on other ranks come first (boundary[c] contacts), the rest
    after. start(c) sends the du rows the boundary part changed, finish(c) takes the
    neighbours' before colour c + 1: the transfer, and the wait for a neighbour that is
    behind, overlap the interior part. Cells of one colour share no body and each cell keeps
    its key order, so the iterates are those of the serial order on any number of ranks."""

    def __init__(self, colours, boundary=None, start=None, finish=None, loop=None):
        """loop: a compiled sweep over these colours with the same exchanges (Halo.loop),
        or None."""
        self.colours = colours
        self.boundary = [0] * len(colours) if boundary is None else boundary
        self._start = start
        self._finish = finish
        self.loop = loop
        self._whole = None                # the colours in turn, when nothing is exchanged

    @classmethod
    def single(cls, n):
        """All n contacts as one colour, no exchange (a serial problem without geometry)."""
        return cls([np.arange(n, dtype=np.int64)])

    @property
    def serial(self):
        """No exchanges: the rows of one rank, which are all there are."""
        return self._start is None and self._finish is None

    def whole(self):
        """The colours' rows in turn (int64), the order of a sweep without exchanges."""
        if self._whole is None:
            self._whole = self.colours.whole if isinstance(self.colours, Colours) else \
                np.concatenate(self.colours) if self.colours else np.zeros(0, np.int64)
        return self._whole

    def visit(self, relax):
        """relax(order) for every colour's contacts, exchanging as the class says; without
        exchanges, once over the colours in turn (the same rows in the same order)."""
        if self.serial:
            if self.colours:
                relax(self.whole())
            return
        for c, order in enumerate(self.colours):
            k = self.boundary[c]
            if k:
                relax(order[:k])
            if self._start is not None:
                self._start(c)
            if k < len(order):
                relax(order[k:])
            if self._finish is not None:
                self._finish(c)


def row_cells(a, b, row_origin, imaged, point, offset, x, radius, margin, top, origin,
              periodic, nlevels):
    """The twin of kernels/colouring.pyx's row_cells (Levels.row_cells says what it is)."""
    levels = Levels.__new__(Levels)
    levels.top, levels.origin, levels.periodic, levels.nlevels = top, origin, periodic, nlevels
    reach = np.zeros(len(a))
    image = np.asarray(row_origin) == imaged
    for side in (a, b):
        has = side >= 0
        i = side[has]
        p = point[has]
        if side is b:
            p = p + np.where(image[has, None], offset[has], 0.0)
        d = np.linalg.norm(p - x[i], axis=1)
        reach[has] = np.maximum(reach[has], np.maximum(radius[i] + 0.5 * margin, d))
    return levels.cells(point, reach)


from .._kernels import compiled  # noqa: E402  (after row_cells: its twin)

_modules = compiled("colouring")
_kernel = _modules[0] if _modules is not None else sys.modules[__name__]
