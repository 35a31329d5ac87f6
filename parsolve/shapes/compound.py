"""Compound rigid bodies: one body made of several parts, spheres (a clump) and convex
polyhedra (a non-convex block: an L-shaped or keyed stone, a block with a concave face), given
in the body's own frame. This module gives its mass properties and the shape (KIND: a body's
template lists its parts in the body frame); contacts are the parts' own (contact/compound.py),
only between parts of different bodies.

The template: [spheres, blocks, each sphere's centre and radius, then each block's centre
(its own centroid, in the body frame), the length of its hull's parameters and those
(shapes/polyhedron.py's Hull.params: its vertices about that centre, in the body's axes)].
A block part is also a polyhedron template of its own (shapes.LIBRARY), placed at the body's
x + R centre with the body's orientation: the polyhedra's contacts meet it as a block.

Mass, centre and inertia of the uniform solid (density rho) that is the union of the parts:

- disjoint parts (touching is disjoint: an L of two bricks sharing a face): exact, the sum
  of the parts' exact integrals (a polyhedron's from shapes/polyhedron.py);
- overlapping spheres: inclusion-exclusion to pairs, each pair's lens (the two spherical
  caps beyond their radical plane) integrated exactly. Bonferroni's inequalities bound the
  truncation: the union's integral of a positive function lies between the sums to pairs and
  to triples, so the error is at most the integral over the triple intersections, each of
  which lies inside the smallest lens of its three pairs. `bound` states that error for the
  volume and each entry of the inertia tensor; it is 0 (exact) when no three spheres share a
  point, as in a chain of spheres (a rod);
- polyhedra that overlap another part, or a bound too large for the user: an InputError
  that asks for the values (mass=, centre=, inertia= given by the user are taken as they are).

The principal frame: moments (ascending) and axes Q (columns, det +1, plain arithmetic:
shapes/polyhedron.principal_frame), so that a part at y in the given frame sits at
Q^T (y - centre) in the body frame.
"""
from itertools import combinations

import numpy as np

from ..errors import InputError
from . import polyhedron

KIND = 5
NAME = "compound"
TEMPLATE = None          # variable width: its parts (template())
CELLS = None
POLYGONS = {"group": "compounds"}    # its blocks' faces as polygons
POINTS = {"group": "clumps"}         # its spheres as points with a radius


class Part:
    """One part of a compound, in the compound's given frame: a sphere (centre, radius) or a
    convex polyhedron (vertices, faces: the hull when None)."""

    def __init__(self, kind, centre=None, radius=None, vertices=None, faces=None):
        self.kind = kind
        if kind == "sphere":
            self.centre = np.asarray(centre, float)
            self.radius = float(radius)
            self.hull = None
        else:
            h, vol, moments, c, Q = polyhedron.make("compound part", vertices, faces)
            self.hull = polyhedron.Hull(h.vertices @ Q.T + c, h.faces)   # the given frame
            self.centre = c
            self.radius = float(np.linalg.norm(self.hull.vertices - c, axis=1).max())


def sphere(centre, radius):
    """A spherical part."""
    c = np.asarray(centre, float)
    if c.shape != (3,) or not np.isfinite(c).all():
        raise InputError(f"compound: a sphere's centre must be 3 finite numbers, got {centre!r}")
    if not (np.isfinite(radius) and radius > 0):
        raise InputError(f"compound: a sphere's radius must be a finite number > 0, got "
                         f"{radius!r}")
    return Part("sphere", centre=c, radius=radius)


def block(vertices, faces=None):
    """A convex polyhedral part (its hull when faces is None)."""
    return Part("polyhedron", vertices=vertices, faces=faces)


def block_from_file(path, units="m", scale=1.0, rotation=None, translation=None):
    """A convex polyhedral part: the hull of the vertices of a surface file (STL, OBJ, or what
    meshio reads), placed in the compound's frame (a mesh split into convex parts by the user,
    one file a part)."""
    from .mesh import read_vertices

    return block(read_vertices(path, units, scale, rotation, translation))


class MassProperties:
    """mass, volume, centre (3,), inertia (3, 3) about the centre in the given frame,
    moments (3,) and axes Q of the principal frame, bound (dict: 'volume', 'inertia': the
    largest error of the volume (m^3) and of any inertia entry (kg m^2)), exact, method."""

    def __init__(self, mass, volume, centre, inertia, bound, method):
        self.mass, self.volume, self.centre, self.inertia = mass, volume, centre, inertia
        self.bound, self.method = bound, method
        self.exact = bound["volume"] == 0.0 and bound["inertia"] == 0.0
        self.moments, self.Q = polyhedron.principal_frame(inertia)

    def body_frame(self, parts):
        """The parts moved to the principal body frame: spheres' centres (k, 3) and each
        polyhedron's vertices, in the order given (output draws each part)."""
        return [(p.centre - self.centre) @ self.Q if p.kind == "sphere" else
                (p.hull.vertices - self.centre) @ self.Q for p in parts]


