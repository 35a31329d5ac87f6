"""A deterministic colouring of the contacts for Gauss-Seidel: by the parity of their cell.

Space is cut into cubic cells of side at least the largest body diameter (plus the margin),
from a fixed origin. A contact belongs to the cell that holds its point; its colour is the
parity pattern of the cell's indices (8 colours). Two contacts of one colour in different
cells are more than a cell apart, so no body touches both: within a colour, cells can be
relaxed in any order or at once on different ranks. Inside a cell the contacts are visited in
key order. Sweeping colours 0..7 in turn thus gives one Gauss-Seidel order that depends on
the geometry and the global ids alone, never on the partition: 1 and P ranks iterate alike.
"""
import numpy as np

NCOLOURS = 8


def cells_of(points, cell):
    return np.floor(points / cell).astype(np.int64)


def cell_ids(cells):
    """One integer per row of cell indices (n, 3), equal exactly when the cells are equal."""
    order = np.lexsort(cells.T)
    s = cells[order]
    new = np.ones(len(s), bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    ids = np.empty(len(s), np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids


def colours_of(cells):
    """The colour of each row of cell indices (n, 3): the parity pattern of the cell."""
    c = cells & 1
    return (c[:, 0] + 2 * c[:, 1] + 4 * c[:, 2]).astype(np.int64)


def sweep_order(colour, k1, k2):
    """(permutation, colours): the contacts sorted by (colour, key), which is the sweep order,
    and for each colour the index range it occupies after the permutation. Storing contacts
    in this order lets every sweep stream through memory."""
    order = np.lexsort((k2, k1, colour))
    bounds = np.searchsorted(colour[order], np.arange(NCOLOURS + 1))
    return order, [np.arange(bounds[c], bounds[c + 1], dtype=np.int64)
                   for c in range(NCOLOURS)]


class ColourSchedule:
    """The order of a pass over the contacts (a Gauss-Seidel sweep, or du = M^-1 H^T R), and
    the exchanges that keep every copy of a body equal.

    colours[c] lists colour c's contacts; on several ranks the cells holding a contact that
    touches a body with copies on other ranks come first (boundary[c] contacts), the rest
    after. start(c) sends the du rows the boundary part changed, finish(c) takes the
    neighbours' before colour c + 1: the transfer, and the wait for a neighbour that is
    behind, overlap the interior part. Cells of one colour share no body and each cell keeps
    its key order, so the iterates are those of the serial order on any number of ranks."""

    def __init__(self, colours, boundary=None, start=None, finish=None):
        self.colours = colours
        self.boundary = [0] * len(colours) if boundary is None else boundary
        self._start = start
        self._finish = finish

    @classmethod
    def single(cls, n):
        """All n contacts as one colour, no exchange (a serial problem without geometry)."""
        return cls([np.arange(n, dtype=np.int64)])

    def visit(self, relax):
        """relax(order) for every colour's contacts, exchanging as the class says."""
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
