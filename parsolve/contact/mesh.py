"""Contacts with triangle meshes (shapes/mesh.py): one contact per touching feature set.

Sphere-mesh (`sphere_mesh`, compiled in kernels/mesh.pyx): for each sphere the triangles of
the grid cells its reach (radius + margin) covers; on each, the closest point of the centre
(Ericson's Voronoi regions of a triangle: its face, one of its three edges or corners). The
point is a feature of the surface:

- in a triangle's face, or on an edge or at a vertex inside a flat patch: the patch (its one
  normal), so that a sphere on a floor of many triangles meets one contact wherever it rolls,
  with the same normal across the triangles' edges;
- on another edge or vertex: that edge or vertex, if no triangle of its own is strictly
  closer (the centre lies in the feature's Voronoi region: in front of a convex edge, between
  its faces' normals; a concave edge never is, and its two faces give a contact each).

Candidates of one feature are one contact (the closest; the triangles of a patch, both sides
of an edge, a vertex's fan); candidates with the same normal are one contact too (the deepest;
for a sphere they are the same constraint, as at the border of a face's and an edge's regions).
The normal points from the mesh to the sphere: a patch's normal (one-sided: always; two-sided:
towards the centre's side), (c - p) / |c - p| at an edge or a vertex. A one-sided mesh pushes
a centre that went behind its surface (by less than the radius) back out, along the patch's
normal or the edge's or vertex's pseudo-normal; a two-sided mesh cannot tell behind from in
front. The gap is the distance along the normal less the radius, the point at mid-gap.

Features: the raw id (kind << 60 | index; kind 0 patch, 1 edge, 2 vertex) persists while the
sphere stays on it (warm start); `feature` is the pair's key in [0, 64), splitmix64 of the raw
id, probed among the sphere's contacts in raw order (as contact/polyhedra.py does).

The pure-Python `sphere_mesh` is the twin of the compiled one (same name and arguments); tests
hold them equal.
"""
import math

import numpy as np

from .._kernels import compiled
from .polyhedra import mix

PATCH, EDGE, VERTEX = 0, 1, 2
SHIFT = 60
SAME = 1e-9               # normals with 1 - n.m below this are one contact
CLOSER = 1e-10            # a triangle is strictly closer when d'^2 < d^2 (1 - CLOSER)


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def closest(c, V, T, t):
    """(point, region) of triangle t nearest to c: region 0 its face, 1 + k corner k, 4 + k
    side k (corner k to k + 1). Ericson's order of tests (Real-Time Collision Detection 5.1.5),
    the kernel's arithmetic."""
    a, b, cc = V[T[t, 0]], V[T[t, 1]], V[T[t, 2]]
    ab = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    ac = (cc[0] - a[0], cc[1] - a[1], cc[2] - a[2])
    ap = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return (a[0], a[1], a[2]), 1
    bp = (c[0] - b[0], c[1] - b[1], c[2] - b[2])
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return (b[0], b[1], b[2]), 2
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return (a[0] + v * ab[0], a[1] + v * ab[1], a[2] + v * ab[2]), 4
    cp = (c[0] - cc[0], c[1] - cc[1], c[2] - cc[2])
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return (cc[0], cc[1], cc[2]), 3
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return (a[0] + w * ac[0], a[1] + w * ac[1], a[2] + w * ac[2]), 6
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return (b[0] + w * (cc[0] - b[0]), b[1] + w * (cc[1] - b[1]),
                b[2] + w * (cc[2] - b[2])), 5
    den = 1.0 / (va + vb + vc)
    v, w = vb * den, vc * den
    return (a[0] + ab[0] * v + ac[0] * w, a[1] + ab[1] * v + ac[1] * w,
            a[2] + ab[2] * v + ac[2] * w), 0


def _dist2(c, V, T, t):
    p, _ = closest(c, V, T, t)
    d = (c[0] - p[0], c[1] - p[1], c[2] - p[2])
    return _dot(d, d)


