"""Box-box narrow phase: separating axes, then a contact manifold by face clipping.

Of the 15 separating-axis candidates (3 face normals of each box, 9 edge-edge cross products)
the one of least penetration gives the normal (face axes preferred unless an edge axis is
clearly better, as in ODE's dBoxBox). For a face axis, the incident face of the other box is
clipped against the reference face's rectangle (Sutherland-Hodgman) and each clipped vertex
within the margin becomes a contact point (up to 8): a box resting on another gets its four
corners. For an edge axis, one point between the two closest edges.
Features: reference face (0..5) * 8 + clipped vertex (0..7); 48 + 3 i + j for edges i, j.
"""
import numpy as np

from ..dynamics.rotation import quat_to_matrix
from ..shapes import box
from .polyhedra import closest_on_edges

EDGE_FEATURE = 48


def box_box(A, i, B, j, margin):
    """Contacts of the box pairs (A's row i[k], B's row j[k]), as a pair function of
    contact/narrow.py (B may be a fixed box)."""
    out = {"a": [], "b": [], "feature": [], "normal": [], "point": [], "gap": []}
    if len(i) == 0:
        return None
    Ri, Rj = quat_to_matrix(A.q[i]), quat_to_matrix(B.q[j])
    hi, hj = box.half_extents(A, i), box.half_extents(B, j)
    for k in range(len(i)):
        for c in _pair(A.x[i[k]], Ri[k], hi[k], B.x[j[k]], Rj[k], hj[k], margin):
            out["a"].append(i[k])
            out["b"].append(j[k])
            for name, value in zip(("feature", "normal", "point", "gap"), c):
                out[name].append(value)
    n = len(out["a"])
    return {"a": np.asarray(out["a"], np.int64), "b": np.asarray(out["b"], np.int64),
            "feature": np.asarray(out["feature"], np.int64),
            "normal": np.asarray(out["normal"]).reshape(n, 3),
            "point": np.asarray(out["point"]).reshape(n, 3), "gap": np.asarray(out["gap"])}


def _pair(cA, RA, hA, cB, RB, hB, margin):
    d = cA - cB
    best_s, best = -np.inf, None
    size = max(hA.max(), hB.max())
    axes = [(RA[:, a], ("A", a)) for a in range(3)] + [(RB[:, b], ("B", b)) for b in range(3)]
    for a in range(3):
        for b in range(3):
            L = np.cross(RA[:, a], RB[:, b])
            nl = np.linalg.norm(L)
            if nl > 1e-6:
                axes.append((L / nl, ("E", a, b)))
    for L, tag in axes:
        s = abs(d @ L) - (hA @ np.abs(RA.T @ L)) - (hB @ np.abs(RB.T @ L))
        if s > margin:
            return []                                   # a separating axis: no contact
        # prefer faces: an edge axis must beat them by a clear amount
        bias = 1e-3 * size if tag[0] == "E" else 0.0
        if s > best_s + bias:
            best_s, best = s, (L, tag)
    L, tag = best
    n = L if d @ L >= 0 else -L                         # from B to A
    if tag[0] == "B":
        return _face(cB, RB, hB, n, cA, RA, hA, margin, ref_is_B=True)
    if tag[0] == "A":
        return _face(cA, RA, hA, -n, cB, RB, hB, margin, ref_is_B=False)
    return _edges(cA, RA, hA, cB, RB, hB, n, tag[1], tag[2], best_s)


def _face(cR, RR, hR, m, cI, RI, hI, margin, ref_is_B):
    """Reference box R with outward face normal m (towards the incident box I)."""
    k = int(np.argmax(np.abs(RR.T @ m)))
    sk = 1.0 if RR[:, k] @ m > 0 else -1.0
    m = sk * RR[:, k]
    face_c = cR + sk * hR[k] * RR[:, k]
    u, v = [a for a in range(3) if a != k]
    # incident face: the face of I most anti-parallel to m
    q = int(np.argmax(np.abs(RI.T @ m)))
    sq = -1.0 if RI[:, q] @ m > 0 else 1.0
    p, r = [a for a in range(3) if a != q]
    centre = cI + sq * hI[q] * RI[:, q]
    corners = [centre + sp * hI[p] * RI[:, p] + sr * hI[r] * RI[:, r]
               for sp, sr in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    poly = [np.array([(c - face_c) @ RR[:, u], (c - face_c) @ RR[:, v]]) for c in corners]
    height = [(c - face_c) @ m for c in corners]
    clipped = _clip(list(zip(poly, height)), hR[u], hR[v])
    out = []
    face_id = 2 * k + (0 if sk > 0 else 1)
    n = m if ref_is_B else -m
    for idx, (xy, h) in enumerate(clipped[:8]):
        if h <= margin:
            on_face = face_c + xy[0] * RR[:, u] + xy[1] * RR[:, v]
            point = on_face + 0.5 * h * m
            out.append((face_id * 8 + idx, n, point, h))
    return out


def _clip(poly, hu, hv):
    """Sutherland-Hodgman clip of a polygon of (xy, height) against |x| <= hu, |y| <= hv.

    Points within round-off of an edge count as inside, and coincident results are merged, so
    two equal faces on each other give their four corners, not duplicates."""
    tol = 1e-9 * max(hu, hv)
    for axis, lim, sign in ((0, hu + tol, 1), (0, hu + tol, -1), (1, hv + tol, 1),
                            (1, hv + tol, -1)):
        if not poly:
            break
        res = []
        for idx in range(len(poly)):
            (p0, h0), (p1, h1) = poly[idx - 1], poly[idx]
            in0 = sign * p0[axis] <= lim
            in1 = sign * p1[axis] <= lim
            if in1:
                if not in0:
                    res.append(_cut(p0, h0, p1, h1, axis, sign * lim))
                res.append((p1, h1))
            elif in0:
                res.append(_cut(p0, h0, p1, h1, axis, sign * lim))
        poly = res
    merged = []
    for p, h in poly:
        if all(np.abs(p - q).max() > 10 * tol for q, _ in merged):
            merged.append((p, h))
    return merged


def _cut(p0, h0, p1, h1, axis, at):
    t = (at - p0[axis]) / (p1[axis] - p0[axis])
    return p0 + t * (p1 - p0), h0 + t * (h1 - h0)


def _edges(cA, RA, hA, cB, RB, hB, n, a, b, s):
    """The closest points of A's edge along axis a and B's edge along axis b."""
    ea = cA + sum(-np.sign(RA[:, k] @ n) * hA[k] * RA[:, k] for k in range(3) if k != a)
    eb = cB + sum(np.sign(RB[:, k] @ n) * hB[k] * RB[:, k] for k in range(3) if k != b)
    da, db = RA[:, a], RB[:, b]
    ta, tb = closest_on_edges(ea, da, eb, db, (-hA[a], hA[a]), (-hB[b], hB[b]), den_min=1e-12)
    point = 0.5 * (ea + ta * da + eb + tb * db)
    return [(EDGE_FEATURE + 3 * a + b, n, point, s)]
