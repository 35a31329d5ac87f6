"""Shapes: one module per kind, each stating its geometry once.

A shape module has KIND (the code bodies and obstacles carry in their `shape` column), NAME,
TEMPLATE (the width of its template parameters, or None when the kind needs no template: a
sphere is its radius, a plane its point and normal), CELLS (how results draw it: an XDMF/VTK
cell, or None for a point glyph or nothing), POLYGONS (faces drawn as polygons), POINTS
(parts drawn as points with a radius: a compound's spheres) and its mass properties and
vertices as functions.
Narrow-phase pair functions live in contact/narrow.py, registered per pair of kinds.

A placed shape (a body row or an obstacle row) is a kind, a template key into LIBRARY (-1:
none), a position x and an orientation q (w, x, y, z; body -> world) and a bounding radius
(the broad phase, the partition and the guards use it).
"""
import hashlib

import numpy as np

from ..errors import InputError
from . import box, compound, mesh, plane, polyhedron, sphere

SPHERE, BOX, PLANE, POLYHEDRON, MESH, COMPOUND = sphere.KIND, box.KIND, plane.KIND, \
    polyhedron.KIND, mesh.KIND, compound.KIND
KINDS = {m.KIND: m for m in (sphere, box, plane, polyhedron, mesh, compound)}
NAMES = {k: m.NAME for k, m in KINDS.items()}
NONE = -1                 # the template key of a placed shape whose kind needs none
# kinds the model's fingerprint hashes by their parameters (radius, half extents), every
# other kind by its template key (fingerprints from before templates stay as they were)
BY_PARAMETERS = (SPHERE, BOX)


def extents(placed, rows):
    """World half extents (n, 3) of the axis-aligned boxes about the centres of the placed
    shapes `rows` (the broad phase's look for a large body is this box, not its sphere)."""
    from ..dynamics.rotation import quat_to_matrix

    rows = np.asarray(rows, np.int64)
    out = np.zeros((len(rows), 3))
    kinds = placed.shape[rows]
    for kind in np.unique(kinds):
        at = np.flatnonzero(kinds == kind)
        out[at] = KINDS[int(kind)].extent(placed, rows[at], quat_to_matrix(placed.q[rows[at]]))
    return out


def name(kind):
    """The name of a shape kind (for messages)."""
    return NAMES.get(int(kind), f"shape kind {int(kind)}")


class ShapeLibrary:
    """Shape templates (a box's half extents; a polyhedron's vertices and faces), so
    that body and obstacle rows stay fixed-width and migrate as they are.

    A template's key is a hash of its kind and parameters (63 bits of SHA-256), not an index:
    every rank, each running the model script, and every restart give a shape the same key
    without communication, a checkpoint's rows find their templates again, and equal shapes
    share one template (10^6 equal bricks cost one row; 10^6 different ones cost 10^6 on every
    rank). Keys are saved in body rows and hashed into the model's fingerprint."""

    def __init__(self):
        self._params = {}         # key -> (kind, parameters)
        self._dense = {}          # kind -> (sorted keys, (templates, width) parameters)
        self._parsed = {}         # key -> a variable-width template parsed (a Hull)

    def __len__(self):
        return len(self._params)

    def add(self, kind, params):
        """The key of the template `params` of shape `kind` (added if new)."""
        p = np.ascontiguousarray(params, dtype=float)
        digest = hashlib.sha256(np.int64(kind).tobytes() + p.tobytes()).digest()
        key = int.from_bytes(digest[:8], "little") & (2 ** 63 - 1)
        if key not in self._params:
            self._params[key] = (int(kind), p)
            self._dense.pop(int(kind), None)
        return key

    def template(self, kind, key):
        """The parameters of one template (any width)."""
        got = self._params.get(int(key))
        if got is None or got[0] != kind:
            raise InputError(f"no {name(kind)} template with key {int(key)} (templates are "
                             "made by the model script, on every rank)")
        return got[1]

    def hull(self, kind, key, parse):
        """parse(parameters) of template `key`, made once (a polyhedron's Hull)."""
        key = int(key)
        if key not in self._parsed:
            self._parsed[key] = parse(self.template(kind, key))
        return self._parsed[key]

    def params(self, kind, keys):
        """(n, width) parameters of the templates `keys` of a fixed-width kind."""
        if kind not in self._dense:
            items = sorted((k, p) for k, (kk, p) in self._params.items() if kk == kind)
            self._dense[kind] = (np.array([k for k, _ in items], np.int64),
                                 np.array([p for _, p in items], float).reshape(
                                     len(items), KINDS[kind].TEMPLATE))
        known, table = self._dense[kind]
        keys = np.asarray(keys, np.int64)
        at = np.minimum(np.searchsorted(known, keys), max(len(known) - 1, 0))
        if len(keys) and (len(known) == 0 or np.any(known[at] != keys)):
            bad = keys[known[at] != keys][0] if len(known) else keys[0]
            raise InputError(f"no {name(kind)} template with key {int(bad)} (templates are "
                             "made by the model script, on every rank)")
        return table[at]


LIBRARY = ShapeLibrary()     # process-wide: keys do not depend on which model made them
