"""Convex polyhedra in contact: separating axes, then the contact polygon by clipping.

For a pair (A, B) the separation along every face normal of A and of B (the deepest vertex of
the other below the face) and along the cross product of every pair of edges that forms a face
of the Minkowski difference (Gregorius' Gauss-map test, so that only edges that can touch are
tried) gives the axis of least penetration; any axis separating by more than the margin ends
the pair. Faces are preferred (an edge axis must beat them by 1e-3 of the smaller body's
radius, as ODE's dBoxBox and Bullet's polyhedral clipping do): the incident face of the other
body (the most anti-parallel one) is clipped against the side planes of the reference face
(Sutherland-Hodgman); corners closer than 1e-6 of the reference body's radius are merged and
corners on a straight side dropped (two nearly aligned faces give four points, not eight), and
each corner within the margin is a contact point, at mid-gap. An edge axis gives one point
between the two closest edges.

Each point has a persistent feature: a hash of the reference face and of how the corner was
made (an incident vertex, or an incident edge cut by a reference side), reduced to one of the
64 features of a contact key by probing, so that a point that persists keeps its key (warm
start) and the points of one pair stay distinct. At most MAXP points per pair (the deepest).

`poly_contacts` is the pure-Python twin of kernels/polyhedra.pyx (same name and arguments),
held equal by tests/test_polyhedra.py; `contacts()` picks the compiled one when built.
"""
import numpy as np

from .._kernels import compiled
from ..tables.keys import mix

MAXP = 16                 # contact points per pair at most
EDGE_BIAS = 1e-3          # an edge axis must beat the faces by this times the smaller radius
_M = (1 << 64) - 1


def mix_int(z):
    """splitmix64's finaliser (tables/keys.py) on a Python int taken modulo 2**64."""
    return int(mix(np.uint64(z & _M)))


def corner_id(side, id0, id1):
    """The id of the corner made where the segment between corners id0, id1 crosses side
    plane `side` of the reference face."""
    lo, hi = min(id0, id1), max(id0, id1)
    return mix_int(mix_int(lo) + hi * 31 + (side + 1) * 0x10000)


def features(ids, count):
    """Distinct features in [0, 64) for the first `count` ids, by linear probing in order."""
    used = 0
    out = []
    for k in range(count):
        f = ids[k] % 64
        while used >> f & 1:
            f = (f + 1) % 64
        used |= 1 << f
        out.append(f)
    return out


def poly_contacts(V, vptr, N, D, fptr, FV, fvptr, E, eptr, radius, ta, xa, Ra, tb, xb, Rb,
                  margin, pair, feature, normal, point, gap):
    """Contacts of polyhedron pairs k: template ta[k] at (xa[k], Ra[k]) as A and tb[k] at
    (xb[k], Rb[k]) as B, templates packed (see Pack). Writes up to MAXP points per pair into
    the out arrays (pair index, feature, normal from B to A, point, gap) and returns their
    count."""
    count = 0
    for k in range(len(ta)):
        pts = _pair(V, vptr, N, D, fptr, FV, fvptr, E, eptr, radius, ta[k], xa[k], Ra[k],
                    tb[k], xb[k], Rb[k], margin)
        for f, n, p, g in pts:
            pair[count] = k
            feature[count] = f
            normal[count] = n
            point[count] = p
            gap[count] = g
            count += 1
    return count


def _world(V, vptr, N, D, fptr, t, x, R):
    v = V[vptr[t]:vptr[t + 1]] @ R.T + x
    n = N[fptr[t]:fptr[t + 1]] @ R.T
    d = D[fptr[t]:fptr[t + 1]] + n @ x
    return v, n, d


def _face_query(n, d, v_other):
    """(largest separation, its face) of the other body's vertices below these faces."""
    best, face = -np.inf, -1
    for f in range(len(n)):
        s = np.inf
        for p in v_other:
            s = min(s, n[f, 0] * p[0] + n[f, 1] * p[1] + n[f, 2] * p[2] - d[f])
        if s > best:
            best, face = s, f
    return best, face