def sphere_mesh(V, T, TC, TR, patch, PN, TE, ET, EN, eflat, vptr, vtris, VN, vflat, lower,
                dims, cell, cptr, ctris, sides, c, radius, margin, sphere, raw, feature, normal,
                point, gap):
    """Contacts of spheres (centres c (n, 3) in the mesh's frame, radius (n,)) with the mesh
    (its arrays: TriangleMesh.arrays()). Writes sphere index, raw feature id, feature in
    [0, 64), normal (mesh to sphere), point and gap of each contact into the out arrays while
    they have room, in sphere order, each sphere's contacts in raw order; returns the number
    of contacts (more than the room: call again with larger arrays)."""
    cap = len(sphere)
    count = 0
    stamp = np.full(len(T), -1, np.int64)
    for k in range(len(c)):
        ck = (float(c[k, 0]), float(c[k, 1]), float(c[k, 2]))
        r = float(radius[k])
        reach = r + margin
        lo, hi = [0, 0, 0], [0, 0, 0]
        empty = False
        for m in range(3):
            lo[m] = math.floor((ck[m] - reach - lower[m]) / cell)
            hi[m] = math.floor((ck[m] + reach - lower[m]) / cell)
            lo[m] = max(lo[m], 0)
            hi[m] = min(hi[m], dims[m] - 1)
            if lo[m] > hi[m]:
                empty = True
        if empty:
            continue
        found = []                     # (raw, d2, t, normal, gap)
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                f = (i * dims[1] + j) * dims[2]
                for e in range(cptr[f + lo[2]], cptr[f + hi[2] + 1]):
                    t = int(ctris[e])
                    if stamp[t] == k:
                        continue
                    stamp[t] = k
                    q = (ck[0] - TC[t, 0], ck[1] - TC[t, 1], ck[2] - TC[t, 2])
                    if _dot(q, q) > (reach + TR[t]) * (reach + TR[t]):
                        continue                          # beyond its bounding sphere
                    got = _candidate(V, T, patch, PN, TE, ET, EN, eflat, vptr, vtris, VN,
                                     vflat, sides, ck, r, reach, t)
                    if got is not None:
                        found.append(got)
        for raw_k, n_k, g_k in _merge(found):
            if count < cap:
                sphere[count] = k
                raw[count] = raw_k
                normal[count] = n_k
                gap[count] = g_k
                s = r + 0.5 * g_k
                point[count] = (ck[0] - n_k[0] * s, ck[1] - n_k[1] * s, ck[2] - n_k[2] * s)
            count += 1
    _features(sphere, raw, feature, min(count, cap))
    return count


def _candidate(V, T, patch, PN, TE, ET, EN, eflat, vptr, vtris, VN, vflat, sides, ck, r,
               reach, t):
    """The contact that triangle t offers the sphere (ck, r), or None: (raw, d2, t, normal,
    gap)."""
    p, region = closest(ck, V, T, t)
    dv = (ck[0] - p[0], ck[1] - p[1], ck[2] - p[2])
    d2 = _dot(dv, dv)
    if d2 > reach * reach:
        return None
    if region == 0:
        kind, idx = PATCH, int(patch[t])
    elif region >= 4:
        e = int(TE[t, region - 4])
        u = ET[e, 0] if ET[e, 0] != t else ET[e, 1]
        if u >= 0 and _dist2(ck, V, T, u) < d2 * (1.0 - CLOSER):
            return None                                   # the other side is closer
        kind, idx = (PATCH, int(patch[t])) if eflat[e] else (EDGE, e)
    else:
        v = int(T[t, region - 1])
        for q in range(vptr[v], vptr[v + 1]):
            u = int(vtris[q])
            if u != t and _dist2(ck, V, T, u) < d2 * (1.0 - CLOSER):
                return None                               # a triangle of its fan is closer
        kind, idx = (PATCH, int(patch[t])) if vflat[v] else (VERTEX, v)
    if kind == PATCH:
        n = PN[idx]
        h = _dot(dv, n)
        if sides == 1:
            if h < -r:
                return None                               # deeper than a radius: not ours
            nrm = (n[0], n[1], n[2])
        elif h >= 0.0:
            nrm = (n[0], n[1], n[2])
        else:
            nrm, h = (-n[0], -n[1], -n[2]), -h
        return ((kind << SHIFT) | idx, d2, t, nrm, h - r)
    pn = EN[idx] if kind == EDGE else VN[idx]
    d = math.sqrt(d2)
    s = _dot(dv, pn)
    if sides == 1 and s < 0.0:                            # behind the surface: push out
        if s < -r:
            return None
        return ((kind << SHIFT) | idx, d2, t, (pn[0], pn[1], pn[2]), s - r)
    if d > 0.0:
        return ((kind << SHIFT) | idx, d2, t, (dv[0] / d, dv[1] / d, dv[2] / d), d - r)
    return ((kind << SHIFT) | idx, d2, t, (pn[0], pn[1], pn[2]), -r)