def mass_properties(parts, density=None, mass=None, centre=None, inertia=None, rtol=None):
    """MassProperties of the compound of `parts` (a list of Part): from a density (uniform
    solid) or mass= (the same solid scaled); centre= and inertia= (3 x 3 about the centre, in
    the given frame) given together override the integrals. rtol: the largest relative error
    of volume and inertia accepted from overlapping spheres (default: any, the bound is
    reported)."""
    if not parts:
        raise InputError("compound: no parts")
    if (centre is None) != (inertia is None):
        raise InputError("compound: give centre= and inertia= together")
    if (density is None) == (mass is None):
        raise InputError("compound: give density= or mass=, one of them")
    if centre is not None:
        if mass is None:
            raise InputError("compound: with given centre and inertia, give mass= too")
        J = np.asarray(inertia, float)
        if J.shape != (3, 3) or not np.allclose(J, J.T) or \
                (np.linalg.eigvalsh(J) <= 0).any():
            raise InputError(f"compound: inertia must be a symmetric positive definite 3 x 3 "
                             f"tensor, got {inertia!r}")
        return MassProperties(float(mass), float("nan"), np.asarray(centre, float), J,
                              {"volume": 0.0, "inertia": 0.0}, "given")
    o = np.mean([p.centre for p in parts], axis=0)       # moments about a point near
    vol, first, S, bound_v, bound_S, method = _integrals([_moved(p, -o) for p in parts])
    rho = float(density) if mass is None else float(mass) / vol
    if not (np.isfinite(rho) and rho > 0):
        raise InputError(f"compound: density must be a finite number > 0, got {rho!r}")
    c = first / vol
    Sc = S - np.outer(first, c)                       # about the centre
    J = np.trace(Sc) * np.eye(3) - Sc
    # the bound on J about the centre: |dJ_ij| <= |d tr S_c| + |dS_c,ij| <= 4 max |dS_c|,
    # |dS_c| <= |dS| + |d(first first^T / vol)|, the last to first order in the errors of
    # first and vol (far below their values whenever the bound is of use)
    dfirst = bound_S["first"]
    dSc = bound_S["second"] + 2.0 * np.abs(c).max() * dfirst + c @ c * bound_v
    bound = {"volume": bound_v, "inertia": rho * 4.0 * dSc}
    rel_v, rel_j = bound_v / vol, bound["inertia"] / np.abs(rho * J).max()
    if rtol is not None and max(rel_v, rel_j) > rtol:
        raise InputError(f"compound: the overlapping spheres' mass properties are known to "
                         f"{rel_v:.2g} (volume) and {rel_j:.2g} (inertia), beyond "
                         f"rtol={rtol}: give mass=, centre= and inertia=")
    return MassProperties(rho * vol, vol, o + c, rho * J, bound, method)


def _moved(p, t):
    """Part p translated by t."""
    q = Part.__new__(Part)
    q.kind, q.radius, q.centre = p.kind, p.radius, p.centre + t
    q.hull = None if p.hull is None else polyhedron.Hull(p.hull.vertices + t, p.hull.faces)
    return q


def _sphere_moments(c, R):
    """(volume, first moment, second moment tensor about the origin) of a ball."""
    v = 4.0 / 3.0 * np.pi * R * R * R
    return v, v * c, v * R * R / 5.0 * np.eye(3) + v * np.outer(c, c)


def _poly_moments(hull):
    v, cen, J = polyhedron.mass_properties(hull.vertices, hull.faces)
    Sc = 0.5 * np.trace(J) * np.eye(3) - J
    return v, v * cen, Sc + v * np.outer(cen, cen)


