"""Convex polyhedra and boxes on a triangle mesh, through the contact polygon.

For each triangle near a block (the grid's cells over the block's box, then the triangles'
and the block's bounding spheres), separating axes as for two blocks (contact/polyhedra.py):
the triangle's normal, the block's face normals, the cross products of the block's edges with
the triangle's sides; any axis separating by more than the margin ends the triangle. The axis
of least penetration decides, faces preferred (EDGE_BIAS of the block's radius):

- the triangle as reference face: the block's most anti-parallel face clipped against the
  triangle's sides (Sutherland-Hodgman), the points within the margin;
- a face of the block as reference: the triangle clipped against that face's sides;
- an edge of the block with a convex (or boundary) edge of the mesh: one point between the
  two closest edges. A flat or concave edge of the mesh is never an edge contact.

A point whose normal is not in the normal cone of the mesh feature that holds it (a block's
face or edge against a triangle's inside, or against a flat or concave edge: the 'internal
edges' of a triangulated floor, which would stop a block sliding across it) is dropped. The
points of one reference plane (a patch of the mesh on one side, or a face of the block) from
all its triangles are then one polygon, kept as its convex hull's corners: every point of a
plane shares the normal, so the hull's corners carry every wrench the points can, and a brick
on a floor of many triangles touches at its four corners, not four per triangle. At most MAXP
points a block (the deepest), each with a persistent raw id (the plane's and the corner's:
a mesh vertex, a block vertex, or a cut of an edge by a side) and the normal from the mesh
to the block, the point at mid-gap.

`poly_mesh` is the pure-Python twin of the compiled one in kernels/mesh_poly.pyx (same name
and arguments), held equal by tests/test_mesh.py.
"""
import math

import numpy as np

from .mesh import PATCH, SAME, SHIFT, _dot, _features, _kernel, _pose, by_mesh
from .polyhedra import EDGE_BIAS, MAXP, Pack, corner_id, mix_int

MASK = (1 << 63) - 1
BLOCK_FACE = 1            # the kind of a block face's plane in a point group's key


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def poly_mesh(V, T, TC, TR, patch, PN, N, TE, ET, dih, eflat, vptr, vtris, lower, dims, cell,
              cptr, ctris, sides, scale, BV, bvptr, BN, BD, fptr, FV, fvptr, BE, eptr, bradius,
              t, x, R, margin, block, raw, normal, point, gap):
    """Contacts of blocks (packed templates t[k], contact/polyhedra.py's Pack arrays BV ...
    bradius, placed at x[k], R[k] in the mesh's frame) with the mesh (TriangleMesh.arrays()
    and its scale). Writes block index, raw id, normal (mesh to block), point and gap while
    the out arrays have room, each block's points in raw order; returns their number."""
    cap = len(block)
    count = 0
    stamp = np.full(len(T), -1, np.int64)
    for k in range(len(t)):
        tk = int(t[k])
        xk = (float(x[k, 0]), float(x[k, 1]), float(x[k, 2]))
        Rk = R[k]
        pv = []
        for i in range(bvptr[tk], bvptr[tk + 1]):
            a, b, c = BV[i, 0], BV[i, 1], BV[i, 2]
            pv.append(tuple(Rk[m, 0] * a + Rk[m, 1] * b + Rk[m, 2] * c + xk[m]
                            for m in range(3)))
        pn, pd = [], []
        for f in range(fptr[tk], fptr[tk + 1]):
            a, b, c = BN[f, 0], BN[f, 1], BN[f, 2]
            nf = tuple(Rk[m, 0] * a + Rk[m, 1] * b + Rk[m, 2] * c for m in range(3))
            pn.append(nf)
            pd.append(BD[f] + _dot(nf, xk))
        faces = [[int(v) for v in FV[fvptr[f]:fvptr[f + 1]]]
                 for f in range(fptr[tk], fptr[tk + 1])]
        edges = [(int(BE[e, 0]), int(BE[e, 1])) for e in range(eptr[tk], eptr[tk + 1])]
        rad = float(bradius[tk])
        lo, hi = [0, 0, 0], [0, 0, 0]
        empty = False
        for m in range(3):
            lo[m] = max(math.floor((min(p[m] for p in pv) - margin - lower[m]) / cell), 0)
            hi[m] = min(math.floor((max(p[m] for p in pv) + margin - lower[m]) / cell),
                        dims[m] - 1)
            empty = empty or lo[m] > hi[m]
        if empty:
            continue
        pts = []                                   # (key, id, point, h, normal)
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                f = (i * dims[1] + j) * dims[2]
                for e in range(cptr[f + lo[2]], cptr[f + hi[2] + 1]):
                    tt = int(ctris[e])
                    if stamp[tt] == k:
                        continue
                    stamp[tt] = k
                    q = _sub(xk, TC[tt])
                    reach = TR[tt] + rad + margin
                    if _dot(q, q) > reach * reach:
                        continue
                    _triangle(V, T, patch, PN, N, TE, ET, dih, eflat, vptr, vtris, TC, sides,
                              scale, pv, pn, pd, faces, edges, xk, rad, margin, tt, pts)
        for r_, n_, p_, g_ in _merge_points(pts):
            if count < cap:
                block[count] = k
                raw[count] = r_
                normal[count] = n_
                point[count] = p_
                gap[count] = g_
            count += 1
    return count