def _merge(found):
    """One contact per feature (the closest, then the lowest triangle), then one per normal
    (the deepest, then patch before edge before vertex, then the lowest raw id); returned in
    raw order as (raw, normal, gap)."""
    found.sort(key=lambda f: (f[0], f[1], f[2]))
    best = [f for q, f in enumerate(found) if q == 0 or found[q - 1][0] != f[0]]
    best.sort(key=lambda f: (f[4], f[0]))
    kept = []
    for f in best:
        if all(_dot(f[3], g[3]) < 1.0 - SAME for g in kept):
            kept.append(f)
    kept.sort(key=lambda f: f[0])
    return [(f[0], f[3], f[4]) for f in kept]


def _features(sphere, raw, feature, count):
    """Distinct features in [0, 64) per sphere, probed in raw order."""
    used, last = 0, -1
    for q in range(count):
        if sphere[q] != last:
            used, last = 0, sphere[q]
        f = mix(int(raw[q])) % 64
        while used >> f & 1:
            f = (f + 1) % 64
        used |= 1 << f
        feature[q] = f


# -- the wrappers: placement, room, compiled or twin ---------------------------------------
def _kernel(twin):
    modules = compiled("mesh", warn=False)
    return twin if modules is None else getattr(modules[0], twin.__name__, twin)


def _pose(mesh, x, pose):
    """Points x (n, 3) in the mesh's frame; pose (translation (3,), rotation (3, 3)) or None:
    the mesh where it was read."""
    if pose is None:
        return np.ascontiguousarray(x, float), None
    t, R = pose
    return np.ascontiguousarray((np.asarray(x, float) - t) @ R), R


def sphere_contacts(mesh, x, radius, margin, pose=None, kernel=None):
    """Contacts of spheres (centres x (n, 3), radii (n,)) with `mesh`, placed at pose
    (translation, rotation matrix) or where it was read: a dict of arrays sphere (index into
    x), raw, feature, normal (from the mesh to the sphere), point, gap (all <= margin)."""
    c, R = _pose(mesh, x, pose)
    radius = np.ascontiguousarray(np.broadcast_to(np.asarray(radius, float), (len(c),)))
    a = mesh.arrays()
    f = kernel or _kernel(sphere_mesh)
    cap = 2 * len(c) + 16
    while True:
        out = dict(sphere=np.zeros(cap, np.int64), raw=np.zeros(cap, np.int64),
                   feature=np.zeros(cap, np.int64), normal=np.zeros((cap, 3)),
                   point=np.zeros((cap, 3)), gap=np.zeros(cap))
        n = f(a["V"], a["T"], a["TC"], a["TR"], a["patch"], a["PN"], a["TE"], a["ET"], a["EN"],
              a["eflat"], a["vptr"], a["vtris"], a["VN"], a["vflat"], a["lower"], a["dims"],
              float(a["cell"]), a["cptr"], a["ctris"], int(mesh.sides), c, radius,
              float(margin), out["sphere"], out["raw"], out["feature"], out["normal"],
              out["point"], out["gap"])
        if n <= cap:
            break
        cap = n
    out = {k: v[:n] for k, v in out.items()}
    if R is not None:
        out["normal"] = out["normal"] @ R.T
        out["point"] = out["point"] @ R.T + pose[0]
    return out