def _pair(V, vptr, N, D, fptr, FV, fvptr, E, eptr, radius, ta, xa, Ra, tb, xb, Rb, margin):
    va, na, da = _world(V, vptr, N, D, fptr, ta, xa, Ra)
    vb, nb, db = _world(V, vptr, N, D, fptr, tb, xb, Rb)
    sa, fa = _face_query(na, da, vb)
    if sa > margin:
        return []
    sb, fb = _face_query(nb, db, va)
    if sb > margin:
        return []
    bias = EDGE_BIAS * min(radius[ta], radius[tb])
    # edge pairs that form a face of the Minkowski difference
    se, ea_best, eb_best, L_best = -np.inf, -1, -1, None
    Ea, Eb = E[eptr[ta]:eptr[ta + 1]], E[eptr[tb]:eptr[tb + 1]]
    for i in range(len(Ea)):
        a, b = na[Ea[i, 2]], na[Ea[i, 3]]
        pa = va[Ea[i, 0]]
        ua = va[Ea[i, 1]] - pa
        bxa = np.cross(b, a)
        for j in range(len(Eb)):
            c, d = -nb[Eb[j, 2]], -nb[Eb[j, 3]]
            dxc = np.cross(d, c)
            cba, dba = c @ bxa, d @ bxa
            adc, bdc = a @ dxc, b @ dxc
            if not (cba * dba < 0 and adc * bdc < 0 and cba * bdc > 0):
                continue
            pb = vb[Eb[j, 0]]
            ub = vb[Eb[j, 1]] - pb
            L = np.cross(ua, ub)
            ln = np.sqrt(L @ L)
            if ln <= 1e-9 * np.sqrt((ua @ ua) * (ub @ ub)):
                continue                                 # parallel edges: a face axis
            L = L / ln
            if L @ (pa - xa) < 0:
                L = -L                                   # out of A
            s = L @ (pb - pa)
            if s > margin:
                return []
            if s > se:
                se, ea_best, eb_best, L_best = s, i, j, L
    if se > max(sa, sb) + bias:
        return _edge_contact(va, vb, Ea[ea_best], Eb[eb_best], L_best, se, ea_best, eb_best)
    if sb > sa + bias:
        # reference face on B: normal out of B, from B to A
        return _face_contact(vb, nb, db, FV, fvptr, fptr[tb], fb, va, na, FV, fvptr,
                             fptr[ta], margin, 1, 1.0, radius[tb])
    return _face_contact(va, na, da, FV, fvptr, fptr[ta], fa, vb, nb, FV, fvptr, fptr[tb],
                         margin, 0, -1.0, radius[ta])


def _edge_contact(va, vb, ea, eb, L, s, i, j):
    """The closest points of the two edges; L out of A, so the normal from B to A is -L."""
    pa, ua = va[ea[0]], va[ea[1]] - va[ea[0]]
    pb, ub = vb[eb[0]], vb[eb[1]] - vb[eb[0]]
    w = pa - pb
    A, Bc, C = ua @ ua, ua @ ub, ub @ ub
    Dd, Ee = ua @ w, ub @ w
    den = A * C - Bc * Bc
    ta = min(max((Bc * Ee - C * Dd) / den, 0.0), 1.0)
    tb = min(max((A * Ee - Bc * Dd) / den, 0.0), 1.0)
    point = 0.5 * (pa + ta * ua + pb + tb * ub)
    fid = mix_int((1 << 50) + i * 65536 + j)
    return [(fid % 64, -L, point, s)]