def _triangle(V, T, patch, PN, N, TE, ET, dih, eflat, vptr, vtris, TC, sides, scale, pv, pn,
              pd, faces, edges, xk, rad, margin, t, pts):
    """The points triangle t gives the block into pts."""
    tri = [int(T[t, 0]), int(T[t, 1]), int(T[t, 2])]
    P = [tuple(float(c) for c in V[v]) for v in tri]
    side_e = [int(TE[t, 0]), int(TE[t, 1]), int(TE[t, 2])]
    pnrm = PN[patch[t]]
    n = (float(pnrm[0]), float(pnrm[1]), float(pnrm[2]))
    dt = _dot(n, P[0])
    flipped = sides == 2 and _dot(n, xk) < dt
    if flipped:                                    # the block on the back: turn the triangle
        n, dt = (-n[0], -n[1], -n[2]), -dt
        tri, P = tri[::-1], P[::-1]
        side_e = [side_e[1], side_e[0], side_e[2]]
    sgn = -1.0 if flipped else 1.0
    st, hmax = math.inf, -math.inf
    for v in pv:
        h = _dot(n, v) - dt
        st, hmax = min(st, h), max(hmax, h)
    if st > margin or (sides == 1 and hmax < -rad):
        return
    sf, fbest = -math.inf, -1
    for f in range(len(pn)):
        s = math.inf
        for q in P:
            s = min(s, _dot(pn[f], q) - pd[f])
        if s > sf:
            sf, fbest = s, f
    if sf > margin:
        return
    se, kbest, jbest, Lb = -math.inf, -1, -1, None
    for kk in range(3):
        ub = _sub(P[(kk + 1) % 3], P[kk])
        e = side_e[kk]
        convex = ET[e, 1] < 0 or dih[e] * sgn > 0
        for j, (a, b) in enumerate(edges):
            ua = _sub(pv[b], pv[a])
            L = _cross(ua, ub)
            ln = math.sqrt(_dot(L, L))
            if ln <= 1e-9 * math.sqrt(_dot(ua, ua) * _dot(ub, ub)):
                continue
            L = (L[0] / ln, L[1] / ln, L[2] / ln)
            if _dot(L, _sub(xk, P[kk])) < 0:
                L = (-L[0], -L[1], -L[2])             # towards the block
            smin, tmax = math.inf, -math.inf
            for v in pv:
                smin = min(smin, _dot(L, v))
            for q in P:
                tmax = max(tmax, _dot(L, q))
            s = smin - tmax
            if s > margin:
                return
            if convex and s > se:
                se, kbest, jbest, Lb = s, kk, j, L
    bias = EDGE_BIAS * rad
    if kbest >= 0 and se > max(st, sf) + bias:
        pa = pv[edges[jbest][0]]
        ua = _sub(pv[edges[jbest][1]], pa)
        pb = P[kbest]
        ub = _sub(P[(kbest + 1) % 3], pb)
        w = _sub(pa, pb)
        A_, B_, C_ = _dot(ua, ua), _dot(ua, ub), _dot(ub, ub)
        D_, E_ = _dot(ua, w), _dot(ub, w)
        den = A_ * C_ - B_ * B_
        ta = min(max((B_ * E_ - C_ * D_) / den, 0.0), 1.0)
        tb = min(max((A_ * E_ - B_ * D_) / den, 0.0), 1.0)
        on_mesh = tuple(pb[m] + tb * ub[m] for m in range(3))
        if _in_cone(V, T, N, TE, ET, dih, eflat, vptr, vtris, TC, scale, t, flipped, Lb,
                    on_mesh):
            point = tuple(0.5 * (pa[m] + ta * ua[m] + on_mesh[m]) for m in range(3))
            key = (2 << SHIFT) | (side_e[kbest] << 20) | jbest
            pts.append((key, 0, point, se, Lb))
        return
    if sf > st + bias:                             # a face of the block is the reference
        m_ = pn[fbest]
        ref = [pv[v] for v in faces[fbest]]
        poly = [(P[i], tri[i] + 1) for i in range(3)]
        out = _clip(poly, ref, m_, list(range(len(ref))))
        nrm = (-m_[0], -m_[1], -m_[2])
        for p, pid in out:
            h = _dot(m_, p) - pd[fbest]
            if h <= margin and _in_cone(V, T, N, TE, ET, dih, eflat, vptr, vtris, TC, scale,
                                        t, flipped, nrm, p):
                pts.append(((BLOCK_FACE << SHIFT) | fbest, pid,
                            (p[0] - 0.5 * h * m_[0], p[1] - 0.5 * h * m_[1],
                             p[2] - 0.5 * h * m_[2]), h, nrm))
        return
    finc, best = -1, math.inf                      # the block's face most against n
    for f in range(len(pn)):
        c = _dot(pn[f], n)
        if c < best:
            best, finc = c, f
    poly = [(pv[v], v + 1) for v in faces[finc]]
    out = _clip(poly, P, n, [(1 << 40) + e for e in side_e])
    key = (PATCH << SHIFT) | int(patch[t]) | (int(flipped) << 59)
    for p, pid in out:
        h = _dot(n, p) - dt
        if h <= margin:
            pts.append((key, pid, (p[0] - 0.5 * h * n[0], p[1] - 0.5 * h * n[1],
                                   p[2] - 0.5 * h * n[2]), h, n))


