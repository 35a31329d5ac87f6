"""The sphere: a body's `radius` is all its geometry (no template), centre at the mass centre."""
import numpy as np

from ..platform import libm

KIND = 0
NAME = "sphere"
TEMPLATE = None          # a sphere needs no template: its radius column is its shape
CELLS = None             # drawn as a glyph on its point (ParaView: Glyph filter, scale by radius)
POLYGONS = None


def volume(radius):
    return (4.0 / 3.0) * np.pi * libm.power(radius, 3.0)


def inertia(mass, radius):
    """Moment of inertia of a uniform ball about any axis through its centre."""
    return 0.4 * mass * radius * radius


def extent(placed, rows, R):
    """World half extents (n, 3) of the axis-aligned boxes around the spheres `rows`."""
    return np.repeat(placed.radius[rows][:, None], 3, axis=1)


def distance(placed, k, x):
    """Distance of points x (n, 3) from sphere k of a placed-shape table (< 0 inside)."""
    return np.linalg.norm(x - placed.x[k], axis=1) - placed.radius[k]
