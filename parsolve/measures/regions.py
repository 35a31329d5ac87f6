"""Regions a measure is taken over: a box, a ball, or every cell of a structured grid (a slab
is a grid one cell across). A body belongs to the cell that holds its centre (cells are
half-open, [lo, hi), so a grid counts each body once); packing fractions of spheres use the
exact overlap volumes of parsolve.measures.overlap instead.

Text form (the command line): box:X0,Y0,Z0,X1,Y1,Z1  ball:X,Y,Z,R
grid:X0,Y0,Z0,X1,Y1,Z1,NX,NY,NZ  slabs:X0,Y0,Z0,X1,Y1,Z1,AXIS,N (AXIS x, y or z).
"""
import numpy as np

from ..errors import InputError
from .. import shapes
from . import overlap

AXES = "xyz"


class Grid:
    """Cells of the box [lo, hi] cut into shape = (nx, ny, nz) equal boxes, numbered with x
    fastest (cell = i + nx (j + ny k)); a Box is the grid of one cell."""
    kind = "grid"

    def __init__(self, lo, hi, shape=(1, 1, 1), what="grid"):
        self.lo = np.asarray(lo, float).reshape(3)
        self.hi = np.asarray(hi, float).reshape(3)
        self.shape = tuple(int(n) for n in np.asarray(shape).reshape(3))
        if not (np.all(np.isfinite(self.lo)) and np.all(np.isfinite(self.hi))
                and np.all(self.hi > self.lo)):
            raise InputError(f"{what}: needs lo < hi on every axis, got {list(self.lo)}, "
                             f"{list(self.hi)}")
        if min(self.shape) < 1:
            raise InputError(f"{what}: needs at least one cell per axis, got {self.shape}")
        self.spacing = (self.hi - self.lo) / np.array(self.shape)

    @property
    def ncells(self):
        return int(np.prod(self.shape))

    def cell_bounds(self, cells=None):
        """(lo, hi) of the cells (default: all), each (n, 3)."""
        cells = np.arange(self.ncells) if cells is None else np.asarray(cells)
        ijk = np.stack(np.unravel_index(cells, self.shape, order="F"), axis=1)
        lo = self.lo + ijk * self.spacing
        return lo, lo + self.spacing

    @property
    def volume(self):
        return np.full(self.ncells, float(np.prod(self.spacing)))

    def centres(self):
        lo, hi = self.cell_bounds()
        return 0.5 * (lo + hi)

    def locate(self, x):
        """The cell holding each point of x (n, 3), -1 outside."""
        x = np.asarray(x, float).reshape(-1, 3)
        ijk = np.floor((x - self.lo) / self.spacing).astype(np.int64)
        ok = np.all((ijk >= 0) & (ijk < np.array(self.shape)) & np.isfinite(x), axis=1)
        ijk = np.where(ok[:, None], ijk, 0)
        return np.where(ok, np.ravel_multi_index(ijk.T, self.shape, order="F"), -1)

    def touching(self, x, reach):
        """(row, cell) of every cell the ball of radius reach (n,) about x (n, 3) can meet."""
        x = np.asarray(x, float).reshape(-1, 3)
        reach = np.asarray(reach, float).reshape(-1)
        n = np.array(self.shape)
        first = np.clip(np.floor((x - reach[:, None] - self.lo) / self.spacing), 0, n - 1)
        last = np.clip(np.floor((x + reach[:, None] - self.lo) / self.spacing), 0, n - 1)
        away = np.any((x + reach[:, None] < self.lo) | (x - reach[:, None] >= self.hi), axis=1)
        first, last = first.astype(np.int64), last.astype(np.int64)
        span = np.where(away[:, None], 0, last - first + 1)
        rows, cells = [], []
        for offset in np.ndindex(*np.maximum(span.max(axis=0, initial=0), 1)):
            ok = np.all(np.array(offset) < span, axis=1)
            r = np.flatnonzero(ok)
            ijk = first[r] + np.array(offset)
            rows.append(r)
            cells.append(np.ravel_multi_index(ijk.T, self.shape, order="F"))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        rows, cells = np.concatenate(rows), np.concatenate(cells)
        o = np.lexsort((cells, rows))
        return rows[o], cells[o]

    def sphere_volumes(self, x, r):
        """(row, cell, overlap volume) of the spheres (x, r) with the cells, exact."""
        rows, cells = self.touching(x, r)
        lo, hi = self.cell_bounds(cells)
        vol = overlap.sphere_box(np.asarray(x)[rows], np.asarray(r)[rows], lo, hi)
        keep = vol > 0
        return rows[keep], cells[keep], vol[keep]

    def straddling(self, x, reach):
        """(row, cell) of the balls (x, reach) that cross a cell's boundary."""
        rows, cells = self.touching(x, reach)
        lo, hi = self.cell_bounds(cells)
        xr, rr = np.asarray(x)[rows], np.asarray(reach)[rows][:, None]
        inside = np.all((xr - rr >= lo) & (xr + rr <= hi), axis=1)
        return rows[~inside], cells[~inside]

    def describe(self):
        return {"kind": self.kind, "lo": self.lo, "hi": self.hi, "shape": np.array(self.shape)}