def _in_cone(V, T, N, TE, ET, dih, eflat, vptr, vtris, TC, scale, t, flipped, nu, p):
    """Whether the normal nu (from the mesh) at point p of triangle t lies in the normal cone
    of the feature of t that holds p: its face (nu its normal), a convex or boundary edge
    (between its two faces' normals), or a vertex (no edge from it pointing along nu)."""
    sgn = -1.0 if flipped else 1.0
    nt = N[t]
    if nu[0] * nt[0] * sgn + nu[1] * nt[1] * sgn + nu[2] * nt[2] * sgn >= 1.0 - SAME:
        return True
    tol = 1e-9 * scale
    tri = [int(T[t, 0]), int(T[t, 1]), int(T[t, 2])]
    P = [tuple(float(c) for c in V[v]) for v in tri]
    for kk in range(3):
        d = _sub(p, P[kk])
        if math.sqrt(_dot(d, d)) <= tol:           # a vertex: no edge from it along nu
            v = tri[kk]
            for q in range(vptr[v], vptr[v + 1]):
                for w in T[vtris[q]]:
                    if w == v:
                        continue
                    d = _sub(V[w], P[kk])
                    ln = math.sqrt(_dot(d, d))
                    if _dot(d, nu) > 1e-9 * ln:
                        return False
            return True
    for kk in range(3):
        a, b = P[kk], P[(kk + 1) % 3]
        e = _sub(b, a)
        w = _sub(p, a)
        s = _dot(w, e) / _dot(e, e)
        off = (w[0] - s * e[0], w[1] - s * e[1], w[2] - s * e[2])
        if math.sqrt(_dot(off, off)) <= tol:       # on side kk: the edge's wedge
            edge = int(TE[t, kk])
            if eflat[edge] or (ET[edge, 1] >= 0 and dih[edge] * sgn <= 0):
                return False
            for u in (ET[edge, 0], ET[edge, 1]):
                if u < 0:
                    continue
                nu_u = (N[u, 0] * sgn, N[u, 1] * sgn, N[u, 2] * sgn)
                out = _cross(e, nu_u)
                if _dot(out, _sub(a, TC[u])) < 0:  # away from u's inside
                    out = (-out[0], -out[1], -out[2])
                if _dot(nu, out) < -1e-9 * math.sqrt(_dot(out, out)):
                    return False
            return True
    return False


