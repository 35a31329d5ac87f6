"""Narrow phase: the contact points of pairs of placed shapes, one function per pair of shape
kinds, registered here (pe's double dispatch over its body-type tuple).

A pair function f(A, i, B, j, margin) receives two placed-shape tables (bodies, or the
obstacles as B) with columns x, q, radius, template (and a plane's point and normal) and
equal-length row arrays i (of A, all of f's first kind) and j (of B, its second kind). It returns
None or a dict of arrays, one entry per contact point: "a" and "b" (rows of A and B), "feature"
(tells apart the points of one pair, < 64: contact keys), "normal" (unit, from B to A),
"point" and "gap" (< 0: overlap). detect keeps the points with gap <= margin.

A fixed obstacle is a shape at rest with infinite mass, so a body meets a fixed box through the
same function as another box. A pair registered one way serves the other way round (A and B
swapped; for an obstacle, the normal turned so that it still points to the body). A pair of
kinds with no function is an InputError naming it: there is no generic convex fallback yet
(a support-function GJK/EPA is its natural place, registered for any pair without its own).
"""
import numpy as np

from ..dynamics.rotation import quat_to_matrix
from ..errors import InputError
from ..shapes import BOX, COMPOUND, KINDS, MESH, PLANE, POLYHEDRON, SPHERE, box, name

PAIRS = {}      # (kind of A, kind of B) -> pair function


def register(kind_a, kind_b, function):
    """Use `function` for contacts of a shape of kind_a (A) with one of kind_b (B)."""
    PAIRS[(int(kind_a), int(kind_b))] = function


def lookup(kind_a, kind_b):
    """(function, swapped): swapped when only (kind_b, kind_a) is registered."""
    ka, kb = int(kind_a), int(kind_b)
    if (ka, kb) in PAIRS:
        return PAIRS[(ka, kb)], False
    if (kb, ka) in PAIRS:
        return PAIRS[(kb, ka)], True
    raise InputError(f"no narrow phase for {name(ka)}-{name(kb)} contacts (register a pair "
                     "function in parsolve/contact/narrow.py)")


def body_pairs(bodies, i, j, margin):
    """Contacts of the body pairs (i[k], j[k]) (i the lower id) as a list of dicts. For each
    registered pair of kinds, one call: first the pairs in its order (A = i), then the pairs
    the other way round (A = j)."""
    ki, kj = bodies.shape[i], bodies.shape[j]
    present = set(zip(ki.tolist(), kj.tolist()))
    parts = []
    for ka, kb in list(PAIRS):
        if (ka, kb) not in present and (kb, ka) not in present:
            continue
        direct = (ki == ka) & (kj == kb)
        other = (ki == kb) & (kj == ka) if ka != kb else np.zeros(len(i), bool)
        parts.append(PAIRS[(ka, kb)](bodies, np.concatenate([i[direct], j[other]]), bodies,
                                     np.concatenate([j[direct], i[other]]), margin))
        present -= {(ka, kb), (kb, ka)}
    if present:
        lookup(*present.pop())                       # raises: no function for this pair
    return parts


def obstacle_pairs(bodies, rows, obstacles, k, margin):
    """Contacts of the bodies `rows` with obstacle k (A = the body, b = the obstacle's row)."""
    parts = []
    if not len(rows):                                # none near it (a ball in flight)
        return parts
    kb = obstacles.shape[k]
    shape = bodies.shape[rows]
    alike = (shape == shape[0]).all()               # one shape: no unique, no selection
    for ka in (shape[:1] if alike else np.unique(shape)):
        i = rows if alike else rows[shape == ka]
        j = np.full(len(i), k, np.int64)
        f, swapped = lookup(ka, kb)
        if not swapped:
            parts.append(f(bodies, i, obstacles, j, margin))
            continue
        c = f(obstacles, j, bodies, i, margin)
        if c is not None:
            c["a"], c["b"], c["normal"] = c["b"], c["a"], -c["normal"]
        parts.append(c)
    return parts


def pack(a, b, feature, normal, point, gap):
    n = len(a)
    return {"a": np.asarray(a, np.int64),
            "b": np.broadcast_to(np.asarray(b, np.int64), (n,)).copy(),
            "feature": np.broadcast_to(np.asarray(feature, np.int64), (n,)).copy(),
            "normal": normal, "point": point, "gap": gap}