def _face_contact(vr, nr, dr, FV, fvptr, f0r, fr, vi, ni, FVi, fvptri, f0i, margin, ref_b,
                  sign, rad):
    """Clip the incident face of I against reference face fr of R; sign turns R's outward
    normal into the contact normal (from B to A)."""
    m = nr[fr]
    # incident face: the most anti-parallel to m
    fi, best = -1, np.inf
    for f in range(len(ni)):
        c = ni[f] @ m
        if c < best:
            best, fi = c, f
    inc = FVi[fvptri[f0i + fi]:fvptri[f0i + fi + 1]]
    poly = [(vi[v], int(v) + 1) for v in inc]
    ref = FV[fvptr[f0r + fr]:fvptr[f0r + fr + 1]]
    scale = max(np.abs(vr).max(), 1e-300)
    tol = 1e-9 * scale
    nref = len(ref)
    for k in range(nref):
        if not poly:
            return []
        p, q = vr[ref[k]], vr[ref[(k + 1) % nref]]
        side = np.cross(q - p, m)
        side = side / np.sqrt(side @ side)
        off = side @ p
        out = []
        for idx in range(len(poly)):       # inside within tol; cut where a side crosses it
            (p0, i0), (p1, i1) = poly[idx - 1], poly[idx]
            s0, s1 = side @ p0 - off, side @ p1 - off
            if s1 <= tol:
                if s0 > tol and s1 < 0:
                    out.append((p0 + (s0 / (s0 - s1)) * (p1 - p0), corner_id(k, i0, i1)))
                out.append((p1, i1))
            elif s0 < 0:
                out.append((p0 + (s0 / (s0 - s1)) * (p1 - p0), corner_id(k, i0, i1)))
        poly = out
    # merge corners within eps, drop corners on a straight side, keep those within margin
    eps = 1e-6 * rad
    merged = []
    for p, pid in poly:
        if not any(np.abs(p - q).max() <= eps for q, _ in merged):
            merged.append((p, pid))
    pts = []
    dref = dr[fr]
    n = len(merged)
    for i, (p, pid) in enumerate(merged):
        if n >= 3:
            a, b = merged[i - 1][0], merged[(i + 1) % n][0]
            d = b - a
            t = (p - a) @ d / (d @ d)
            e = p - a - t * d
            if 0 < t < 1 and np.sqrt(e @ e) <= eps:
                continue
        h = m @ p - dref
        if h <= margin:
            pts.append((p, pid, h))
    if len(pts) > MAXP:
        order = sorted(range(len(pts)), key=lambda k: (pts[k][2], k))[:MAXP]
        pts = [pts[k] for k in sorted(order)]
    base = mix_int((ref_b << 40) + (fr << 20))
    ids = [mix_int(base ^ pid) for _, pid, _ in pts]
    feats = features(ids, len(pts))
    return [(f, sign * m, p - 0.5 * h * m, h) for f, (p, _, h) in zip(feats, pts)]


# ------------------------------------------------------------------------------------------
class Pack:
    """The templates in use packed into flat arrays for the kernel, one index per template
    key (append-only; rebuilt when a new template appears): vertices V with vptr, face normals
    N and offsets D with fptr, face vertex indices FV (local) with fvptr (global faces), edges
    E (local vertex, vertex, face, face) with eptr, bounding radius per template."""

    def __init__(self):
        self.keys = {}
        self.hulls = []
        self.arrays = None

    def index(self, keys, hull_of):
        """Template indices of `keys` (int64 array); hull_of(key) makes a missing Hull."""
        uniq = np.unique(keys)
        new = [int(k) for k in uniq if int(k) not in self.keys]
        for k in new:
            self.keys[k] = len(self.hulls)
            self.hulls.append(hull_of(k))
        if new or self.arrays is None:
            self._build()
        lut = np.array([self.keys[int(k)] for k in uniq], np.int64)
        return lut[np.searchsorted(uniq, keys)]

    def _build(self):
        hs = self.hulls
        cum = lambda sizes: np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)  # noqa
        faces = [f for h in hs for f in h.faces]
        self.arrays = dict(
            V=np.ascontiguousarray(np.concatenate([h.vertices for h in hs]), float),
            vptr=cum([len(h.vertices) for h in hs]),
            N=np.ascontiguousarray(np.concatenate([h.normals for h in hs]), float),
            D=np.ascontiguousarray(np.concatenate([h.offsets for h in hs]), float),
            fptr=cum([len(h.faces) for h in hs]),
            FV=np.concatenate(faces).astype(np.int64), fvptr=cum([len(f) for f in faces]),
            E=np.ascontiguousarray(np.concatenate([h.edges for h in hs]), np.int64),
            eptr=cum([len(h.edges) for h in hs]),
            radius=np.array([h.radius for h in hs], float))


PACK = Pack()


def _kernel(twin=None):
    """The compiled kernel of the same name as `twin` (default poly_contacts), or the twin
    itself when PARSOLVE_KERNELS=python or nothing is built."""
    twin = twin or poly_contacts
    modules = compiled("polyhedra", warn=False)
    return twin if modules is None else getattr(modules[0], twin.__name__, twin)