def _cap(c, u, R, a):
    """(volume, first moment, second moment about the origin) of the part of the ball
    (c, R) beyond the plane at distance a from c along the unit vector u (z = (y - c).u >= a):
    slices of radius^2 R^2 - z^2, integrated exactly."""
    def prim(z):                    # antiderivatives of pi rho^2, z pi rho^2, z^2 pi rho^2,
        r2, z2 = R * R, z * z       # pi rho^4 / 4
        z3, z4, z5 = z2 * z, z2 * z2, z2 * z2 * z
        return np.array([np.pi * (r2 * z - z3 / 3.0),
                         np.pi * (r2 * z2 / 2.0 - z4 / 4.0),
                         np.pi * (r2 * z3 / 3.0 - z5 / 5.0),
                         np.pi / 4.0 * (r2 * r2 * z - 2.0 * r2 * z3 / 3.0 + z5 / 5.0)])
    v, mz, szz, sxx = prim(R) - prim(max(a, -R))
    first_local = mz * u
    S_local = sxx * (np.eye(3) - np.outer(u, u)) + szz * np.outer(u, u)   # about c
    S = S_local + np.outer(c, first_local) + np.outer(first_local, c) + v * np.outer(c, c)
    return v, first_local + v * c, S


def _lens(p, q):
    """(volume, first, second) of the intersection of balls p and q (Parts), zeros if none."""
    d = float(np.linalg.norm(q.centre - p.centre))
    R1, R2 = p.radius, q.radius
    if d >= R1 + R2:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if d <= abs(R1 - R2):                              # the smaller inside the larger
        s = p if R1 <= R2 else q
        return _sphere_moments(s.centre, s.radius)
    u = (q.centre - p.centre) / d
    a1 = (d * d + R1 * R1 - R2 * R2) / (2.0 * d)       # the radical plane from p's centre
    v1, f1, s1 = _cap(p.centre, u, R1, a1)
    v2, f2, s2 = _cap(q.centre, -u, R2, d - a1)
    return v1 + v2, f1 + f2, s1 + s2


def _integrals(parts):
    """Volume, first moment, second moment tensor (about the origin) of the union; the
    bounds of the volume and of the moments' entries; the method's name."""
    vol, first, S = 0.0, np.zeros(3), np.zeros((3, 3))
    for p in parts:
        v, f, s = _sphere_moments(p.centre, p.radius) if p.kind == "sphere" else \
            _poly_moments(p.hull)
        vol, first, S = vol + v, first + f, S + s
    balls = [k for k, p in enumerate(parts) if p.kind == "sphere"]
    for a, b in combinations(range(len(parts)), 2):
        if parts[a].kind == "sphere" and parts[b].kind == "sphere":
            continue
        if _overlap(parts[a], parts[b]):
            raise InputError(f"compound: parts {a} and {b} overlap and one is a polyhedron; "
                             "split them into disjoint parts or give mass=, centre= and "
                             "inertia=")
    lenses = {}
    for a, b in combinations(balls, 2):
        v, f, s = _lens(parts[a], parts[b])
        if v > 0.0:
            lenses[(a, b)] = (v, f, s)
            vol, first, S = vol - v, first - f, S - s
    bound_v, bound_f, bound_s = 0.0, 0.0, 0.0
    for a, b, c in combinations(balls, 3):
        pairs = [(a, b), (a, c), (b, c)]
        if not all(p in lenses for p in pairs) or not _share_a_point(*(parts[k]
                                                                       for k in (a, b, c))):
            continue
        v, f, s = min((lenses[p] for p in pairs), key=lambda m: m[0])   # holds the triple
        # |x_i| <= |x|, |x_i x_j| <= |x|^2 / 2 + ...: entries bounded by the trace
        bound_v += v
        bound_f += np.sqrt(v * np.trace(s))            # Cauchy-Schwarz: int |x| <= sqrt(V int|x|^2)
        bound_s += np.trace(s)
    bound_v, bound_f, bound_s = (1 + 1e-9) * bound_v, (1 + 1e-9) * bound_f, \
        (1 + 1e-9) * bound_s                           # tight when a lens is the triple: round-off
    method = "disjoint parts" if not lenses else \
        ("lenses, exact" if bound_v == 0.0 else "lenses, Bonferroni bound")
    return vol, first, S, bound_v, {"first": bound_f, "second": bound_s}, method


def _share_a_point(p, q, r):
    """Whether three balls (Parts) have a common point: the point of the lens of p and q
    nearest r's centre (inside both, on one sphere within the other, or on their circle)
    lies within r."""
    x = r.centre
    best = np.inf
    inside = lambda y, s: np.linalg.norm(y - s.centre) <= s.radius * (1 + 1e-12)  # noqa
    if inside(x, p) and inside(x, q):
        return True
    for s, o in ((p, q), (q, p)):
        d = x - s.centre
        n = np.linalg.norm(d)
        if n > 0:
            y = s.centre + d * (s.radius / n)
            if inside(y, o):
                best = min(best, np.linalg.norm(x - y))
    d = np.linalg.norm(q.centre - p.centre)
    u = (q.centre - p.centre) / d
    a = (d * d + p.radius * p.radius - q.radius * q.radius) / (2.0 * d)
    m = p.centre + a * u
    rho = np.sqrt(max(p.radius * p.radius - a * a, 0.0))
    w = (x - m) - ((x - m) @ u) * u
    nw = np.linalg.norm(w)
    y = m + rho * w / nw if nw > 0 else m + rho * np.cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9
                                                           else [0, 1.0, 0])
    best = min(best, np.linalg.norm(x - y))
    return best <= r.radius