# -- polyhedra and boxes on a mesh: the contact polygon, merged over coplanar triangles --------
def poly_mesh(mesh, V, faces, N, D, E, radius, sides=None, margin=0.0):
    """Contacts of one convex polyhedron (world vertices V (nv, 3) in the mesh's frame, faces
    (vertex-index arrays, counter-clockwise from outside), outward unit normals N and offsets
    D (n . y = d on a face), edges E (i, j, face, face) as shapes/polyhedron.Hull has them,
    bounding radius) with `mesh`: a list of (raw, normal (from the mesh to the block), point,
    gap), in raw order.

    For each triangle near the block, separating axes (the triangle's normal, the block's face
    normals, the cross products of the block's edges with the triangle's sides) as for two
    blocks (contact/polyhedra.py); the axis of least penetration decides, faces preferred
    (EDGE_BIAS): the triangle as reference face (the block's most anti-parallel face clipped
    against the triangle's sides), a face of the block as reference (the triangle clipped
    against its sides), or an edge of the block with a convex edge of the mesh (one point; a
    flat or concave edge of the mesh is never an edge contact). The points of one reference
    plane (a patch of the mesh, or a face of the block) from all its triangles are then one
    polygon: its convex hull's corners (every point shares the normal, so the hull's corners
    carry every wrench the points can: a brick on a floor of many triangles touches at its four
    corners, not four per triangle). At most MAXP points, the deepest."""
    from .polyhedra import EDGE_BIAS, MAXP, corner_id

    sides = mesh.sides if sides is None else sides
    x = V.mean(axis=0)
    lo, hi = V.min(axis=0) - margin, V.max(axis=0) + margin
    half = 0.5 * (hi - lo)
    cand = mesh.near(0.5 * (lo + hi), half.max())
    bias = EDGE_BIAS * radius
    groups = {}                                  # raw group -> list of (id, point, h)
    edges_out = []
    for t in cand:
        t = int(t)
        tri = mesh.triangles[t]
        P = mesh.vertices[tri]
        n = mesh.patch_normals[mesh.patch[t]]
        dt = float(n @ P[0])
        side_e = [int(e) for e in mesh.tri_edges[t]]
        flipped = sides == 2 and n @ x < dt
        if flipped:                                  # the block on the back: turn the triangle
            n, dt, tri, P = -n, -dt, tri[::-1], P[::-1]
            side_e = [side_e[1], side_e[0], side_e[2]]
        hv = V @ n - dt
        st = hv.min()
        if st > margin or (sides == 1 and hv.max() < -radius):
            continue
        sf_all = (P @ N.T - D).min(axis=0)           # the triangle below each face
        f_best = int(np.argmax(sf_all))
        sf = sf_all[f_best]
        if sf > margin:
            continue
        se, e_best, L_best = -np.inf, None, None
        separated = False
        for k in range(3):
            ub = P[(k + 1) % 3] - P[k]
            for j, (a, b, _, _) in enumerate(E):
                ua = V[b] - V[a]
                L = np.cross(ua, ub)
                ln = np.sqrt(L @ L)
                if ln <= 1e-9 * np.sqrt((ua @ ua) * (ub @ ub)):
                    continue
                L = L / ln
                if L @ (x - P[k]) < 0:
                    L = -L                            # towards the block
                s = (V @ L).min() - (P @ L).max()
                if s > margin:
                    separated = True
                    break
                e = side_e[k]
                if mesh.dihedral[e] > 0 or mesh.edge_tris[e, 1] < 0:   # convex or boundary
                    if s > se:
                        se, e_best, L_best = s, (k, j), L
            if separated:
                break
        if separated:
            continue
        if e_best is not None and se > max(st, sf) + bias:
            k, j = e_best
            pa, ua = V[E[j][0]], V[E[j][1]] - V[E[j][0]]
            pb, ub = P[k], P[(k + 1) % 3] - P[k]
            w = pa - pb
            A_, B_, C_ = ua @ ua, ua @ ub, ub @ ub
            Dd, Ee = ua @ w, ub @ w
            den = A_ * C_ - B_ * B_
            ta = min(max((B_ * Ee - C_ * Dd) / den, 0.0), 1.0)
            tb = min(max((A_ * Ee - B_ * Dd) / den, 0.0), 1.0)
            point = 0.5 * (pa + ta * ua + pb + tb * ub)
            if not _in_cone(mesh, t, L_best, pb + tb * ub, sides, flipped):
                continue                              # not the edge's side: a face's contact
            edges_out.append(((EDGE << SHIFT) | (side_e[k] << 20) | j, L_best, point, se))
            continue
        if sf > st + bias:                           # a face of the block is the reference
            m = N[f_best]
            ref = V[faces[f_best]]
            poly = [(P[k], int(tri[k]) + 1) for k in range(3)]
            pts = _clip(poly, ref, m, list(range(len(ref))), corner_id)
            key = (1 << SHIFT) | f_best
            for pid, p in pts:
                h = float(m @ p - D[f_best])
                if h <= margin and _in_cone(mesh, t, -m, p, sides, flipped):
                    groups.setdefault(key, (-m, []))[1].append((pid, p - 0.5 * h * m, h))
            continue
        f_inc = int(np.argmin(N @ n))                # the block's face most against n
        poly = [(V[v], int(v) + 1) for v in faces[f_inc]]
        pts = _clip(poly, P, n, [(1 << 40) + e for e in side_e], corner_id)
        key = (PATCH << SHIFT) | int(mesh.patch[t]) | (int(flipped) << 59)
        for pid, p in pts:
            h = float(n @ p - dt)
            if h <= margin:
                groups.setdefault(key, (n, []))[1].append((pid, p - 0.5 * h * n, h))
    out = []
    for key, (nrm, pts) in groups.items():
        for pid, p, h in _hull2d(nrm, pts):
            out.append(((mix(key) ^ pid) & ((1 << 63) - 1), nrm, p, h))
    out += edges_out
    if len(out) > MAXP:
        out = sorted(out, key=lambda c: (c[3], c[0]))[:MAXP]
    return sorted(out, key=lambda c: c[0])


