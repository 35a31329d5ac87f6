"""The box (cuboid): half extents (a, b, c) along its body axes, centre at the mass centre.

Its template is the half extents. Vertex k has the signs of bits (4, 2, 1) of k along the body
axes (x, y, z); it is also the vertex's feature id in box contacts."""
import numpy as np

from ..dynamics.rotation import quat_to_matrix
from ..errors import InputError

KIND = 1
NAME = "box"
TEMPLATE = 3             # template width: the half extents
# the output cells: VTK's hexahedron lists the bottom face counter-clockwise, then the top
CELLS = {"group": "boxes", "topology": "Hexahedron", "vtk_type": 12, "points": 8,
         "order": (0, 4, 6, 2, 1, 5, 7, 3)}
POLYGONS = None
CORNERS = np.array([(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def hull(key):
    """The box of template `key` as a convex polyhedron (polyhedron.Hull, parsed once): the
    polyhedra's contacts meet a box as one."""
    from . import LIBRARY, polyhedron

    half = LIBRARY.params(KIND, [key])[0]

    def make(_):
        corners = CORNERS * half
        faces, _ = polyhedron.convex_hull("box", corners)
        return polyhedron.Hull(corners, faces)
    return LIBRARY.hull(KIND, key, make)


def check(what, half):
    """Half extents as (3,) floats, each finite and > 0; else InputError naming `what`."""
    h = np.asarray(half, float)
    if h.shape != (3,):
        raise InputError(f"{what}: half_extents must be 3 numbers, got {half!r}")
    bad = ~np.isfinite(h) | (h <= 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{what}: half_extents[{k}] must be a finite number > 0, got {h[k]}")
    return h


def volume(half):
    """Volumes of boxes with half extents (n, 3)."""
    return 8.0 * np.prod(half, axis=1)


def inertia(mass, half):
    """(n, 3) principal moments of uniform boxes about their body axes: m (b^2 + c^2) / 3, ..."""
    a2 = half ** 2
    return (mass / 3.0)[:, None] * np.stack([a2[:, 1] + a2[:, 2], a2[:, 0] + a2[:, 2],
                                             a2[:, 0] + a2[:, 1]], axis=1)


def bounding_radius(half):
    return np.linalg.norm(half, axis=1)


def vertices(x, R, half):
    """World positions (n, 8, 3) of the vertices of boxes at x (n, 3), rotation matrices R
    (n, 3, 3), half extents (n, 3)."""
    corners = CORNERS[None, :, :] * half[:, None, :]                  # (n, 8, 3) body frame
    return x[:, None, :] + np.einsum("nij,nvj->nvi", R, corners)


def extent(placed, rows, R):
    """World half extents (n, 3) of the axis-aligned boxes around the boxes `rows` (R their
    rotation matrices): |R| half."""
    return np.einsum("nij,nj->ni", np.abs(R), half_extents(placed, rows))


def distance(placed, k, x):
    """Distance of points x (n, 3) from box k of a placed-shape table (0 inside it)."""
    R = quat_to_matrix(placed.q[k:k + 1])[0]
    local = (x - placed.x[k]) @ R
    half = half_extents(placed, [k])[0]
    return np.linalg.norm(local - np.clip(local, -half, half), axis=1)


def half_extents(placed, rows):
    """(n, 3) half extents of the boxes `rows` of a placed-shape table (bodies or obstacles),
    from their templates."""
    from . import LIBRARY

    return LIBRARY.params(KIND, placed.template[rows])


def cell_points(placed, rows, R):
    """The points of the output cells (n, 8, 3) of the boxes `rows` of a placed-shape table,
    R their rotation matrices (results and ParaView: CELLS)."""
    return vertices(placed.x[rows], R, half_extents(placed, rows))
