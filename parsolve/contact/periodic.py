"""Periodic boundaries: space repeats along some axes with period L (pe's dense-packing and
granular-gas benchmarks, chute and shear flows).

A body's centre stays in [lo, lo + L) along a periodic axis (wrap: after each step). Near the
boundary it has images, copies shifted by +-L (and by both shifts at an edge or a corner), which
exist only for detection: a contact between body A and an image of body B is the contact of A
and B across the boundary. Each such pair is found twice (A with B's image, A's image with B);
the row kept is the one whose body A (the body of lower id, contact.detect) is itself, not an
image, so the pair is found once, with its point beside A and bits that do not depend on the
rank that finds it. B's lever arm is taken from its image: the row's offset is minus the image
shift, which the assembly adds to B's point (as for a joint's second point). Every rank builds
the images of the bodies it holds; the parallel layer holds a body wherever it or one of its
images is within reach, and its cells, partition and colouring repeat with the period, which
must therefore be an even number of the coarsest colouring cells (the cells are stretched to
fit).
"""
import itertools

import numpy as np

from ..errors import InputError
from ..tables.checks import finite

AXES = "xyz"


class Period:
    """lo[a], length[a] for the periodic axes a (length 0: not periodic)."""

    def __init__(self, spec):
        self.lo = np.zeros(3)
        self.length = np.zeros(3)
        for name, (lo, hi) in spec.items():
            if name not in AXES:
                raise InputError(f"periodic: axis {name!r} is not one of x, y, z")
            lo, hi = finite(f"periodic {name}: lower", lo), finite(f"periodic {name}: upper", hi)
            if not hi > lo:
                raise InputError(f"periodic {name}: upper {hi} must exceed lower {lo}")
            a = AXES.index(name)
            self.lo[a], self.length[a] = lo, hi - lo
        self.axes = np.flatnonzero(self.length > 0)

    def __bool__(self):
        return len(self.axes) > 0

    def origin(self):
        """The origin of the cells: lo along the periodic axes, 0 along the others."""
        return np.where(self.length > 0, self.lo, 0.0)

    def fit(self, cell):
        """The cell per axis (3,): `cell` along the others, along a periodic axis the smallest
        cell >= `cell` of which the period is an even multiple (the colouring's parity then
        repeats with the period). InputError if a period is shorter than two cells."""
        out = np.full(3, float(cell))
        for a in self.axes:
            pairs = int(self.length[a] // (2.0 * cell))
            if pairs < 1:
                raise InputError(
                    f"periodic {AXES[a]}: the period {self.length[a]:g} m is shorter than two "
                    f"cells of {cell:g} m (the largest body's diameter, or a joint's reach, "
                    "plus the margin): a body would touch its own image")
            out[a] = self.length[a] / (2 * pairs)
        return out

    def cells(self, cell):
        """The number of cells of side cell[a] per period along each axis (0: not
        periodic)."""
        return np.where(self.length > 0, np.rint(self.length / cell), 0).astype(np.int64)

    def wrap(self, x):
        """The shifts (n, 3) that bring the centres x back into [lo, lo + L): multiples of L."""
        shift = np.zeros_like(x)
        for a in self.axes:
            shift[:, a] = -np.floor((x[:, a] - self.lo[a]) / self.length[a]) * self.length[a]
        return shift

    def images(self, x, reach):
        """(body index, shift (m, 3)) of the images of the bodies at x within `reach` of a
        boundary: one per nonempty set of the periodic axes along which it is that near,
        shifted by the sum of their periods (towards the other side)."""
        s = np.zeros_like(x)
        for a in self.axes:
            low = x[:, a] - self.lo[a] < reach
            high = self.lo[a] + self.length[a] - x[:, a] < reach
            s[:, a] = np.where(low, self.length[a], np.where(high, -self.length[a], 0.0))
        index, shifts = [np.zeros(0, np.int64)], [np.zeros((0, 3))]
        for k in range(1, len(self.axes) + 1):
            for subset in itertools.combinations(self.axes, k):
                sub = list(subset)
                rows = np.flatnonzero(np.all(s[:, sub] != 0.0, axis=1))
                shift = np.zeros((len(rows), 3))
                shift[:, sub] = s[rows][:, sub]
                index.append(rows)
                shifts.append(shift)
        index, shifts = np.concatenate(index), np.concatenate(shifts)
        o = np.lexsort((shifts[:, 2], shifts[:, 1], shifts[:, 0], index))
        return index[o], shifts[o]