def _in_cone(mesh, t, nu, p, sides, flipped):
    """Whether the normal nu (from the mesh) at point p of triangle t lies in the normal cone
    of the feature of t that holds p: its face (nu its normal), a convex or boundary edge
    (between its two faces' normals), or a vertex (against every edge from it). A contact of
    a block's face or edge with a triangle's inside, or with a flat or concave edge, is not a
    contact of the surface (the 'internal edge' of a triangulated floor) and is dropped."""
    n = mesh.normals[t] * (-1.0 if flipped else 1.0)
    if nu @ n >= 1.0 - SAME:
        return True
    tri = mesh.triangles[t]
    P = mesh.vertices[tri]
    tol = 1e-9 * mesh.scale
    cos = -1e-9                                  # the cone's faces, with round-off
    for k in range(3):
        if np.linalg.norm(p - P[k]) <= tol:      # a vertex: nu against every edge from it
            v = int(tri[k])
            ring = np.unique(mesh.triangles[mesh.vtx_tris[mesh.vtx_ptr[v]:mesh.vtx_ptr[v + 1]]])
            d = mesh.vertices[ring[ring != v]] - P[k]
            d /= np.linalg.norm(d, axis=1)[:, None]
            return bool((d @ nu <= -cos).all())
    for k in range(3):
        a, b = P[k], P[(k + 1) % 3]
        e = b - a
        w = p - a
        off = w - (w @ e) / (e @ e) * e
        if np.linalg.norm(off) <= tol:           # on side k: the edge's wedge
            edge = int(mesh.tri_edges[t, k])
            if mesh.edge_flat[edge] or (mesh.edge_tris[edge, 1] >= 0 and
                                        mesh.dihedral[edge] * (-1 if flipped else 1) <= 0):
                return False
            for u in mesh.edge_tris[edge]:
                if u < 0:
                    continue
                nu_u = mesh.normals[u] * (-1.0 if flipped else 1.0)
                c = mesh.vertices[mesh.triangles[u]].mean(axis=0)   # inside u
                out = np.cross(e, nu_u)
                out *= np.sign(out @ (a - c)) or 1.0              # away from u's inside
                if nu @ out < cos * np.linalg.norm(out):
                    return False
            return True
    return False