def _overlap(p, q):
    """Whether two convex parts overlap by more than round-off (touching is not overlap)."""
    from ..contact.polyhedra import closest_points

    if p.kind == "sphere" and q.kind == "sphere":
        return np.linalg.norm(p.centre - q.centre) < p.radius + q.radius
    if p.kind == "sphere" or q.kind == "sphere":
        s, h = (p, q) if p.kind == "sphere" else (q, p)
        _, dist, _ = closest_points(h.hull, s.centre[None])
        return dist[0] < s.radius * (1 - 1e-9)
    tol = 1e-9 * max(p.radius, q.radius)
    axes = list(p.hull.normals) + list(q.hull.normals)
    for ea in p.hull.edges:
        ua = p.hull.vertices[ea[1]] - p.hull.vertices[ea[0]]
        for eb in q.hull.edges:
            ub = q.hull.vertices[eb[1]] - q.hull.vertices[eb[0]]
            n = np.cross(ua, ub)
            if np.linalg.norm(n) > 1e-9 * np.linalg.norm(ua) * np.linalg.norm(ub):
                axes.append(n / np.linalg.norm(n))
    for n in axes:                                   # separating axes: a gap or a touch
        a, b = p.hull.vertices @ n, q.hull.vertices @ n
        if a.max() <= b.min() + tol or b.max() <= a.min() + tol:
            return False
    return True


# -- the shape -----------------------------------------------------------------------------
class Compound:
    """A compound's parts in its body frame: spheres (centres (ns, 3), radii (ns,)) and
    blocks (centres (nb, 3), their polyhedron template keys and Hulls about those centres);
    radius: the bounding radius about the body's centre. Parts are numbered spheres first."""

    def __init__(self, centres, radii, block_centres, hulls):
        from . import LIBRARY, POLYHEDRON

        self.centres = np.asarray(centres, float).reshape(-1, 3)
        self.radii = np.asarray(radii, float).reshape(-1)
        self.block_centres = np.asarray(block_centres, float).reshape(-1, 3)
        self.hulls = list(hulls)
        self.keys = np.array([LIBRARY.add(POLYHEDRON, h.params()) for h in self.hulls],
                             np.int64)
        for key, h in zip(self.keys, self.hulls):       # the parsed blocks, shared
            LIBRARY.hull(POLYHEDRON, key, lambda _, h=h: h)
        far = [np.linalg.norm(self.centres, axis=1) + self.radii] + \
            [[np.linalg.norm(h.vertices + c, axis=1).max()]
             for c, h in zip(self.block_centres, self.hulls)]
        self.radius = float(np.concatenate(far).max())
        self.parts = len(self.radii) + len(self.hulls)

    def params(self):
        blocks = [np.concatenate([c, [len(p)], p]) for c, p in
                  zip(self.block_centres, (h.params() for h in self.hulls))]
        return np.concatenate([[len(self.radii), len(self.hulls)],
                               np.column_stack([self.centres, self.radii]).reshape(-1),
                               *blocks]).astype(float)

    @classmethod
    def from_params(cls, p):
        ns, nb = int(p[0]), int(p[1])
        spheres = p[2:2 + 4 * ns].reshape(ns, 4)
        at = 2 + 4 * ns
        centres, hulls = [], []
        for _ in range(nb):
            centres.append(p[at:at + 3])
            size = int(p[at + 3])
            hulls.append(polyhedron.Hull.from_params(p[at + 4:at + 4 + size]))
            at += 4 + size
        return cls(spheres[:, :3], spheres[:, 3], centres, hulls)


def build(parts, props):
    """The Compound of `parts` (Part list, the given frame) in the principal body frame of
    their MassProperties `props`."""
    moved = props.body_frame(parts)
    centres = [y for p, y in zip(parts, moved) if p.kind == "sphere"]
    radii = [p.radius for p in parts if p.kind == "sphere"]
    block_centres, hulls = [], []
    for p, y in zip(parts, moved):
        if p.kind == "sphere":
            continue
        _, c, _ = polyhedron.mass_properties(y, p.hull.faces)     # inside the block
        block_centres.append(c)
        hulls.append(polyhedron.Hull(y - c, p.hull.faces))
    return Compound(centres, radii, block_centres, hulls)


