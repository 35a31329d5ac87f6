"""The convex polyhedron: vertices and outward faces in its body frame (mass centre at the
origin, principal axes along x, y, z), one template per distinct geometry in shapes.LIBRARY.

A template's parameters are one flat float array [nv, nf, vertices (nv x 3), the faces' vertex
counts (nf), the faces' vertex indices (counter-clockwise seen from outside)]; `hull(key)`
gives the parsed Hull (normals, offsets, edges with their two faces), cached per key.
Mass properties are exact for a uniform solid: the divergence theorem over a fan of
tetrahedra from a point inside (Tonon's canonical covariance of a tetrahedron).
"""
from itertools import combinations

import numpy as np

from ..errors import InputError

KIND = 3
NAME = "polyhedron"
TEMPLATE = None          # variable width: LIBRARY.template(key), parsed by hull(key)
CELLS = None             # variable cells: its faces as polygons (POLYGONS)
POLYGONS = {"group": "polyhedra"}    # results draw its faces: polygons(), polygon_points()

_CANONICAL = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]]) / 120.0


class Hull:
    """A convex polyhedron's geometry: vertices (nv, 3); faces, a list of vertex-index arrays
    (counter-clockwise from outside); normals (nf, 3) outward unit; offsets (nf,), n . y = d on
    face f; edges (ne, 4): vertex i, vertex j, the face on whose boundary i -> j runs
    counter-clockwise, the other face."""

    def __init__(self, vertices, faces):
        self.vertices = np.ascontiguousarray(vertices, float)
        self.faces = [np.asarray(f, np.int64) for f in faces]
        self.normals = np.array([_newell(self.vertices[f]) for f in self.faces])
        self.normals /= np.linalg.norm(self.normals, axis=1)[:, None]
        self.offsets = np.array([self.vertices[f].mean(axis=0) @ n
                                 for f, n in zip(self.faces, self.normals)])
        owner = {}
        for k, f in enumerate(self.faces):
            for a, b in zip(f, np.roll(f, -1)):
                owner[(int(a), int(b))] = k
        self.edges = np.array([(a, b, k, owner[(b, a)]) for (a, b), k in sorted(owner.items())
                               if a < b], np.int64).reshape(-1, 4)
        self.radius = float(np.linalg.norm(self.vertices, axis=1).max())

    def params(self):
        return np.concatenate([[len(self.vertices), len(self.faces)],
                               self.vertices.reshape(-1), [len(f) for f in self.faces],
                               np.concatenate(self.faces)]).astype(float)

    @classmethod
    def from_params(cls, p):
        nv, nf = int(p[0]), int(p[1])
        v = p[2:2 + 3 * nv].reshape(nv, 3)
        counts = p[2 + 3 * nv:2 + 3 * nv + nf].astype(np.int64)
        idx = p[2 + 3 * nv + nf:].astype(np.int64)
        return cls(v, np.split(idx, np.cumsum(counts)[:-1]))


def _newell(points):
    """Newell's normal of a planar polygon (length: twice its area), robust to near-collinear
    vertices."""
    nxt = np.roll(points, -1, axis=0)
    return np.cross(points, nxt).sum(axis=0)