def sphere_sphere(A, i, B, j, margin):
    """The normal points from j's centre to i's."""
    d = A.x[i] - B.x[j]
    dist = np.linalg.norm(d, axis=1)
    n = d / np.where(dist > 0, dist, 1.0)[:, None]
    n[dist == 0] = (0.0, 0.0, 1.0)
    ri, rj = A.radius[i], B.radius[j]
    gap = dist - ri - rj
    point = B.x[j] + n * (rj + 0.5 * gap)[:, None]
    return pack(i, j, 0, n, point, gap)


def sphere_box(A, s, B, b, margin):
    """The closest point of box b to sphere s's centre; a centre inside the box leaves by the
    nearest face."""
    if len(s) == 0:
        return None
    Rb = quat_to_matrix(B.q[b])
    half = box.half_extents(B, b)
    local = np.einsum("nji,nj->ni", Rb, A.x[s] - B.x[b])
    clamped = np.clip(local, -half, half)
    d = local - clamped
    dist = np.linalg.norm(d, axis=1)
    inside = dist == 0
    n_local = d / np.where(inside, 1.0, dist)[:, None]
    gap = dist - A.radius[s]
    if inside.any():
        depth = half[inside] - np.abs(local[inside])
        k = np.argmin(depth, axis=1)
        rows = np.arange(len(k))
        nl = np.zeros((len(k), 3))
        nl[rows, k] = np.where(local[inside][rows, k] >= 0, 1.0, -1.0)
        n_local[inside] = nl
        gap[inside] = -depth[rows, k] - A.radius[s][inside]
    n = np.einsum("nij,nj->ni", Rb, n_local)
    point = A.x[s] - n * (A.radius[s] + 0.5 * gap)[:, None]
    return pack(s, b, 0, n, point, gap)


def sphere_plane(A, s, B, j, margin):
    parts = []
    for k in np.unique(j):
        rows = s[j == k]
        p, n = B.point[k], B.normal[k]
        gap = (A.x[rows] - p) @ n - A.radius[rows]
        point = A.x[rows] - np.outer(A.radius[rows] + 0.5 * gap, n)
        parts.append(pack(rows, k, 0, np.tile(n, (len(rows), 1)), point, gap))
    return _concat(parts)


def box_plane(A, boxes, B, j, margin):
    """One point per vertex (feature: the vertex number)."""
    parts = []
    for k in np.unique(j):
        rows = boxes[j == k]
        p, n = B.point[k], B.normal[k]
        verts = box.vertices(A.x[rows], quat_to_matrix(A.q[rows]), box.half_extents(A, rows))
        gap = ((verts - p) @ n).reshape(-1)                 # (nb * 8)
        a = np.repeat(rows, 8)
        point = verts.reshape(-1, 3) - np.outer(0.5 * gap, n)
        parts.append(pack(a, k, np.tile(np.arange(8), len(rows)), np.tile(n, (len(a), 1)),
                          point, gap))
    return _concat(parts)


def _concat(parts):
    parts = [p for p in parts if len(p["a"])]
    if not parts:
        return None
    return {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}


def _register_all():
    from .boxbox import box_box
    from .compound import compound_pairs
    from .mesh import sphere_on_mesh
    from .mesh_poly import block_on_mesh
    from .polyhedra import poly_plane, poly_poly, sphere_poly

    register(SPHERE, SPHERE, sphere_sphere)
    register(SPHERE, BOX, sphere_box)
    register(BOX, BOX, box_box)
    register(SPHERE, PLANE, sphere_plane)
    register(BOX, PLANE, box_plane)
    register(POLYHEDRON, POLYHEDRON, poly_poly)
    register(BOX, POLYHEDRON, poly_poly)
    register(POLYHEDRON, PLANE, poly_plane)
    register(SPHERE, POLYHEDRON, sphere_poly)
    register(SPHERE, MESH, sphere_on_mesh)          # meshes are obstacles only: B
    register(BOX, MESH, block_on_mesh)
    register(POLYHEDRON, MESH, block_on_mesh)
    for kind in KINDS:                              # a compound meets what its parts meet
        register(COMPOUND, kind, compound_pairs)


_register_all()