def add(c):
    """The template key of Compound c in shapes.LIBRARY (c cached as its parsed form)."""
    from . import LIBRARY

    key = LIBRARY.add(KIND, c.params())
    LIBRARY.hull(KIND, key, lambda _: c)
    return key


def compound(key):
    """The Compound of template `key`."""
    from . import LIBRARY

    return LIBRARY.hull(KIND, key, Compound.from_params)


def bounding_radius(c):
    return c.radius


class Parts:
    """The parts of placed compounds as a placed-shape table of their own (x, q, radius,
    shape, template), with owner (the index into the rows given) and part (its number in its
    compound): what the narrow phase's pair functions take. Rows of one template at once."""

    def __init__(self, placed, rows, R=None):
        from . import NONE, POLYHEDRON, SPHERE
        from ..dynamics.rotation import quat_to_matrix

        rows = np.asarray(rows, np.int64)
        R = quat_to_matrix(placed.q[rows]) if R is None else R
        keys, which = np.unique(placed.template[rows], return_inverse=True)
        which = which.reshape(-1)
        shapes = [compound(int(k)) for k in keys]
        counts = np.array([c.parts for c in shapes], np.int64)[which] if len(rows) else \
            np.zeros(0, np.int64)
        self.owner = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
        self.part = np.arange(len(self.owner), dtype=np.int64) - \
            np.repeat(np.cumsum(counts) - counts, counts)
        n = len(self.owner)
        self.x, self.radius = np.zeros((n, 3)), np.zeros(n)
        self.shape, self.template = np.zeros(n, np.int8), np.zeros(n, np.int64)
        for t, c in enumerate(shapes):
            at = np.flatnonzero(which[self.owner] == t)
            ns = len(c.radii)
            local = np.concatenate([c.centres, c.block_centres])[self.part[at]]
            o = self.owner[at]
            self.x[at] = placed.x[rows[o]] + np.einsum("nij,nj->ni", R[o], local)
            self.radius[at] = np.concatenate([c.radii, [h.radius for h in c.hulls]])[
                self.part[at]]
            self.shape[at] = np.where(self.part[at] < ns, SPHERE, POLYHEDRON)
            self.template[at] = np.concatenate([np.full(ns, NONE, np.int64), c.keys])[
                self.part[at]]
        self.q = placed.q[rows][self.owner] if len(rows) else np.zeros((0, 4))

    def __len__(self):
        return len(self.x)


def extent(placed, rows, R):
    """World half extents (n, 3), about the centres, of the boxes around the compounds
    `rows` (R their rotation matrices): over their spheres and their blocks' vertices."""
    out = np.zeros((len(rows), 3))
    for k, r in enumerate(rows):
        c = compound(int(placed.template[r]))
        ext = [np.abs(c.centres @ R[k].T) + c.radii[:, None]]
        ext += [np.abs((h.vertices + b) @ R[k].T) for b, h in zip(c.block_centres, c.hulls)]
        out[k] = np.concatenate(ext).max(axis=0)
    return out


def polygon_points(placed, rows):
    """The number of points polygons() gives for the placed `rows`."""
    return sum(len(h.vertices) for r in rows for h in compound(int(placed.template[r])).hulls)


def polygons(placed, rows, R, first=0):
    """The faces of the blocks of the compounds `rows` (R their rotation matrices) as XDMF
    "Mixed" polygon cells: (points, topology with ids from `first`, the row of each face)."""
    parts = ((k, r, compound(int(placed.template[r]))) for k, r in enumerate(rows))
    return polyhedron.polygon_cells(((k, placed.x[r] + (h.vertices + b) @ R[k].T, h.faces)
                                     for k, r, c in parts
                                     for b, h in zip(c.block_centres, c.hulls)), first)


def points(placed, rows, R):
    """The spheres of the compounds `rows` as points: centres (P, 3), radii (P,), the row of
    each (index into rows)."""
    x, radius, owner = [], [], []
    for k, r in enumerate(rows):
        c = compound(int(placed.template[r]))
        x.append(placed.x[r] + c.centres @ R[k].T)
        radius.append(c.radii)
        owner.append(np.full(len(c.radii), k, np.int64))
    return (np.concatenate(x) if x else np.zeros((0, 3)),
            np.concatenate(radius) if radius else np.zeros(0),
            np.concatenate(owner) if owner else np.zeros(0, np.int64))