def convex_hull(what, points, method="auto"):
    """The faces (vertex-index lists, counter-clockwise from outside) of the convex hull of
    `points` (n, 3), and the indices of the points that are its vertices: every plane through
    three points with no point beyond it is a face (exact for the few vertices of a block;
    points inside, on an edge or inside a face are dropped). Above qhull.SMALL points, and
    where nearly coplanar points make planes overlap, Qhull's when SciPy is installed (the
    same faces, in O(n log n): shapes/qhull.py); above qhull.SMALL in `canonical` order
    either way. method="own": the own planes alone, as they come (bench/bench_mesh.py
    compares them)."""
    from . import qhull

    P = np.asarray(points, float)
    n = len(P)
    if method == "auto" and n > qhull.SMALL and qhull.available():
        return qhull.convex_hull(what, P)
    scale = np.abs(P - P.mean(axis=0)).max()
    tol = 1e-9 * scale
    triples = np.array(list(combinations(range(n), 3)), np.int64)
    planes = {}
    for start in range(0, len(triples), 4096):
        t = triples[start:start + 4096]
        nrm = np.cross(P[t[:, 1]] - P[t[:, 0]], P[t[:, 2]] - P[t[:, 0]])
        length = np.linalg.norm(nrm, axis=1)
        ok = length > 1e-9 * scale * scale
        t, nrm = t[ok], nrm[ok] / length[ok, None]
        s = P @ nrm.T - np.einsum("ij,ij->i", P[t[:, 0]], nrm)       # (n, triples)
        above, below = (s > tol).any(axis=0), (s < -tol).any(axis=0)
        for k in np.flatnonzero(above != below):
            sign = -1.0 if above[k] else 1.0           # outward: no point beyond
            on = tuple(np.flatnonzero(np.abs(s[:, k]) <= tol))
            planes.setdefault(on, sign * nrm[k])
    if not planes:
        raise InputError(f"{what}: the vertices are coplanar (a polyhedron needs a volume)")
    faces = []
    for on, nrm in sorted(planes.items()):
        faces.append(_polygon(P, np.array(on), nrm, tol))
    if method == "auto" and not _closed(faces):   # nearly coplanar points: overlapping planes
        if qhull.available():
            return qhull.convex_hull(what, P)
        raise InputError(f"{what}: the vertices are nearly coplanar in places and their hull "
                         "does not close; SciPy's Qhull handles them (python3-scipy)")
    used = np.unique(np.concatenate(faces))
    remap = np.full(n, -1, np.int64)
    remap[used] = np.arange(len(used))
    faces = [remap[f] for f in faces]
    if method == "auto" and n > qhull.SMALL:          # as Qhull's path gives them
        faces = canonical(faces)
    return faces, used


def canonical(faces):
    """Faces in one order whoever made them: each turned to begin at its lowest vertex, then
    sorted (the own hull and Qhull's give the same faces; in this order, the same bits of the
    mass properties on a machine with SciPy and on one without)."""
    turned = [np.roll(f, -int(np.argmin(f))) for f in faces]
    return [turned[k] for k in sorted(range(len(turned)), key=lambda k: tuple(turned[k]))]


def _closed(faces):
    """Whether every edge of the faces runs once each way (a closed, consistent surface)."""
    count = {}
    for f in faces:
        for a, b in zip(f, np.roll(f, -1)):
            count[(int(a), int(b))] = count.get((int(a), int(b)), 0) + 1
    return all(c == 1 and count.get((b, a)) == 1 for (a, b), c in count.items())


def _polygon(P, on, nrm, tol):
    """The corners of the convex polygon of points P[on] in the plane of normal nrm, counter-
    clockwise about nrm (Andrew's monotone chain: points within tol of the line through
    their neighbours are dropped, so that a point on a hull's edge is in neither face)."""
    u = P[on[1]] - P[on[0]]
    u /= np.linalg.norm(u)
    v = np.cross(nrm, u)
    xy = np.stack([(P[on] - P[on[0]]) @ u, (P[on] - P[on[0]]) @ v], axis=1)
    order = sorted(range(len(on)), key=lambda k: (xy[k, 0], xy[k, 1]))

    def cross(o, a, b):
        return (xy[a, 0] - xy[o, 0]) * (xy[b, 1] - xy[o, 1]) - \
            (xy[a, 1] - xy[o, 1]) * (xy[b, 0] - xy[o, 0])

    hull = []
    for seq in (order, order[::-1]):
        part = []
        for k in seq:
            while len(part) >= 2 and cross(part[-2], part[-1], k) <= tol * np.hypot(
                    xy[k, 0] - xy[part[-2], 0], xy[k, 1] - xy[part[-2], 1]):
                part.pop()
            part.append(k)
        hull += part[:-1]
    return on[hull]


