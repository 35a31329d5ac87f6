"""Fixed obstacles: placed shapes that never move and have no mass (infinite inertia).

They are replicated on every rank, never partitioned and never migrate, and they do not size
the broad-phase cells (a 10 m wall beside 1 mm grains). Row k is an obstacle of any shape kind
(shapes/): a half-space {y : (y - point) . normal >= 0}, whose normal points into the region
where bodies live, a box with centre `point`, orientation q and half extents (its template in
shapes.LIBRARY), a sphere with centre `point` and `radius`, a convex polyhedron (centre,
orientation, template) or a triangle mesh (its frame's origin and orientation, template:
shapes/mesh.py). A contact with obstacle k has b = -1 and obstacle = k; its normal
points from the obstacle to the body. Box walls are half-spaces facing inwards.
"""
import numpy as np

from .. import shapes
from ..tables.checks import finite, positive, unit


class Obstacles:
    """The obstacles as columns: shape, template, point, normal, q, radius, material, names."""

    def __init__(self):
        self.shape = np.zeros(0, np.int8)
        self.template = np.zeros(0, np.int64)
        self.point = np.zeros((0, 3))
        self.normal = np.zeros((0, 3))
        self.q = np.zeros((0, 4))
        self.radius = np.zeros(0)
        self.material = np.zeros(0, np.int32)
        self.names = []
        # the rows a motion places elsewhere than here (elements/drivers.py sets it on its
        # copy at time t): the frames draw them at their pose
        self.moving = np.zeros(0, np.int64)

    def __len__(self):
        return len(self.point)

    @property
    def x(self):
        """The position of each obstacle (a plane's point, a box's centre): placed shapes."""
        return self.point

    def add_half_space(self, point, normal, material, name):
        p = finite(f"half-space {name!r}: point", point, (3,))
        n = unit(f"half-space {name!r}: normal", normal)
        self._add(shapes.PLANE, shapes.NONE, p, n, (1.0, 0.0, 0.0, 0.0), np.inf, material, name)

    def add_box(self, center, half_extents, q, material, name):
        """A fixed box; q a unit quaternion (checked by the caller)."""
        c = finite(f"fixed box {name!r}: center", center, (3,))
        half = shapes.box.check(f"fixed box {name!r}", half_extents)
        t = shapes.LIBRARY.add(shapes.BOX, half)
        self._add(shapes.BOX, t, c, np.zeros(3), q,
                  float(shapes.box.bounding_radius(half[None, :])[0]), material, name)

    def add_sphere(self, center, radius, material, name):
        c = finite(f"fixed sphere {name!r}: center", center, (3,))
        r = float(positive(f"fixed sphere {name!r}: radius", radius))
        self._add(shapes.SPHERE, shapes.NONE, c, np.zeros(3), (1.0, 0.0, 0.0, 0.0), r,
                  material, name)

    def _add(self, kind, template, point, normal, q, radius, material, name):
        self.shape = np.append(self.shape, np.int8(kind))
        self.template = np.append(self.template, np.int64(template))
        self.point = np.vstack([self.point, point])
        self.normal = np.vstack([self.normal, normal])
        self.q = np.vstack([self.q, np.asarray(q, float)])
        self.radius = np.append(self.radius, float(radius))
        self.material = np.append(self.material, np.int32(material))
        self.names.append(name)

    def distance(self, k, x):
        """Distance of points x (n, 3) from obstacle k (a plane's is signed): a body is a
        candidate when it is within its bounding radius plus the margin."""
        return shapes.KINDS[int(self.shape[k])].distance(self, k, x)
