"""Rigid bodies as arrays (structure of arrays: no Python object per body).

Conventions (SI units, stated once here):
- x: position of the mass centre in the world frame [m];
- q: orientation, unit quaternion (w, x, y, z) mapping body-frame vectors to the world frame;
- v: linear velocity of the mass centre, world frame [m/s];
- w: angular velocity in the world (spatial) frame [rad/s];
- mass [kg]; inertia: principal moments in the body frame [kg m^2] (body axes are principal);
- force, torque: constant applied loads in the world frame [N], [N m] (gravity is separate);
- shape: the shape kind (parsolve.shapes' KIND codes), template: its parameters' key (a box's half extents, a polyhedron's vertices and faces) in
  shapes.LIBRARY, so that every row has the same width.
Rows [0, n_owned) are owned by this rank; rows beyond are read-only ghost copies.
"""
import numpy as np

from .table import Table

FIELDS = {  # name: (trailing shape, dtype)
    "gid": ((), np.int64),
    "shape": ((), np.int8),
    "material": ((), np.int32),
    "radius": ((), float),       # sphere radius; for a box or polyhedron, its bounding radius
    "template": ((), np.int64),  # shape template key (shapes.LIBRARY; -1: none, a sphere)
    "mass": ((), float),
    "inertia": ((3,), float),
    "x": ((3,), float),
    "q": ((4,), float),
    "v": ((3,), float),
    "w": ((3,), float),
    "force": ((3,), float),
    "torque": ((3,), float),
}
STATE = ("x", "q", "v", "w")


class BodySet(Table):
    """The bodies one rank holds; each field of FIELDS is an attribute array of length n.
    Every column is persistent: a body's row is its whole state (take() rows are owned)."""
    FIELDS = FIELDS
    PERSISTENT = tuple(FIELDS)

    def __init__(self, n=0, n_owned=None, **arrays):
        super().__init__(n, **arrays)
        self.n_owned = len(self) if n_owned is None else n_owned

    def _adopt(self, source):
        self.n_owned = len(self)             # rows taken or concatenated are owned

    def sorted_by_gid(self):
        return self.take(np.argsort(self.gid, kind="stable"))

    def inverse_inertia_world(self):
        """(n, 3, 3) world-frame inverse inertia R diag(1/J) R^T at the current orientation."""
        from ..dynamics.rotation import quat_to_matrix

        Rm = quat_to_matrix(self.q)
        return np.einsum("nij,nj,nkj->nik", Rm, 1.0 / self.inertia, Rm)

    def inertia_world(self):
        from ..dynamics.rotation import quat_to_matrix

        Rm = quat_to_matrix(self.q)
        return np.einsum("nij,nj,nkj->nik", Rm, self.inertia, Rm)

    def kinetic_energy(self):
        Jw = self.inertia_world()
        return 0.5 * (self.mass * np.einsum("ni,ni->n", self.v, self.v)
                      + np.einsum("ni,nij,nj->n", self.w, Jw, self.w))
