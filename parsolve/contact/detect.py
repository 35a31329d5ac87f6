"""Narrow phase on the broad phase's candidates: sphere-sphere, sphere-box, box-box (boxbox.py),
sphere-half-space, box-half-space (one contact per vertex). A contact is active when its
gap <= margin."""
import numpy as np

from ..dynamics.rotation import quat_to_matrix
from ..model.bodies import BOX, SPHERE
from .boxbox import box_box
from .broadphase import candidate_pairs
from .contactset import ContactSet
from .frames import frames_from_normals

# the 8 vertices of the unit cube, as sign patterns; vertex k is the feature id k
_CORNERS = np.array([(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def detect(bodies, obstacles, mu_table, e_table, margin):
    """All active contacts among the bodies held and against the obstacles, canonical order."""
    parts = []
    pairs = candidate_pairs(bodies.x, bodies.radius, margin)
    shape = bodies.shape
    if len(pairs):
        # A is the body of lower id (owned rows and ghosts are each sorted, not together)
        swap = bodies.gid[pairs[:, 0]] > bodies.gid[pairs[:, 1]]
        i = np.where(swap, pairs[:, 1], pairs[:, 0])
        j = np.where(swap, pairs[:, 0], pairs[:, 1])
        ss = (shape[i] == SPHERE) & (shape[j] == SPHERE)
        parts.append(_sphere_sphere(bodies, i[ss], j[ss]))
        sb = (shape[i] == SPHERE) & (shape[j] == BOX)
        bs = (shape[i] == BOX) & (shape[j] == SPHERE)
        parts.append(_sphere_box(bodies, np.concatenate([i[sb], j[bs]]),
                                 np.concatenate([j[sb], i[bs]])))
        bb = (shape[i] == BOX) & (shape[j] == BOX)
        parts.append(box_box(bodies, i[bb], j[bb], margin))
    for k in range(len(obstacles)):
        p, n = obstacles.point[k], obstacles.normal[k]
        dist = (bodies.x - p) @ n - bodies.radius
        near = np.nonzero(dist <= margin)[0]
        sph = near[shape[near] == SPHERE]
        box = near[shape[near] == BOX]
        parts.append(_sphere_plane(bodies, sph, p, n, k))
        parts.append(_box_plane(bodies, box, p, n, k))
    parts = [c for c in parts if c is not None and len(c["a"])]
    if not parts:
        return ContactSet(a=np.zeros(0, np.int64))
    c = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    keep = c["gap"] <= margin
    c = {f: v[keep] for f, v in c.items()}
    a, b, obst = c["a"], c["b"], c["obstacle"]
    mat_b = np.where(obst >= 0, obstacles.material[np.maximum(obst, 0)],
                     bodies.material[np.maximum(b, 0)])
    mat_a = bodies.material[a]
    b_gid = np.where(b >= 0, bodies.gid[np.maximum(b, 0)], -1)
    cs = ContactSet(a=a, b=b, obstacle=obst, k1=bodies.gid[a],
                    k2=ContactSet.key2(b_gid, obst, c["feature"]), point=c["point"],
                    frame=frames_from_normals(c["normal"]), gap=c["gap"],
                    mu=mu_table[mat_a, mat_b], e=e_table[mat_a, mat_b])
    return cs.canonical()


def _pack(a, b, obstacle, feature, normal, point, gap):
    n = len(a)
    return {"a": np.asarray(a, np.int64),
            "b": np.broadcast_to(np.asarray(b, np.int64), (n,)).copy(),
            "obstacle": np.broadcast_to(np.asarray(obstacle, np.int64), (n,)).copy(),
            "feature": np.broadcast_to(np.asarray(feature, np.int64), (n,)).copy(),
            "normal": normal, "point": point, "gap": gap}


def _sphere_sphere(bodies, i, j):
    """A = i, the lower id; the normal points from j to i."""
    d = bodies.x[i] - bodies.x[j]
    dist = np.linalg.norm(d, axis=1)
    n = d / np.where(dist > 0, dist, 1.0)[:, None]
    n[dist == 0] = (0.0, 0.0, 1.0)
    ri, rj = bodies.radius[i], bodies.radius[j]
    gap = dist - ri - rj
    point = bodies.x[j] + n * (rj + 0.5 * gap)[:, None]
    return _pack(i, j, -1, 0, n, point, gap)


def _sphere_box(bodies, s, b):
    """A is the sphere, B the box; the closest point of the box to the sphere's centre."""
    if len(s) == 0:
        return None
    Rb = quat_to_matrix(bodies.q[b])
    half = bodies.half[b]
    local = np.einsum("nji,nj->ni", Rb, bodies.x[s] - bodies.x[b])
    clamped = np.clip(local, -half, half)
    d = local - clamped
    dist = np.linalg.norm(d, axis=1)
    inside = dist == 0
    n_local = d / np.where(inside, 1.0, dist)[:, None]
    gap = dist - bodies.radius[s]
    if inside.any():                       # centre inside the box: leave by the nearest face
        depth = half[inside] - np.abs(local[inside])
        k = np.argmin(depth, axis=1)
        rows = np.arange(len(k))
        nl = np.zeros((len(k), 3))
        nl[rows, k] = np.where(local[inside][rows, k] >= 0, 1.0, -1.0)
        n_local[inside] = nl
        gap[inside] = -depth[rows, k] - bodies.radius[s][inside]
    n = np.einsum("nij,nj->ni", Rb, n_local)
    point = bodies.x[s] - n * (bodies.radius[s] + 0.5 * gap)[:, None]
    return _pack(s, b, -1, 0, n, point, gap)


def _sphere_plane(bodies, s, p, n, k):
    gap = (bodies.x[s] - p) @ n - bodies.radius[s]
    point = bodies.x[s] - np.outer(bodies.radius[s] + 0.5 * gap, n)
    return _pack(s, -1, k, 0, np.tile(n, (len(s), 1)), point, gap)


def _box_plane(bodies, boxes, p, n, k):
    if len(boxes) == 0:
        return None
    Rb = quat_to_matrix(bodies.q[boxes])
    verts = _box_vertices(bodies, boxes, Rb)
    gap = (verts - p) @ n                                   # (nb, 8)
    nb = len(boxes)
    a = np.repeat(boxes, 8)
    feature = np.tile(np.arange(8), nb)
    gap = gap.reshape(-1)
    point = verts.reshape(-1, 3) - np.outer(0.5 * gap, n)
    return _pack(a, -1, k, feature, np.tile(n, (len(a), 1)), point, gap)


def _box_vertices(bodies, boxes, Rb):
    corners = _CORNERS[None, :, :] * bodies.half[boxes][:, None, :]       # (nb, 8, 3) body frame
    return bodies.x[boxes][:, None, :] + np.einsum("nij,nvj->nvi", Rb, corners)


def box_vertices(bodies, boxes):
    """World positions (nb, 8, 3) of the boxes' vertices; vertex k has the signs of bits
    (4, 2, 1) of k along the body axes."""
    return _box_vertices(bodies, boxes, quat_to_matrix(bodies.q[boxes]))