class Box(Grid):
    """The axis-aligned box [lo, hi): one cell."""
    kind = "box"

    def __init__(self, lo, hi):
        super().__init__(lo, hi, (1, 1, 1), "box")


def slabs(lo, hi, axis, n):
    """The box [lo, hi] cut into n slabs across `axis` (0, 1, 2 or "x", "y", "z")."""
    axis = AXES.index(axis) if isinstance(axis, str) and axis in AXES else axis
    if axis not in (0, 1, 2):
        raise InputError(f"slabs: axis must be x, y or z, got {axis!r}")
    shape = [1, 1, 1]
    shape[axis] = int(n)
    return Grid(lo, hi, shape, "slabs")


class Ball:
    """The ball of `radius` about `centre`: one cell."""
    kind = "ball"
    ncells = 1

    def __init__(self, centre, radius):
        self.centre = np.asarray(centre, float).reshape(3)
        self.radius = float(radius)
        if not (np.all(np.isfinite(self.centre)) and self.radius > 0):
            raise InputError(f"ball: needs a finite centre and a radius > 0, got "
                             f"{list(self.centre)}, {radius}")

    @property
    def volume(self):
        return np.array([shapes.sphere.volume(self.radius)])

    def centres(self):
        return self.centre[None, :]

    def locate(self, x):
        d = np.linalg.norm(np.asarray(x, float).reshape(-1, 3) - self.centre, axis=1)
        return np.where(d < self.radius, 0, -1)

    def sphere_volumes(self, x, r):
        vol = overlap.sphere_ball(x, r, self.centre, self.radius)
        rows = np.flatnonzero(vol > 0)
        return rows, np.zeros(len(rows), np.int64), vol[rows]

    def straddling(self, x, reach):
        d = np.linalg.norm(np.asarray(x, float).reshape(-1, 3) - self.centre, axis=1)
        rows = np.flatnonzero(np.abs(d - self.radius) < reach)
        return rows, np.zeros(len(rows), np.int64)

    def describe(self):
        return {"kind": self.kind, "centre": self.centre, "radius": self.radius}


def parse(text):
    """A region from its text form (see the module's docstring)."""
    if not isinstance(text, str):
        return text
    kind, _, rest = text.partition(":")
    try:
        parts = rest.split(",")
        if kind == "slabs":
            v = [float(p) for p in parts[:6]]
            return slabs(v[:3], v[3:6], parts[6].strip(), int(parts[7]))
        v = [float(p) for p in parts]
        if kind == "box" and len(v) == 6:
            return Box(v[:3], v[3:])
        if kind == "ball" and len(v) == 4:
            return Ball(v[:3], v[3])
        if kind == "grid" and len(v) == 9:
            return Grid(v[:3], v[3:6], [int(n) for n in v[6:]])
    except (ValueError, IndexError):
        pass
    raise InputError(f"region {text!r}: expected box:X0,Y0,Z0,X1,Y1,Z1, ball:X,Y,Z,R, "
                     "grid:X0,Y0,Z0,X1,Y1,Z1,NX,NY,NZ or slabs:X0,Y0,Z0,X1,Y1,Z1,AXIS,N")