def _clip(poly, ref, m, side_ids, corner_id):
    """Sutherland-Hodgman: the polygon `poly` ((point, id) list) clipped by the side planes of
    the convex polygon `ref` (counter-clockwise about m); cut points get corner ids."""
    scale = max(np.abs(ref).max(), 1e-300)
    tol = 1e-9 * scale
    for k in range(len(ref)):
        if not poly:
            return []
        p, q = ref[k], ref[(k + 1) % len(ref)]
        side = np.cross(q - p, m)
        side = side / np.sqrt(side @ side)
        off = side @ p
        out = []
        for idx in range(len(poly)):
            (p0, i0), (p1, i1) = poly[idx - 1], poly[idx]
            s0, s1 = side @ p0 - off, side @ p1 - off
            if s1 <= tol:
                if s0 > tol and s1 < 0:
                    out.append((p0 + (s0 / (s0 - s1)) * (p1 - p0),
                                corner_id(side_ids[k], i0, i1)))
                out.append((p1, i1))
            elif s0 < 0:
                out.append((p0 + (s0 / (s0 - s1)) * (p1 - p0), corner_id(side_ids[k], i0, i1)))
        poly = out
    return [(pid, p) for p, pid in poly]


def _hull2d(nrm, pts):
    """The corners of the convex hull (in the plane normal to nrm) of points (id, point, h),
    collinear and repeated points dropped (a corner made twice keeps its smaller id)."""
    if len(pts) <= 2:
        return pts
    u = np.cross(nrm, [1.0, 0.0, 0.0] if abs(nrm[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(nrm, u)
    xy = [(float(p @ u), float(p @ v), pid, k) for k, (pid, p, h) in enumerate(pts)]
    xy.sort()
    scale = max(max(abs(a), abs(b)) for a, b, _, _ in xy) or 1.0
    tol = 1e-12 * scale * scale                  # an area: collinear or repeated points

    def turn(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    hull = []
    for seq in (xy, xy[::-1]):
        part = []
        for c in seq:
            while len(part) >= 2 and turn(part[-2], part[-1], c) <= tol:
                part.pop()
            part.append(c)
        hull += part[:-1]
    seen, out = set(), []
    for c in hull:
        if c[3] not in seen:
            seen.add(c[3])
            out.append(pts[c[3]])
    return out


def poly_contacts(mesh, hulls, x, R, margin, pose=None):
    """Contacts of convex polyhedra (shapes/polyhedron.py Hulls in their body frames, placed
    at x (k, 3) turned by R (k, 3, 3)) with `mesh` placed at pose (translation, rotation) or
    where it was read: a dict of arrays poly (index into hulls), raw, feature (in [0, 64),
    probed per block in raw order), normal (from the mesh to the block), point, gap."""
    rows = {f: [] for f in ("poly", "raw", "normal", "point", "gap")}
    for k, h in enumerate(hulls):
        xk, Rk = np.asarray(x[k], float), np.asarray(R[k], float)
        if pose is not None:
            xk, Rk = (xk - pose[0]) @ pose[1], pose[1].T @ Rk
        V = h.vertices @ Rk.T + xk
        N = h.normals @ Rk.T
        D = h.offsets + N @ xk
        for raw, n, p, g in poly_mesh(mesh, V, h.faces, N, D, h.edges, h.radius,
                                      margin=margin):
            rows["poly"].append(k)
            rows["raw"].append(raw)
            rows["normal"].append(n)
            rows["point"].append(p)
            rows["gap"].append(g)
    m = len(rows["poly"])
    out = {"poly": np.asarray(rows["poly"], np.int64), "raw": np.asarray(rows["raw"], np.int64),
           "feature": np.zeros(m, np.int64), "normal": np.asarray(rows["normal"]).reshape(m, 3),
           "point": np.asarray(rows["point"]).reshape(m, 3), "gap": np.asarray(rows["gap"])}
    _features(out["poly"], out["raw"], out["feature"], m)
    if pose is not None:
        out["normal"] = out["normal"] @ pose[1].T
        out["point"] = out["point"] @ pose[1].T + pose[0]
    return out
