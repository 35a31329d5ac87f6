"""The convex hull of a large vertex cloud through Qhull (scipy.spatial.ConvexHull), for the
polyhedra read from files (an STL of a scanned stone: 10^4 vertices and more).

shapes/polyhedron.convex_hull, parsolve's own, tests every plane through three points: exact
and dependency-free for a block's few vertices, but O(n^4) (0.7 s at 128 points, out of
reach at 10^4), and points 1e-12 to 1e-9 off a face's plane make its planes overlap. Qhull is
O(n log n) and merges nearly coplanar facets itself; its triangles are grouped here into the
same polygonal faces as the own hull's (from the largest facet, the neighbours whose corners
lie within 1e-9 of the cloud's size of its plane; corners counter-clockwise, points inside a
face or on an edge dropped), so that both give the same faces where both run
(bench/bench_mesh.py hull). polyhedron.convex_hull takes this path above SMALL points, or
when its own surface does not close, if SciPy is installed; below SMALL it keeps its own
(every existing block's bits unchanged).
"""
import numpy as np

from ..errors import InputError

SMALL = 64


def available():
    try:
        import scipy.spatial  # noqa: F401
    except ImportError:
        return False
    return True


def convex_hull(what, points):
    """(faces, used) as polyhedron.convex_hull returns them, by Qhull."""
    from scipy.spatial import ConvexHull

    from .polyhedron import _polygon, canonical

    P = np.asarray(points, float)
    scale = np.abs(P - P.mean(axis=0)).max()
    tol = 1e-9 * scale
    try:
        h = ConvexHull(P)
    except Exception:                                   # QhullError: flat or too few points
        raise InputError(f"{what}: the vertices are coplanar (a polyhedron needs a "
                         "volume)") from None
    eq = h.equations                                    # n . x + off <= 0 inside
    simp, nb = h.simplices, h.neighbors
    c = P[simp]
    area = np.linalg.norm(np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]), axis=1)
    # facets with a neighbour in their plane (the rest are faces alone: a round stone's)
    dist = np.abs(np.einsum("fkij,fj->fki", P[simp[nb]], eq[:, :3]) + eq[:, 3, None, None])
    back = np.abs(np.einsum("fij,fkj->fki", P[simp], eq[nb, :3]) + eq[nb, 3][:, :, None])
    flat = (dist.max(axis=2) <= tol).any(axis=1) | (back.max(axis=2) <= tol).any(axis=1)
    group = np.full(len(eq), -1, np.int64)
    faces = [None] * len(eq)
    alone = np.flatnonzero(~flat)
    t = simp[alone]
    nt = np.cross(P[t[:, 1]] - P[t[:, 0]], P[t[:, 2]] - P[t[:, 0]])
    turn = np.einsum("ij,ij->i", nt, eq[alone, :3]) < 0
    for f, tri in zip(alone, np.where(turn[:, None], t[:, ::-1], t)):
        faces[f] = tri
    group[alone] = alone
    for seed in np.argsort(-area, kind="stable"):        # the largest facet's plane first
        if group[seed] >= 0:
            continue
        group[seed] = seed
        members, stack = [seed], [seed]
        n, off = eq[seed, :3], eq[seed, 3]
        while stack:                                      # neighbours within tol of it
            for g in nb[stack.pop()]:
                if group[g] < 0 and np.abs(P[simp[g]] @ n + off).max() <= tol:
                    group[g] = seed
                    members.append(g)
                    stack.append(g)
        if len(members) == 1:                             # one triangle: turned outwards
            t = simp[seed]
            nt = np.cross(P[t[1]] - P[t[0]], P[t[2]] - P[t[0]])
            faces[seed] = t if nt @ n > 0 else t[::-1]
        else:
            faces[seed] = _polygon(P, np.unique(simp[members]), n, tol)
    faces = [f for f in faces if f is not None]
    used = np.unique(np.concatenate(faces))
    remap = np.full(len(P), -1, np.int64)
    remap[used] = np.arange(len(used))
    return canonical([remap[f] for f in faces]), used
