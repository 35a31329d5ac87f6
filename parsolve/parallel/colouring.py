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


def colours_of(points, cell):
    c = cells_of(points, cell) & 1
    return (c[:, 0] + 2 * c[:, 1] + 4 * c[:, 2]).astype(np.int64)


def sweep_order(colour, k1, k2):
    """(permutation, colours): the contacts sorted by (colour, key), which is the sweep order,
    and for each colour the index range it occupies after the permutation. Storing contacts
    in this order lets every sweep stream through memory."""
    order = np.lexsort((k2, k1, colour))
    bounds = np.searchsorted(colour[order], np.arange(NCOLOURS + 1))
    return order, [np.arange(bounds[c], bounds[c + 1], dtype=np.int64)
                   for c in range(NCOLOURS)]