def check_faces(what, vertices, faces):
    """Faces given by the user: each a list of >= 3 vertex indices, the surface closed (every
    edge in two faces, once each way), convex (no vertex beyond a face's plane); a face whose
    Newell normal points inwards is turned. Returns the faces as index arrays."""
    V = np.asarray(vertices, float)
    centre = V.mean(axis=0)
    scale = np.abs(V - centre).max()
    out = []
    for k, f in enumerate(faces):
        f = np.asarray(f)
        if f.ndim != 1 or len(f) < 3 or not np.issubdtype(f.dtype, np.integer) or \
                f.min() < 0 or f.max() >= len(V) or len(set(f.tolist())) != len(f):
            raise InputError(f"{what}: face {k} must list >= 3 distinct vertex indices in "
                             f"[0, {len(V)}), got {faces[k]!r}")
        nrm = _newell(V[f])
        if np.linalg.norm(nrm) <= 1e-12 * scale * scale:
            raise InputError(f"{what}: face {k} has no area")
        if nrm @ (V[f].mean(axis=0) - centre) < 0:
            f = f[::-1]
            nrm = -nrm
        nrm /= np.linalg.norm(nrm)
        s = (V - V[f].mean(axis=0)) @ nrm
        if s.max() > 1e-9 * scale or np.abs(s[f]).max() > 1e-9 * scale:
            raise InputError(f"{what}: face {k} is not a plane of a convex polyhedron (vertex "
                             f"{int(np.argmax(np.abs(s)))} off its side by {np.abs(s).max():.3g})")
        out.append(f.astype(np.int64))
    count = {}
    for f in out:
        for a, b in zip(f, np.roll(f, -1)):
            count[(int(a), int(b))] = count.get((int(a), int(b)), 0) + 1
    for (a, b), c in sorted(count.items()):
        if c != 1 or count.get((b, a)) != 1:
            raise InputError(f"{what}: the faces do not close the surface (edge {a}-{b})")
    return out


def mass_properties(vertices, faces):
    """Volume, centroid (3,) and the inertia tensor (3, 3) about the centroid of the uniform
    solid of unit density bounded by `faces` (outward)."""
    V = np.asarray(vertices, float)
    o = V.mean(axis=0)                              # inside: the fan's apex, near the centroid
    vol, first, cov = 0.0, np.zeros(3), np.zeros((3, 3))
    for f in faces:
        for k in range(1, len(f) - 1):
            A = np.stack([V[f[0]] - o, V[f[k]] - o, V[f[k + 1]] - o], axis=1)   # columns
            det = float(A[0] @ np.cross(A[1], A[2]))            # plain arithmetic, no LAPACK
            vol += det / 6.0
            first += det / 24.0 * A.sum(axis=1)
            cov += det * (A @ _CANONICAL @ A.T)
    c = first / vol
    cov_c = cov - vol * np.outer(c, c)               # about the centroid
    J = np.trace(cov_c) * np.eye(3) - cov_c
    return vol, o + c, J