def _clip(poly, ref, m, side_ids):
    """Sutherland-Hodgman: polygon `poly` ((point, id) list) clipped by the side planes of
    the convex polygon `ref` (counter-clockwise about m); cut points get corner ids. Returns
    (point, id) pairs."""
    scale = 0.0
    for q in ref:
        scale = max(scale, abs(q[0]), abs(q[1]), abs(q[2]))
    tol = 1e-9 * (scale if scale > 0 else 1e-300)
    for k in range(len(ref)):
        if not poly:
            return []
        p, q = ref[k], ref[(k + 1) % len(ref)]
        side = _cross(_sub(q, p), m)
        ln = math.sqrt(_dot(side, side))
        side = (side[0] / ln, side[1] / ln, side[2] / ln)
        off = _dot(side, p)
        out = []
        for idx in range(len(poly)):
            (p0, i0), (p1, i1) = poly[idx - 1], poly[idx]
            s0, s1 = _dot(side, p0) - off, _dot(side, p1) - off
            if s1 <= tol:
                if s0 > tol and s1 < 0:
                    tt = s0 / (s0 - s1)
                    out.append((tuple(p0[c] + tt * (p1[c] - p0[c]) for c in range(3)),
                                corner_id(side_ids[k], i0, i1)))
                out.append((p1, i1))
            elif s0 < 0:
                tt = s0 / (s0 - s1)
                out.append((tuple(p0[c] + tt * (p1[c] - p0[c]) for c in range(3)),
                            corner_id(side_ids[k], i0, i1)))
        poly = out
    return poly


def _merge_points(pts):
    """One polygon per reference plane: the corners of the convex hull of each group's points
    (collinear and repeated ones dropped); then at most MAXP, the deepest; in raw order as
    (raw, normal, point, gap)."""
    order = sorted(range(len(pts)), key=lambda q: (pts[q][0], q))
    keep = []
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and pts[order[end]][0] == pts[order[start]][0]:
            end += 1
        group = order[start:end]
        if len(group) == 2 and pts[group[0]][1] == pts[group[1]][1]:
            group = group[:1]                      # one corner met from two triangles
        keep += group if len(group) <= 2 else _hull2d(pts, group)
        start = end
    out = [((mix_int(pts[q][0]) ^ pts[q][1]) & MASK, pts[q][4], pts[q][2], pts[q][3])
           for q in keep]
    if len(out) > MAXP:
        out = sorted(out, key=lambda c: (c[3], c[0]))[:MAXP]
    return sorted(out, key=lambda c: c[0])


