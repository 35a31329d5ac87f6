"""Detection: the broad phase's candidate pairs of bodies, and the bodies near each obstacle,
through the narrow phase's pair functions (narrow.py: sphere-sphere, sphere-box, box-box in
boxbox.py, sphere-plane, box-plane; a fixed box meets bodies through the box functions). A
contact is active when its gap <= margin. A contact whose pair of materials resists rolling or
spinning gets its companion row next to it (laws/rolling.py)."""
import numpy as np

from .. import shapes
from ..dynamics.rotation import quat_to_matrix
from ..laws import coulomb, rolling
from ..shapes import box
from ..tables.interactions import Interactions
from ..tables.keys import ROLLING, ROTATION, contact_key, rolling_key
from .broadphase import candidate_pairs
from .frames import frames_from_normals
from .narrow import body_pairs, obstacle_pairs


def detect(bodies, obstacles, mu_table, e_table, margin, rolling_tables=None, skin=None,
           c_table=None):
    """All active contacts among the bodies held and against the obstacles, canonical order;
    rolling_tables: (mu_r, mu_s) per pair of materials (SurfaceMaterials.rolling_tables), or
    None: the rolling rows of the contacts whose pair has either. skin: a broadphase.Skin
    that keeps the candidate pairs over steps (the same pairs), or None. c_table: the
    contacts' normal compliance per pair of materials (SurfaceMaterials.compliance_table), or
    None: rigid contacts."""
    if len(bodies) < 2 and not len(obstacles):     # no pair, no obstacle: nothing to meet
        return Interactions.empty()
    parts = []
    extents = lambda rows: shapes.extents(bodies, rows)     # noqa: E731
    pairs = candidate_pairs(bodies.x, bodies.radius, margin, extents) if skin is None else \
        skin.pairs(bodies.x, bodies.radius, bodies.gid, margin, extents)
    if len(pairs):
        # A is the body of lower id (owned rows and ghosts are each sorted, not together)
        swap = bodies.gid[pairs[:, 0]] > bodies.gid[pairs[:, 1]]
        i = np.where(swap, pairs[:, 1], pairs[:, 0])
        j = np.where(swap, pairs[:, 0], pairs[:, 1])
        for c in body_pairs(bodies, i, j, margin):
            if c is not None:
                c["obstacle"] = np.full(len(c["a"]), -1, np.int64)
                parts.append(c)
    for k in range(len(obstacles)):
        dist = obstacles.distance(k, bodies.x) - bodies.radius
        near = np.nonzero(dist <= margin)[0]
        for c in obstacle_pairs(bodies, near, obstacles, k, margin):
            if c is not None:
                c["obstacle"], c["b"] = c["b"], np.full(len(c["a"]), -1, np.int64)
                parts.append(c)
    parts = [c for c in parts if len(c["a"])]
    if not parts:
        return Interactions.empty()
    c = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    keep = c["gap"] <= margin
    c = {f: v[keep] for f, v in c.items()}
    a, b, obst = c["a"], c["b"], c["obstacle"]
    mat_b = bodies.material[np.maximum(b, 0)]          # (a model may have no obstacles)
    mat_b[obst >= 0] = obstacles.material[obst[obst >= 0]]
    mat_a = bodies.material[a]
    b_gid = np.where(b >= 0, bodies.gid[np.maximum(b, 0)], -1)
    cs = Interactions(a=a, b=b, obstacle=obst, k1=bodies.gid[a],
                      k2=contact_key(b_gid, obst, c["feature"]), point=c["point"],
                      frame=frames_from_normals(c["normal"]), gap=c["gap"],
                      **coulomb.rows(mu_table[mat_a, mat_b], e_table[mat_a, mat_b],
                                     0.0 if c_table is None else c_table[mat_a, mat_b]))
    if rolling_tables is not None:
        mu_r, mu_s = (table[mat_a, mat_b] for table in rolling_tables)
        resist = np.flatnonzero((mu_r > 0) | (mu_s > 0))
        if len(resist):
            companions = cs.take(resist)
            law = rolling.rows(mu_s[resist], mu_r[resist])
            companions.kind, companions.param = law["kind"], law["param"]
            companions.k2 = rolling_key(companions.k2)
            companions.origin[:] = ROLLING
            companions.geometry[:] = ROTATION
            cs = Interactions.concat([cs, companions])
    return cs.canonical()


def _box_vertices(bodies, boxes, Rb):
    return box.vertices(bodies.x[boxes], Rb, box.half_extents(bodies, boxes))


def box_vertices(bodies, boxes):
    """World positions (nb, 8, 3) of the boxes' vertices (shapes/box.py: vertex k has the
    signs of bits (4, 2, 1) of k along the body axes)."""
    return _box_vertices(bodies, boxes, quat_to_matrix(bodies.q[boxes]))