def symmetric_eigen(J, sweeps=50):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric 3 x 3 matrix by
    cyclic Jacobi rotations in plain floating point: the same bits whatever BLAS, its kernels
    or its thread count (LAPACK's eigh gave different last bits with 1 and 2 OpenBLAS
    threads, so a block's principal frame, and then its trajectory, depended on how the
    process was started)."""
    a = [[float(J[i][j]) for j in range(3)] for i in range(3)]
    v = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    for _ in range(sweeps):
        off = abs(a[0][1]) + abs(a[0][2]) + abs(a[1][2])
        if off == 0.0:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if a[p][q] == 0.0:
                continue
            theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
            t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + (theta * theta + 1.0) ** 0.5)
            c = 1.0 / (t * t + 1.0) ** 0.5
            s = t * c
            for k in range(3):                    # a <- a G (columns p, q)
                akp, akq = a[k][p], a[k][q]
                a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
            for k in range(3):                    # a <- G^T a (rows p, q)
                apk, aqk = a[p][k], a[q][k]
                a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
            a[p][q] = a[q][p] = 0.0
            for k in range(3):                    # v <- v G
                vkp, vkq = v[k][p], v[k][q]
                v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
    w = np.array([a[i][i] for i in range(3)])
    order = np.argsort(w, kind="stable")
    return w[order], np.array(v)[:, order]


def principal_frame(J):
    """Principal moments (3,) and axes Q (columns, det +1) of an inertia tensor; a tensor
    already diagonal keeps its axes (a brick keeps its edges along x, y, z)."""
    off = np.abs(J - np.diag(np.diag(J))).max()
    if off <= 1e-14 * np.trace(J):
        return np.diag(J).copy(), np.eye(3)
    moments, Q = symmetric_eigen(J)
    Q = Q * np.where(Q[np.argmax(np.abs(Q), axis=0), range(3)] < 0, -1.0, 1.0)
    if np.linalg.det(Q) < 0:
        Q[:, 2] = -Q[:, 2]
    return moments, Q


def make(what, vertices, faces=None):
    """(hull in the body frame, volume, principal moments per unit density, centroid, Q) of
    the polyhedron with `vertices` (n, 3) in some frame F, and its faces (the convex hull when
    None). Body-frame points y map to F as centroid + Q y."""
    V = np.asarray(vertices, float)
    if V.ndim != 2 or V.shape[1] != 3 or len(V) < 4:
        raise InputError(f"{what}: vertices must be an (n, 3) array with n >= 4, got shape "
                         f"{V.shape}")
    if not np.isfinite(V).all():
        raise InputError(f"{what}: vertex {int(np.argmin(np.isfinite(V).all(1)))} is not "
                         "finite")
    if faces is None:
        faces, used = convex_hull(what, V)
        V = V[used]
    else:
        faces = check_faces(what, V, faces)
    vol, c, J = mass_properties(V, faces)
    if not vol > 0:
        raise InputError(f"{what}: the polyhedron has no volume")
    moments, Q = principal_frame(J)
    return Hull((V - c) @ Q, faces), vol, moments, c, Q


def hull(key):
    """The Hull of template `key` (parsed once, then cached)."""
    from . import LIBRARY

    return LIBRARY.hull(KIND, key, Hull.from_params)


def hulls(placed, rows):
    return [hull(int(k)) for k in placed.template[rows]]


def bounding_radius(h):
    return h.radius


def vertices(placed, rows, R):
    """World positions of the vertices of the polyhedra `rows`, a list of (nv, 3)."""
    return [placed.x[r] + hull(int(placed.template[r])).vertices @ R[k].T
            for k, r in enumerate(rows)]


def extent(placed, rows, R):
    """World half extents (n, 3) of the axis-aligned boxes, about the centres, around the
    polyhedra `rows` (R their rotation matrices): the largest |R v| over the vertices."""
    return np.array([np.abs(v - placed.x[r]).max(axis=0)
                     for v, r in zip(vertices(placed, rows, R), rows)]).reshape(-1, 3)


def polygon_points(placed, rows):
    """The number of points polygons() gives for the placed `rows`."""
    return sum(len(hull(int(placed.template[r])).vertices) for r in rows)


def polygons(placed, rows, R, first=0):
    """The faces of the polyhedra `rows` (R their rotation matrices) as XDMF "Mixed" polygon
    cells: (points (P, 3), topology [3, count, point ids, ...] with ids from `first`, the
    row of each face (index into rows))."""
    return polygon_cells(((k, placed.x[r] + h.vertices @ R[k].T, h.faces)
                          for k, r in enumerate(rows) for h in (hull(int(placed.template[r])),)),
                         first)


def polygon_cells(pieces, first=0):
    """XDMF "Mixed" polygon cells of hulls placed in the world: `pieces` gives (owner, world
    vertices (n, 3), faces) per hull; (points (P, 3), topology [3, count, point ids, ...] with
    ids from `first`, the owner of each face)."""
    pts, topo, owner = [], [], []
    at = first
    for k, vertices, faces in pieces:
        pts.append(vertices)
        for f in faces:
            topo += [3, len(f)] + (f + at).tolist()
        owner += [k] * len(faces)
        at += len(vertices)
    return (np.concatenate(pts) if pts else np.zeros((0, 3)), np.asarray(topo, np.int64),
            np.asarray(owner, np.int64))


def distance(placed, k, x):
    """A lower bound of the distance of points x (n, 3) from polyhedron k (0 inside): the
    largest signed distance to its faces' planes (the broad phase of obstacles)."""
    from ..dynamics.rotation import quat_to_matrix

    R = quat_to_matrix(placed.q[k:k + 1])[0]
    h = hull(int(placed.template[k]))
    local = (x - placed.x[k]) @ R
    return np.maximum((local @ h.normals.T - h.offsets).max(axis=1), 0.0)
