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
from .polyhedra import mix_int

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
        f = mix_int(int(raw[q])) % 64
        while used >> f & 1:
            f = (f + 1) % 64
        used |= 1 << f
        feature[q] = f


# -- the wrappers: placement, room, compiled or twin ---------------------------------------
def _kernel(twin, module="mesh"):
    """The compiled kernel of the same name as `twin` in parsolve._kernels.<module>, or the
    twin itself when PARSOLVE_KERNELS=python or nothing is built."""
    modules = compiled(module, warn=False)
    return twin if modules is None else getattr(modules[0], twin.__name__, twin)


def _pose(mesh, x, pose):
    """Points x (n, 3) in the mesh's frame; pose (translation (3,), rotation (3, 3)) or None:
    the mesh where it was read."""
    if pose is None:
        return np.ascontiguousarray(x, float), None
    t, R = pose                   # einsum, not BLAS: a row's bits whatever the rows' number
    return np.ascontiguousarray(np.einsum("ji,nj->ni", R, np.asarray(x, float) - t)), R


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
        out["normal"] = np.einsum("ij,nj->ni", R, out["normal"])
        out["point"] = np.einsum("ij,nj->ni", R, out["point"]) + pose[0]
    return out


def sphere_pairs(A, s, mesh, k, margin, pose=None):
    """The contacts of spheres s (rows of the placed-shape table A: x, radius) with mesh
    obstacle k, as a pair function of contact/narrow.py returns them: a (sphere rows), b (k),
    feature (< 64), normal (from the mesh to the sphere), point, gap; None when none."""
    c = sphere_contacts(mesh, A.x[s], A.radius[s], margin, pose)
    if not len(c["gap"]):
        return None
    return {"a": np.asarray(s, np.int64)[c["sphere"]], "b": np.full(len(c["gap"]), k, np.int64),
            "feature": c["feature"], "normal": c["normal"], "point": c["point"],
            "gap": c["gap"]}


def by_mesh(pairs):
    """A pair function of contact/narrow.py (A's rows i against mesh obstacles j of the
    placed table B) from pairs(A, rows, mesh, k, margin, pose), called once per mesh."""
    def f(A, i, B, j, margin):
        from ..shapes import mesh as shape

        parts = []
        for k in np.unique(j):
            got = pairs(A, np.asarray(i)[j == k], shape.mesh(int(B.template[k])), int(k),
                        margin, shape.pose(B, k))
            if got is not None:
                parts.append(got)
        if not parts:
            return None
        return {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    f.__name__ = f.__qualname__ = f"{pairs.__name__}_by_mesh"
    return f


sphere_on_mesh = by_mesh(sphere_pairs)