def contacts(ta, xa, Ra, tb, xb, Rb, margin, kernel=None):
    """Contact points of the pairs of packed templates ta, tb (PACK's indices) as a dict of
    arrays (pair, feature, normal, point, gap)."""
    n = len(ta)
    cap = MAXP * n
    out = dict(pair=np.zeros(cap, np.int64), feature=np.zeros(cap, np.int64),
               normal=np.zeros((cap, 3)), point=np.zeros((cap, 3)), gap=np.zeros(cap))
    a = PACK.arrays
    f = kernel or _kernel()
    c = f(a["V"], a["vptr"], a["N"], a["D"], a["fptr"], a["FV"], a["fvptr"], a["E"], a["eptr"],
          a["radius"], np.ascontiguousarray(ta, np.int64), np.ascontiguousarray(xa, float),
          np.ascontiguousarray(Ra, float), np.ascontiguousarray(tb, np.int64),
          np.ascontiguousarray(xb, float), np.ascontiguousarray(Rb, float), float(margin),
          out["pair"], out["feature"], out["normal"], out["point"], out["gap"])
    return {k: v[:c] for k, v in out.items()}


# -- pair functions of contact/narrow.py ---------------------------------------------------
def _hull_of(kind):
    """The convex hull by template key of a shape kind (polyhedron.Hull)."""
    from .. import shapes

    return shapes.KINDS[int(kind)].hull


def poly_poly(A, i, B, j, margin):
    """Contacts of convex polyhedra (or a box as one: A's or B's kind decides) as a pair
    function of contact/narrow.py."""
    from ..dynamics.rotation import quat_to_matrix

    if len(i) == 0:
        return None
    ka, kb = int(A.shape[i[0]]), int(B.shape[j[0]])
    ta = PACK.index(A.template[i], _hull_of(ka))
    tb = PACK.index(B.template[j], _hull_of(kb))
    c = contacts(ta, A.x[i], quat_to_matrix(A.q[i]), tb, B.x[j], quat_to_matrix(B.q[j]),
                 margin)
    return {"a": i[c["pair"]], "b": j[c["pair"]], "feature": c["feature"],
            "normal": c["normal"], "point": c["point"], "gap": c["gap"]}


def poly_plane(A, rows, B, j, margin):
    """One point per vertex within the margin of the plane (feature: the vertex, probed)."""
    from ..dynamics.rotation import quat_to_matrix
    from ..shapes import polyhedron

    if len(rows) == 0:
        return None
    R = quat_to_matrix(A.q[rows])
    out = {"a": [], "b": [], "feature": [], "normal": [], "point": [], "gap": []}
    for k in range(len(rows)):
        p, n = B.point[j[k]], B.normal[j[k]]
        v = A.x[rows[k]] + polyhedron.hull(int(A.template[rows[k]])).vertices @ R[k].T
        g = (v - p) @ n
        near = np.flatnonzero(g <= margin)
        if len(near) > MAXP:
            near = np.sort(near[np.argsort(g[near], kind="stable")[:MAXP]])
        out["a"] += [rows[k]] * len(near)
        out["b"] += [j[k]] * len(near)
        out["feature"] += features([int(v) for v in near], len(near))
        out["normal"] += [n] * len(near)
        out["point"] += list(v[near] - np.outer(0.5 * g[near], n))
        out["gap"] += list(g[near])
    m = len(out["a"])
    return {"a": np.asarray(out["a"], np.int64), "b": np.asarray(out["b"], np.int64),
            "feature": np.asarray(out["feature"], np.int64),
            "normal": np.asarray(out["normal"], float).reshape(m, 3),
            "point": np.asarray(out["point"], float).reshape(m, 3),
            "gap": np.asarray(out["gap"], float)}