def _hull2d(pts, group):
    """The members of `group` (indices into pts) at the corners of their convex hull, in the
    plane normal to the group's normal (Andrew's monotone chain; turns within 1e-12 of the
    extent squared are straight, at the chains' ends too)."""
    nrm = pts[group[0]][4]
    axis = (1.0, 0.0, 0.0) if abs(nrm[0]) < 0.9 else (0.0, 1.0, 0.0)
    u = _cross(nrm, axis)
    ln = math.sqrt(_dot(u, u))
    u = (u[0] / ln, u[1] / ln, u[2] / ln)
    v = _cross(nrm, u)
    xy = sorted((_dot(pts[q][2], u), _dot(pts[q][2], v), pts[q][1], q) for q in group)
    scale = 0.0
    for a, b, _, _ in xy:
        scale = max(scale, abs(a), abs(b))
    tol = 1e-12 * scale * scale

    def turn(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    cycle = []
    for seq in (xy, xy[::-1]):
        part = []
        for c in seq:
            while len(part) >= 2 and turn(part[-2], part[-1], c) <= tol:
                part.pop()
            part.append(c)
        cycle += part[:-1]
    # a chain's first point may lie on an edge that round-off tilts past the sort's axis
    # (a nearly vertical side: its far end sorts after it): drop every corner of the cycle
    # straight between its neighbours, and repeated ones
    changed = True
    while changed and len(cycle) > 2:
        changed = False
        for k in range(len(cycle)):
            if turn(cycle[k - 1], cycle[k], cycle[(k + 1) % len(cycle)]) <= tol:
                del cycle[k]
                changed = True
                break
    return sorted(set(c[3] for c in cycle))


# -- the wrappers -----------------------------------------------------------------------------
def block_contacts(mesh, packed, t, x, R, margin, pose=None, kernel=None):
    """Contacts of blocks (templates t (k,) of the packed arrays `packed`, Pack.arrays, at
    x (k, 3) turned by R (k, 3, 3)) with `mesh` placed at pose (translation, rotation) or where
    it was read: a dict of arrays block (index into t), raw, feature (in [0, 64), probed per
    block in raw order), normal (from the mesh to the block), point, gap (<= margin)."""
    xm, Rm = np.asarray(x, float), np.asarray(R, float)
    if pose is not None:
        xm, _ = _pose(mesh, xm, pose)
        Rm = np.einsum("ji,njk->nik", pose[1], Rm)
    xm, Rm = np.ascontiguousarray(xm), np.ascontiguousarray(Rm)
    a, b = mesh.arrays(), packed
    f = kernel or _kernel(poly_mesh, "mesh_poly")
    cap = 8 * len(t) + 16
    while True:
        out = dict(block=np.zeros(cap, np.int64), raw=np.zeros(cap, np.int64),
                   normal=np.zeros((cap, 3)), point=np.zeros((cap, 3)), gap=np.zeros(cap))
        n = f(a["V"], a["T"], a["TC"], a["TR"], a["patch"], a["PN"], a["N"], a["TE"], a["ET"],
              a["dih"], a["eflat"], a["vptr"], a["vtris"], a["lower"], a["dims"],
              float(a["cell"]), a["cptr"], a["ctris"], int(mesh.sides), float(mesh.scale),
              b["V"], b["vptr"], b["N"], b["D"], b["fptr"], b["FV"], b["fvptr"], b["E"],
              b["eptr"], b["radius"], np.ascontiguousarray(t, np.int64), xm, Rm,
              float(margin), out["block"], out["raw"], out["normal"], out["point"],
              out["gap"])
        if n <= cap:
            break
        cap = n
    out = {k: v[:n] for k, v in out.items()}
    out["feature"] = np.zeros(n, np.int64)
    _features(out["block"], out["raw"], out["feature"], n)
    if pose is not None:
        out["normal"] = np.einsum("ij,nj->ni", pose[1], out["normal"])
        out["point"] = np.einsum("ij,nj->ni", pose[1], out["point"]) + pose[0]
    return out


def poly_contacts(mesh, hulls, x, R, margin, pose=None, kernel=None):
    """block_contacts for a list of shapes/polyhedron.py Hulls (one per block), packed here;
    the dict's block indexes hulls."""
    pack = Pack()
    uniq = {}
    for h in hulls:
        uniq.setdefault(id(h), (len(uniq), h))
    table = {i: h for i, h in uniq.values()}
    t = pack.index(np.array([uniq[id(h)][0] for h in hulls], np.int64), table.__getitem__)
    return block_contacts(mesh, pack.arrays, t, x, R, margin, pose, kernel)


def block_pairs(A, rows, mesh, k, margin, pose=None):
    """The contacts of blocks `rows` (polyhedra or boxes, all of one kind, of the placed-shape
    table A: shape, template, x, q) with mesh obstacle k, as a pair function of
    contact/narrow.py returns them (a, b, feature, normal from the mesh to the block, point,
    gap); None when none. The blocks' templates are contact/polyhedra.py's PACK's."""
    from ..dynamics.rotation import quat_to_matrix
    from .polyhedra import PACK, _hull_of

    rows = np.asarray(rows, np.int64)
    if not len(rows):
        return None
    t = PACK.index(A.template[rows], _hull_of(int(A.shape[rows[0]])))
    c = block_contacts(mesh, PACK.arrays, t, A.x[rows], quat_to_matrix(A.q[rows]), margin,
                       pose)
    if not len(c["gap"]):
        return None
    return {"a": rows[c["block"]], "b": np.full(len(c["gap"]), k, np.int64),
            "feature": c["feature"], "normal": c["normal"], "point": c["point"],
            "gap": c["gap"]}


block_on_mesh = by_mesh(block_pairs)     # boxes and polyhedra on mesh obstacles (narrow.py)
