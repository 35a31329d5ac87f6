"""Shapes: one module per kind, each stating its geometry once.

A shape module has KIND (the code bodies and obstacles carry in their `shape` column), NAME,
TEMPLATE (the width of its template parameters, or None when the kind needs no template: a
sphere is its radius, a plane its point and normal), CELLS (how results draw it: an XDMF/VTK
cell, or None for a point glyph or nothing) and its mass properties and vertices as functions.
Narrow-phase pair functions live in contact/narrow.py, registered per pair of kinds.

A placed shape (a body row or an obstacle row) is a kind, a template index into the model's
ShapeLibrary (-1: none), a position x and an orientation q (w, x, y, z; body -> world) and a
bounding radius (the broad phase, the partition and the guards use it).
"""
import hashlib

import numpy as np

from . import box, plane, sphere

SPHERE, BOX, PLANE = sphere.KIND, box.KIND, plane.KIND
KINDS = {m.KIND: m for m in (sphere, box, plane)}
NAMES = {k: m.NAME for k, m in KINDS.items()}


def name(kind):
    """The name of a shape kind (for messages)."""
    return NAMES.get(int(kind), f"shape kind {int(kind)}")


class ShapeLibrary:
    """Shape templates, replicated on every rank (a box's half extents; later a polyhedron's
    vertices and faces), so body and obstacle rows stay fixed-width and migrate as they are.
    Equal parameters of one kind share a template: 10^6 equal bricks cost one row."""

    def __init__(self):
        self.kind = []            # template t's shape kind
        self.params = []          # template t's parameters (a float array)
        self._index = {}          # (kind, parameter bytes) -> t
        self._dense = {}          # kind -> (templates, width) array, rebuilt after an add

    def __len__(self):
        return len(self.kind)

    def add(self, kind, params):
        """The template index of `params` for `kind` (added if new)."""
        p = np.ascontiguousarray(params, dtype=float)
        key = (int(kind), p.tobytes())
        if key not in self._index:
            self._index[key] = len(self.kind)
            self.kind.append(int(kind))
            self.params.append(p)
            self._dense.clear()
        return self._index[key]

    def table(self, kind):
        """(templates, width) parameters of a fixed-width kind, indexable by template index
        (rows of other kinds are NaN)."""
        if kind not in self._dense:
            width = KINDS[kind].TEMPLATE
            t = np.full((len(self.kind), width), np.nan)
            for i, (k, p) in enumerate(zip(self.kind, self.params)):
                if k == kind:
                    t[i] = p
            self._dense[kind] = t
        return self._dense[kind]

    def digest(self):
        """A hash of every template (kinds and parameters, in order): joins the model's
        fingerprint, so a restart never continues with other shapes."""
        h = hashlib.sha256()
        for k, p in zip(self.kind, self.params):
            h.update(np.int64(k).tobytes())
            h.update(p.tobytes())
        return h.hexdigest()