def sphere_poly(A, s, B, p, margin, kernel=None):
    """The closest point of polyhedron p to sphere s's centre (a centre inside leaves by the
    face of least depth); the normal from the polyhedron to the sphere. The points' search
    is sphere_closest (compiled when built)."""
    from ..dynamics.rotation import quat_to_matrix
    from ..shapes import polyhedron

    if len(s) == 0:
        return None
    blocks, at = np.unique(p, return_inverse=True)
    R = quat_to_matrix(B.q[blocks])[at]
    c = np.ascontiguousarray(np.einsum("nji,nj->ni", R, A.x[s] - B.x[p]))   # in p's frame
    t = PACK.index(B.template[p], polyhedron.hull)
    a = PACK.arrays
    nl, dist, y = np.zeros((len(s), 3)), np.zeros(len(s)), np.zeros((len(s), 3))
    f = kernel or _kernel(sphere_closest)
    f(a["V"], a["vptr"], a["N"], a["D"], a["fptr"], a["FV"], a["fvptr"],
      np.ascontiguousarray(t, np.int64), c, np.ascontiguousarray(A.radius[s] + margin, float),
      y, dist, nl)
    keep = np.isfinite(dist)
    s, p, R, nl, dist = s[keep], p[keep], R[keep], nl[keep], dist[keep]
    n_out = np.einsum("nij,nj->ni", R, nl)
    gap = dist - A.radius[s]
    pt = A.x[s] - n_out * (A.radius[s] + 0.5 * gap)[:, None]
    return {"a": np.asarray(s, np.int64), "b": np.asarray(p, np.int64),
            "feature": np.zeros(len(s), np.int64), "normal": n_out, "point": pt, "gap": gap}


class _Packed:
    """Template t of the packed arrays as closest_points reads a Hull."""

    def __init__(self, V, vptr, N, D, fptr, FV, fvptr, t):
        self.vertices = V[vptr[t]:vptr[t + 1]]
        self.normals, self.offsets = N[fptr[t]:fptr[t + 1]], D[fptr[t]:fptr[t + 1]]
        self.faces = [FV[fvptr[g]:fvptr[g + 1]] for g in range(fptr[t], fptr[t + 1])]


def sphere_closest(V, vptr, N, D, fptr, FV, fvptr, t, c, reach, y, dist, normal):
    """For points c (n, 3), each in the frame of packed template t[k] (PACK's arrays): where
    a face plane lies farther than reach[k], dist[k] = inf; else y[k], dist[k], normal[k] as
    closest_points gives them. Writes y, dist, normal; the twin of the compiled kernel."""
    for key in np.unique(t):
        rows = np.flatnonzero(t == key)
        h = _Packed(V, vptr, N, D, fptr, FV, fvptr, int(key))
        plane = c[rows] @ h.normals.T - h.offsets
        near = plane.max(axis=1) <= reach[rows]
        dist[rows[~near]] = np.inf
        rows = rows[near]
        y[rows], dist[rows], normal[rows] = closest_points(h, c[rows], plane[near])


def closest_points(h, c, plane=None):
    """For points c (n, 3) in hull h's frame: the nearest points y of the hull, the signed
    distances (< 0 inside: the depth below the nearest face) and the unit normals (c - y
    outside, that face's normal inside). plane: c's heights over the face planes (n, nf)
    if known. A point whose projection lies inside a face skips that face's edges."""
    if plane is None:
        plane = c @ h.normals.T - h.offsets                  # (n, nf)
    best = np.full(len(c), np.inf)
    y = c.copy()
    for f, face in enumerate(h.faces):
        at = np.flatnonzero(plane[:, f] > 0)                 # the points above this face only
        if not len(at):
            continue
        nf, cf = h.normals[f], c[at]
        q = cf - plane[at, f, None] * nf                      # projection on the plane
        poly = h.vertices[face]
        ends = np.roll(poly, -1, axis=0)
        inside = np.ones(len(at), bool)
        for a, b in zip(poly, ends):
            inside &= np.cross(b - a, q - a) @ nf >= 0
        cand = q.copy()
        out = np.flatnonzero(~inside)
        if len(out):                                     # the nearest point of the edges
            co = cf[out]
            edge_best, edge_y = np.full(len(out), np.inf), q[out]
            for a, b in zip(poly, ends):
                e = b - a
                t = np.clip((co - a) @ e / (e @ e), 0.0, 1.0)
                z = a + t[:, None] * e
                dz = np.einsum("ij,ij->i", co - z, co - z)
                closer = dz < edge_best
                edge_best[closer], edge_y[closer] = dz[closer], z[closer]
            cand[out] = edge_y
        dc = np.einsum("ij,ij->i", cf - cand, cf - cand)
        take = dc < best[at]
        best[at[take]], y[at[take]] = dc[take], cand[take]
    out = np.isfinite(best)
    dist = np.where(out, np.sqrt(np.where(out, best, 0.0)), plane.max(axis=1))
    nrm = h.normals[np.argmax(plane, axis=1)].copy()
    ok = out & (dist > 0)
    nrm[ok] = (c[ok] - y[ok]) / dist[ok, None]
    return y, dist, nrm
