"""Triangle-mesh surfaces: obstacles of any form (hoppers, silos, chutes, drums, terrain),
open or closed, convex or not, read from a file or given as arrays.

A TriangleMesh holds its geometry in its own frame (the file's coordinates after the units,
scale, rotation and translation of its placement), checked once, and the tables its contacts
read (contact/mesh.py, contact/mesh_poly.py and their kernels):

- triangles (m, 3) with unit normals (their corners counter-clockwise seen from the front);
- edges (e, 2) (vertex pairs, lower first), edge_tris (e, 2) their one or two triangles (-1:
  a boundary edge), tri_edges (m, 3): triangle t's side k runs from corner k to corner k + 1;
- the vertices' triangles (vtx_ptr, vtx_tris, CSR);
- patches: maximal connected sets of coplanar triangles (neighbours across an edge whose
  dihedral angle is below `flat` and whose corners lie in the first triangle's plane), each
  with one normal: a contact anywhere on a flat patch has the patch's normal and the patch's
  feature id, so that a body rolling across the triangles of a floor meets one contact, with
  one normal, and keeps its warm start;
- the edges' convexity (dihedral: > 0 convex, < 0 concave, 0 flat or boundary) and the
  angle-weighted pseudo-normals of edges and vertices (Baerentzen and Aanaes: the sign of
  (x - p) . n at the nearest point p tells the sides apart at an edge or a vertex too);
- a uniform grid over the triangles' bounding boxes (a dense array of cells over the mesh's
  box, at most eight cells per triangle, each cell listing the triangles whose box meets
  it), and each triangle's bounding sphere (a candidate's first, cheap test).

Sides: a closed surface is one-sided (the solid behind its triangles, turned outwards, or
inwards with inside=True: a container whose bodies move inside); an open surface is two-sided
(a body meets it from either side) unless sides=1 is asked.

Checks (each an InputError naming the mesh and the triangle, with the repair that fixes it):
a degenerate triangle (a repeated corner or no area), a duplicate triangle (the same three
vertices), a non-manifold edge (in more than two triangles: no repair), inconsistent
orientation (two triangles running along their common edge the same way). repair= names the
repairs to make instead: "degenerate" (drop them), "duplicates" (keep the first),
"orientation" (turn triangles to agree with the first of their connected part), or "all".

As a shape (KIND, an obstacle only: model.mesh places one, fixed or moved by model.move), a
mesh's template in shapes.LIBRARY is its vertices and triangles in its obstacle's frame (the
frame the file and its placement give it: the obstacle's point at the origin, unturned), so
the model's fingerprint holds them and a checkpoint of another mesh is refused; the parsed
TriangleMesh is cached by key (`mesh(key)`). The obstacle's point and q place it (its pose).

Memory per rank, the whole mesh on every rank (like the fixed polyhedra): about 330 bytes a
triangle with its grid (bench/bench_mesh.py: `nbytes`), so a 10^6-triangle terrain costs about
0.33 GB on each rank.
"""
import numpy as np

from ..platform import libm
from ..errors import InputError

KIND = 4
NAME = "mesh"
TEMPLATE = None          # variable width: the mesh's vertices and triangles (template())
CELLS = None
POLYGONS = {"group": "meshes"}       # results draw its triangles as polygons

UNITS = {"m": 1.0, "dm": 0.1, "cm": 0.01, "mm": 1e-3, "um": 1e-6, "in": 0.0254, "ft": 0.3048}
REPAIRS = ("degenerate", "duplicates", "orientation")
FLAT = 1e-5               # radians: neighbours closer to coplanar are one patch


def _rotation(what, rotation):
    """A rotation matrix from None, a 3 x 3 matrix or a quaternion (w, x, y, z)."""
    from ..dynamics.rotation import quat_to_matrix

    if rotation is None:
        return None
    r = np.asarray(rotation, float)
    if r.shape == (3, 3):
        if not (np.allclose(r.T @ r, np.eye(3), atol=1e-9) and np.linalg.det(r) > 0):
            raise InputError(f"{what}: rotation is not a rotation matrix")
        return r
    if r.shape == (4,) and np.isfinite(r).all() and np.linalg.norm(r) > 0:
        return quat_to_matrix((r / np.linalg.norm(r))[None])[0]
    raise InputError(f"{what}: rotation must be a 3 x 3 matrix or a quaternion (w, x, y, z), "
                     f"got {rotation!r}")


def place(what, vertices, units="m", scale=1.0, rotation=None, translation=None):
    """Vertices in metres, placed: x = translation + R (scale * units * v)."""
    if units not in UNITS:
        raise InputError(f"{what}: units must be one of {sorted(UNITS)}, got {units!r}")
    s = float(scale)
    if not (np.isfinite(s) and s > 0):
        raise InputError(f"{what}: scale must be a finite number > 0, got {scale!r}")
    V = np.asarray(vertices, float) * (s * UNITS[units])
    R = _rotation(what, rotation)
    if R is not None:
        V = V @ R.T
    if translation is not None:
        t = np.asarray(translation, float)
        if t.shape != (3,) or not np.isfinite(t).all():
            raise InputError(f"{what}: translation must be 3 finite numbers, got "
                             f"{translation!r}")
        V = V + t
    return V


def read_vertices(path, units="m", scale=1.0, rotation=None, translation=None,
                  reader="auto"):
    """The placed vertices of the surface in a file: a convex block from a file is their
    hull (model.polyhedron(read_vertices("stone.stl", units="mm"), ...))."""
    import os

    from ..io.meshfile import read

    V, _ = read(path, reader)
    return place(f"mesh {os.path.basename(os.fspath(path))!r}", V, units, scale, rotation,
                 translation)


class TriangleMesh:
    """A checked triangle surface and its contact tables (read the module's docstring).

    TriangleMesh(vertices, triangles, name="mesh", repair=(), inside=False, sides=None,
    flat=FLAT, closed=None); TriangleMesh.read(path, units=, scale=, rotation=, translation=,
    ...). closed=True: an open surface is an InputError naming a boundary edge."""

    def __init__(self, vertices, triangles, name="mesh", repair=(), inside=False, sides=None,
                 flat=FLAT, closed=None, cells_per_triangle=8.0):
        self.name = name
        what = f"mesh {name!r}"
        V = np.ascontiguousarray(vertices, float)
        T = np.asarray(triangles)
        if V.ndim != 2 or V.shape[1] != 3 or not len(V):
            raise InputError(f"{what}: vertices must be an (n, 3) array, got shape {V.shape}")
        if not np.isfinite(V).all():
            raise InputError(f"{what}: vertex {int(np.argmin(np.isfinite(V).all(1)))} is not "
                             "finite")
        if T.ndim != 2 or T.shape[1] != 3 or not len(T) or \
                not np.issubdtype(T.dtype, np.integer):
            raise InputError(f"{what}: triangles must be an (m, 3) integer array, got "
                             f"shape {T.shape}")
        T = T.astype(np.int64)
        if T.min() < 0 or T.max() >= len(V):
            k = int(np.argmax((T < 0).any(1) | (T >= len(V)).any(1)))
            raise InputError(f"{what}: triangle {k} names a vertex outside [0, {len(V)}): "
                             f"{T[k].tolist()}")
        repair = set(REPAIRS) if repair in ("all", True) else set(
            [repair] if isinstance(repair, str) else repair)
        if repair - set(REPAIRS):
            raise InputError(f"{what}: unknown repair {sorted(repair - set(REPAIRS))}; the "
                             f"repairs are {REPAIRS} or 'all'")
        self.scale = float(np.abs(V - V.mean(axis=0)).max()) or 1.0
        T = self._degenerate(what, V, T, "degenerate" in repair)
        T = self._duplicates(what, T, "duplicates" in repair)
        if not len(T):
            raise InputError(f"{what}: no triangle left after the repairs")
        used = np.unique(T)
        remap = np.full(len(V), -1, np.int64)
        remap[used] = np.arange(len(used))
        self.vertices, self.triangles = np.ascontiguousarray(V[used]), remap[T]
        self._edges(what, "orientation" in repair)
        self.closed = bool((self.edge_tris[:, 1] >= 0).all())
        if closed and not self.closed:
            e = int(np.argmax(self.edge_tris[:, 1] < 0))
            raise InputError(f"{what}: the surface is not closed: edge {self.edges[e].tolist()} "
                             f"of triangle {int(self.edge_tris[e, 0])} has no neighbour "
                             f"({int((self.edge_tris[:, 1] < 0).sum())} such edges)")
        if self.closed:
            self._orient_outwards(inside)
        elif inside:
            raise InputError(f"{what}: inside=True needs a closed surface (this one has "
                             f"{int((self.edge_tris[:, 1] < 0).sum())} boundary edges)")
        if sides is None:
            sides = 1 if self.closed else 2
        if sides not in (1, 2):
            raise InputError(f"{what}: sides must be 1 or 2, got {sides!r}")
        self.sides = int(sides)
        self.inside = bool(inside)
        self.flat = float(flat)
        self.cells_per_triangle = float(cells_per_triangle)
        self._geometry()
        self._patches()
        self._pseudo_normals()
        self._grid(cells_per_triangle)

    @classmethod
    def read(cls, path, units="m", scale=1.0, rotation=None, translation=None, reader="auto",
             **options):
        """A mesh from an STL, OBJ (or, with meshio, another) file, placed (see `place`)."""
        import os

        from ..io.meshfile import read

        V, T = read(path, reader)
        name = options.pop("name", os.path.basename(os.fspath(path)))
        V = place(f"mesh {name!r}", V, units, scale, rotation, translation)
        return cls(V, T, name=name, **options)

    # -- checks and repairs ----------------------------------------------------------------
    def _degenerate(self, what, V, T, drop):
        c = V[T]
        cr = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
        longest = np.max([np.einsum("ij,ij->i", c[:, a] - c[:, b], c[:, a] - c[:, b])
                          for a, b in ((0, 1), (1, 2), (2, 0))], axis=0)
        bad = (T[:, 0] == T[:, 1]) | (T[:, 1] == T[:, 2]) | (T[:, 2] == T[:, 0]) | \
            (np.linalg.norm(cr, axis=1) <= 1e-12 * np.maximum(longest, self.scale ** 2))
        if bad.any() and not drop:
            k = int(np.argmax(bad))
            raise InputError(f"{what}: triangle {k} is degenerate (vertices {T[k].tolist()}, "
                             "no area); repair='degenerate' drops such triangles")
        return T[~bad]

    def _duplicates(self, what, T, drop):
        key = np.sort(T, axis=1)
        _, first = np.unique(key, axis=0, return_index=True)
        if len(first) == len(T):
            return T
        keep = np.zeros(len(T), bool)
        keep[first] = True
        if not drop:
            k = int(np.argmin(keep))
            same = int(np.flatnonzero((key == key[k]).all(axis=1))[0])
            raise InputError(f"{what}: triangle {k} repeats triangle {same} (vertices "
                             f"{T[k].tolist()}); repair='duplicates' keeps the first")
        return T[keep]

    def _edges(self, what, orient):
        """Edges, their triangles, the triangles' edges; consistent orientation."""
        T = self.triangles
        m = len(T)
        a = T.reshape(-1)
        b = T[:, [1, 2, 0]].reshape(-1)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = lo * np.int64(len(self.vertices)) + hi
        uniq, inverse, count = np.unique(key, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        if (count > 2).any():
            e = int(np.argmax(count > 2))
            tris = sorted(set((np.flatnonzero(inverse == e) // 3).tolist()))
            raise InputError(f"{what}: edge {int(uniq[e] // len(self.vertices))}-"
                             f"{int(uniq[e] % len(self.vertices))} is in {int(count[e])} "
                             f"triangles {tris} (a non-manifold edge: split the surface)")
        self.edges = np.stack([uniq // len(self.vertices), uniq % len(self.vertices)], axis=1)
        order = np.argsort(inverse, kind="stable")
        starts = np.concatenate([[0], np.cumsum(count)[:-1]])
        first = order[starts]
        second = np.where(count == 2, order[np.minimum(starts + 1, len(order) - 1)], -1)
        self.edge_tris = np.stack([first // 3, np.where(second >= 0, second // 3, -1)], axis=1)
        self.tri_edges = inverse.reshape(m, 3)
        forward = a < b                              # side runs lo -> hi
        two = count == 2
        same = two & (forward[first] == forward[np.maximum(second, 0)])
        if same.any():
            if orient == "done":
                raise InputError(f"{what}: the surface cannot be oriented (a Moebius strip "
                                 "or a part of one)")
            if not orient:
                e = int(np.argmax(same))
                t0, t1 = self.edge_tris[e]
                raise InputError(f"{what}: triangles {t0} and {t1} run along their common edge "
                                 f"{self.edges[e].tolist()} the same way (inconsistent "
                                 "orientation); repair='orientation' turns them to agree")
            self._make_consistent(what)

    def _make_consistent(self, what):
        """Turn triangles so that neighbours agree, each connected part taking its first
        triangle's side."""
        T = self.triangles
        m = len(T)
        flip = np.zeros(m, bool)
        seen = np.zeros(m, bool)
        side_dir = {}
        for t in range(m):
            for k in range(3):
                side_dir[(t, int(self.tri_edges[t, k]))] = T[t, k] < T[t, (k + 1) % 3]
        for seed in range(m):
            if seen[seed]:
                continue
            seen[seed] = True
            stack = [seed]
            while stack:
                t = stack.pop()
                for e in self.tri_edges[t]:
                    u = self.edge_tris[e, 0] if self.edge_tris[e, 0] != t else \
                        self.edge_tris[e, 1]
                    if u < 0 or seen[u]:
                        continue
                    # agree: the two run along e in opposite directions
                    dt = side_dir[(t, int(e))] ^ flip[t]
                    du = side_dir[(int(u), int(e))]
                    flip[u] = dt == du
                    seen[u] = True
                    stack.append(int(u))
        self.triangles = np.where(flip[:, None], T[:, ::-1], T)
        self._edges(what, "done")

    def _orient_outwards(self, inside):
        """Turn each closed part so that its enclosed volume is positive (its normals point
        out of the solid), or negative with inside=True (they point into the cavity)."""
        T, V = self.triangles, self.vertices
        part = _components(len(T), self.edge_tris)
        o = V.mean(axis=0)
        c = V[T] - o
        vol6 = np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2]))
        total = np.zeros(part.max() + 1)
        np.add.at(total, part, vol6)
        turn = (total < 0) != bool(inside)
        if turn.any():
            self.triangles = np.where(turn[part][:, None], T[:, ::-1], T)
            self._edges("", False)

    # -- geometry ----------------------------------------------------------------------------
    def _geometry(self):
        V, T = self.vertices, self.triangles
        c = V[T]
        n = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
        self.areas = 0.5 * np.linalg.norm(n, axis=1)
        self.normals = np.ascontiguousarray(n / (2.0 * self.areas)[:, None])
        # each triangle's bounding sphere: a quick test before the closest point
        self.centroids = np.ascontiguousarray(c.mean(axis=1))
        self.reach = np.sqrt(((c - self.centroids[:, None]) ** 2).sum(axis=2).max(axis=1))
        nv = len(V)
        order = np.argsort(T.reshape(-1), kind="stable")
        self.vtx_tris = np.ascontiguousarray(order // 3)
        self.vtx_ptr = np.concatenate([[0], np.cumsum(np.bincount(T.reshape(-1),
                                                                  minlength=nv))])
        # the dihedral at each edge: > 0 convex (a ridge seen from the front), < 0 concave
        t0, t1 = self.edge_tris[:, 0], self.edge_tris[:, 1]
        two = t1 >= 0
        n0, n1 = self.normals[t0], self.normals[np.maximum(t1, 0)]
        ang = libm.arctan2(np.linalg.norm(np.cross(n0, n1), axis=1),
                         np.einsum("ij,ij->i", n0, n1))
        # convex when the far corner of t1 lies behind t0's plane
        far = np.where(two, T[np.maximum(t1, 0)].sum(axis=1) - self.edges.sum(axis=1),
                       self.edges[:, 0])
        behind = np.einsum("ij,ij->i", V[far] - V[self.edges[:, 0]], n0)
        self.dihedral = np.where(two, np.where(behind <= 0, ang, -ang), 0.0)

    def _patches(self):
        """Coplanar connected patches, each with one normal and its triangles in one plane."""
        T, N = self.triangles, self.normals
        t0, t1 = self.edge_tris[:, 0], self.edge_tris[:, 1]
        flat = (t1 >= 0) & (np.abs(self.dihedral) <= self.flat)
        patch = _components(len(T), self.edge_tris[flat])
        ref = np.full(patch.max() + 1, len(T))
        np.minimum.at(ref, patch, np.arange(len(T)))          # each patch's first triangle
        r = ref[patch]
        off = self.vertices[T] - self.vertices[T[r, 0]][:, None, :]
        out = np.abs(np.einsum("tkj,tj->tk", off, N[r])).max(axis=1) > self.flat * self.scale
        out |= np.einsum("ij,ij->i", N, N[r]) < float(libm.cos(np.array([self.flat]))[0])
        patch = np.where(out, len(T) + np.arange(len(T)), r)  # off-plane: a patch alone
        _, self.patch = np.unique(patch, return_inverse=True)
        self.patch = self.patch.reshape(-1)
        nsum = np.zeros((self.patch.max() + 1, 3))
        np.add.at(nsum, self.patch, N * self.areas[:, None])
        self.patch_normals = nsum / np.linalg.norm(nsum, axis=1)[:, None]
        self.edge_flat = (t1 >= 0) & (self.patch[t0] == self.patch[np.maximum(t1, 0)])
        first = self.patch[self.vtx_tris[self.vtx_ptr[:-1]]]
        differs = self.patch[self.vtx_tris] != np.repeat(first, np.diff(self.vtx_ptr))
        bad = np.zeros(len(self.vertices), bool)
        np.logical_or.at(bad, np.repeat(np.arange(len(self.vertices)),
                                        np.diff(self.vtx_ptr)), differs)
        # a vertex is flat when its triangles are one patch and it is not on the boundary
        boundary = np.zeros(len(self.vertices), bool)
        boundary[self.edges[t1 < 0].reshape(-1)] = True
        self.vertex_flat = ~bad & ~boundary

    def _pseudo_normals(self):
        T, V, N = self.triangles, self.vertices, self.normals
        t0, t1 = self.edge_tris[:, 0], self.edge_tris[:, 1]
        en = N[t0] + np.where((t1 >= 0)[:, None], N[np.maximum(t1, 0)], 0.0)
        self.edge_normals = en / np.linalg.norm(en, axis=1)[:, None]
        vn = np.zeros_like(V)
        for k in range(3):
            u = V[T[:, (k + 1) % 3]] - V[T[:, k]]
            w = V[T[:, (k + 2) % 3]] - V[T[:, k]]
            ang = libm.arctan2(np.linalg.norm(np.cross(u, w), axis=1),
                             np.einsum("ij,ij->i", u, w))
            np.add.at(vn, T[:, k], N * ang[:, None])
        self.vertex_normals = vn / np.linalg.norm(vn, axis=1)[:, None]

    def _grid(self, per_triangle):
        """A dense grid of cells over the mesh's box, each listing the triangles whose
        bounding box meets it; about per_triangle cells a triangle."""
        c = self.vertices[self.triangles]
        lo, hi = c.min(axis=1), c.max(axis=1)
        self.lower = self.vertices.min(axis=0)
        span = np.maximum(self.vertices.max(axis=0) - self.lower, 1e-12 * self.scale)
        size = max(float(np.median((hi - lo).max(axis=1))), 1e-9 * self.scale)
        target = per_triangle * len(self.triangles) + 8
        while True:
            dims = np.floor(span / size).astype(np.int64) + 1
            if np.prod(dims.astype(float)) <= target:
                break
            size *= 1.25
        self.cell = size
        self.dims = dims
        a = np.floor((lo - self.lower) / size).astype(np.int64)
        b = np.minimum(np.floor((hi - self.lower) / size).astype(np.int64), dims - 1)
        span_c = b - a + 1
        count = np.prod(span_c, axis=1)
        tri = np.repeat(np.arange(len(c)), count)
        k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
        sp = span_c[tri]
        iz = k % sp[:, 2]
        k //= sp[:, 2]
        cell = a[tri] + np.stack([k // sp[:, 1], k % sp[:, 1], iz], axis=1)
        flat = (cell[:, 0] * dims[1] + cell[:, 1]) * dims[2] + cell[:, 2]
        order = np.argsort(flat, kind="stable")
        self.cell_tris = np.ascontiguousarray(tri[order])
        self.cell_ptr = np.concatenate([[0], np.cumsum(np.bincount(flat, minlength=int(
            np.prod(dims))))]).astype(np.int64)

    # -- queries -----------------------------------------------------------------------------
    def near(self, x, reach):
        """Triangles whose grid cells meet the box of half width reach about x (3,): the
        candidates of a point (a superset of the triangles within reach), in ascending order."""
        a = np.maximum(np.floor((x - reach - self.lower) / self.cell).astype(np.int64), 0)
        b = np.minimum(np.floor((x + reach - self.lower) / self.cell).astype(np.int64),
                       self.dims - 1)
        if (a > b).any():
            return np.zeros(0, np.int64)
        out = []
        for i in range(a[0], b[0] + 1):
            for j in range(a[1], b[1] + 1):
                f = (i * self.dims[1] + j) * self.dims[2]
                out.append(self.cell_tris[self.cell_ptr[f + a[2]]:self.cell_ptr[f + b[2] + 1]])
        return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)

    def box_distance(self, x, pose=None):
        """Distance of points x (n, 3) from the mesh's bounding box (0 inside it): a lower
        bound of their distance from the mesh, for the obstacles' broad phase (pose: the
        mesh's translation and rotation matrix, or None where it was read)."""
        x = np.asarray(x, float)
        if pose is not None:
            x = np.einsum("ji,nj->ni", pose[1], x - pose[0])
        upper = self.vertices.max(axis=0)
        out = np.maximum(np.maximum(self.lower - x, x - upper), 0.0)
        return np.sqrt(np.einsum("ij,ij->i", out, out))

    @property
    def nbytes(self):
        """Bytes of the mesh's arrays on one rank."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    def volume(self):
        """The enclosed volume of a closed mesh (negative with inside=True)."""
        c = self.vertices[self.triangles]
        return float(np.einsum("ij,ij->", c[:, 0], np.cross(c[:, 1], c[:, 2]))) / 6.0

    def arrays(self):
        """The contact kernels' arrays (contact/mesh.py's sphere_mesh, contact/mesh_poly.py's
        poly_mesh)."""
        return dict(V=self.vertices, T=self.triangles, TC=self.centroids, TR=self.reach,
                    N=self.normals, dih=self.dihedral, patch=self.patch,
                    PN=self.patch_normals, TE=self.tri_edges, ET=self.edge_tris,
                    EN=self.edge_normals, eflat=self.edge_flat.astype(np.int64),
                    vptr=self.vtx_ptr, vtris=self.vtx_tris, VN=self.vertex_normals,
                    vflat=self.vertex_flat.astype(np.int64), lower=self.lower,
                    dims=self.dims, cell=self.cell, cptr=self.cell_ptr, ctris=self.cell_tris)


# -- the shape: template, pose, broad phase, output ------------------------------------------
def template(m):
    """The template parameters of TriangleMesh m: [nv, nt, sides, inside, flat, cells per
    triangle, vertices (nv x 3), triangles (nt x 3)] (its triangles as oriented)."""
    return np.concatenate([[len(m.vertices), len(m.triangles), m.sides, float(m.inside), m.flat,
                            m.cells_per_triangle], m.vertices.reshape(-1),
                           m.triangles.reshape(-1).astype(float)])


def from_template(p):
    """The TriangleMesh of template parameters p (the inverse of template())."""
    nv, nt = int(p[0]), int(p[1])
    V = p[6:6 + 3 * nv].reshape(nv, 3)
    T = p[6 + 3 * nv:6 + 3 * nv + 3 * nt].reshape(nt, 3).astype(np.int64)
    return TriangleMesh(V, T, sides=int(p[2]), inside=bool(p[3]), flat=float(p[4]),
                        cells_per_triangle=float(p[5]))


def add(m):
    """The template key of TriangleMesh m in shapes.LIBRARY (m itself cached as its parsed
    form: a model script makes its meshes once, on every rank)."""
    from . import LIBRARY

    key = LIBRARY.add(KIND, template(m))
    LIBRARY.hull(KIND, key, lambda _: m)
    return key


def mesh(key):
    """The TriangleMesh of template `key`."""
    from . import LIBRARY

    return LIBRARY.hull(KIND, key, from_template)


def pose(placed, k):
    """(translation, rotation matrix) of mesh obstacle k, or None where it was read (the
    contacts then skip the transformation: a fixed mesh's numbers are its own)."""
    from ..dynamics.rotation import quat_to_matrix

    x, q = placed.x[k], placed.q[k]
    if not x.any() and q[0] == 1.0 and not q[1:].any():
        return None
    return placed.x[k].copy(), quat_to_matrix(q[None])[0]


def bounding_radius(m):
    """The largest distance of a vertex from the mesh frame's origin."""
    return float(np.sqrt(np.einsum("ij,ij->i", m.vertices, m.vertices).max()))


def distance(placed, k, x):
    """A lower bound of the distance of points x (n, 3) from mesh obstacle k: from its placed
    bounding box (the obstacles' broad phase; the contacts' grid does the rest)."""
    return mesh(int(placed.template[k])).box_distance(x, pose(placed, k))


def extent(placed, rows, R):
    """World half extents (n, 3), about the placed points, of the boxes holding the meshes
    `rows` (R their rotation matrices)."""
    return np.array([np.abs(mesh(int(placed.template[r])).vertices @ R[k].T).max(axis=0)
                     for k, r in enumerate(rows)]).reshape(-1, 3)


def polygon_points(placed, rows):
    """The number of points polygons() gives for the placed `rows`."""
    return sum(len(mesh(int(placed.template[r])).vertices) for r in rows)


def polygons(placed, rows, R, first=0):
    """The triangles of the meshes `rows` (R their rotation matrices) as XDMF "Mixed" polygon
    cells: (points (P, 3), topology [3, 3, a, b, c, ...] with ids from `first`, the row of
    each triangle (index into rows))."""
    pts, topo, owner = [], [], []
    at = first
    for k, r in enumerate(rows):
        m = mesh(int(placed.template[r]))
        pts.append(placed.x[r] + m.vertices @ R[k].T)
        cells = np.empty((len(m.triangles), 5), np.int64)
        cells[:, 0], cells[:, 1], cells[:, 2:] = 3, 3, m.triangles + at
        topo.append(cells.reshape(-1))
        owner.append(np.full(len(m.triangles), k, np.int64))
        at += len(m.vertices)
    return (np.concatenate(pts) if pts else np.zeros((0, 3)),
            np.concatenate(topo) if topo else np.zeros(0, np.int64),
            np.concatenate(owner) if owner else np.zeros(0, np.int64))


def _components(n, pairs):
    """Connected components of n items joined by `pairs` (k, 2) (-1: none), as labels: the
    smallest member of each component (hooking and pointer jumping, vectorised)."""
    parent = np.arange(n)
    pairs = np.asarray(pairs).reshape(-1, 2)
    pairs = pairs[(pairs >= 0).all(axis=1)]
    u, v = pairs[:, 0], pairs[:, 1]
    while True:
        ru, rv = parent[u], parent[v]
        lo, hi = np.minimum(ru, rv), np.maximum(ru, rv)
        move = lo != hi
        if not move.any():
            break
        np.minimum.at(parent, hi[move], lo[move])
        while True:
            pp = parent[parent]
            if (pp == parent).all():
                break
            parent = pp
    return parent


# -- simple surfaces (tests, benches, examples) ----------------------------------------------
def grid_surface(lower, upper, n, height=None):
    """(vertices, triangles) of the rectangle [lower, upper] (2,) in the plane z = 0 (or
    z = height(x, y)), cut into n x n squares of two triangles each, facing +z."""
    xs = np.linspace(lower[0], upper[0], n + 1)
    ys = np.linspace(lower[1], upper[1], n + 1)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    Z = np.zeros_like(X) if height is None else height(X, Y)
    V = np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a = (i * (n + 1) + j).ravel()
    b, c, d = a + (n + 1), a + (n + 1) + 1, a + 1
    alt = ((i + j) % 2 == 0).ravel()          # alternate diagonals: vertices of 4 and 8
    t1 = np.where(alt[:, None], np.stack([a, b, c], 1), np.stack([a, b, d], 1))
    t2 = np.where(alt[:, None], np.stack([a, c, d], 1), np.stack([b, c, d], 1))
    return V, np.concatenate([t1, t2])


def box_surface(lower, upper, n=1):
    """(vertices, triangles) of the closed surface of the box [lower, upper], each face cut
    into n x n squares of two triangles, facing outwards."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    parts, at = [], 0
    tris = []
    for axis in range(3):
        for side in (0, 1):
            u, v = [(axis + 1) % 3, (axis + 2) % 3]
            V, T = grid_surface((lower[u], lower[v]), (upper[u], upper[v]), n)
            P = np.zeros_like(V)
            P[:, u], P[:, v] = V[:, 0], V[:, 1]
            P[:, axis] = upper[axis] if side else lower[axis]
            parts.append(P)
            tris.append((T if side else T[:, ::-1]) + at)   # +axis outward on the upper side
            at += len(P)
    from ..io.meshfile import weld

    P = np.concatenate(parts)
    T = np.concatenate(tris)
    return weld(P[T])


def cylinder_surface(radius, length, sides, rings=1, caps=True):
    """(vertices, triangles) of a cylinder about the z axis from z = 0 to `length`: `sides`
    flat panels round it (a drum's staves), each cut into `rings` squares of two triangles
    along z, closed by two caps (fans about their centres) unless caps=False; facing
    outwards (TriangleMesh(..., inside=True) turns a closed one inwards: a drum)."""
    from ..io.meshfile import weld
    from ..platform import libm

    a = 2.0 * np.pi * np.arange(sides) / sides
    ring = np.stack([radius * libm.cos(a), radius * libm.sin(a)], axis=1)
    z = np.linspace(0.0, length, rings + 1)
    P = np.concatenate([np.column_stack([ring, np.full(sides, zk)]) for zk in z])
    i, j = np.meshgrid(np.arange(rings), np.arange(sides), indexing="ij")
    p00 = (i * sides + j).ravel()
    p01 = (i * sides + (j + 1) % sides).ravel()
    p10, p11 = p00 + sides, p01 + sides
    tris = [np.stack([p00, p01, p11], 1), np.stack([p00, p11, p10], 1)]
    if caps:
        c0, c1 = len(P), len(P) + 1
        P = np.concatenate([P, [(0.0, 0.0, 0.0), (0.0, 0.0, length)]])
        k = np.arange(sides)
        top = rings * sides
        tris += [np.stack([np.full(sides, c0), (k + 1) % sides, k], 1),
                 np.stack([np.full(sides, c1), top + k, top + (k + 1) % sides], 1)]
    T = np.concatenate(tris)
    return weld(P[T])


def hopper_surface(outlet, width, height, bin_height, n=4, sides=4):
    """(vertices, triangles) of a hopper open at both ends, about the z axis: a regular
    polygon of `sides` sides (4: square, 48: nearly round) `outlet` across its flats at
    z = 0, walls widening to `width` across at z = height (a frustum; height 0: a flat
    floor with the outlet in it, a silo's), then a vertical bin of that width to height +
    bin_height; each panel cut into n x n squares of two triangles, facing inwards."""
    from ..io.meshfile import weld
    from ..platform import libm

    a = 2.0 * np.pi * (np.arange(sides + 1) + 0.5) / sides
    corner = np.stack([libm.cos(a), libm.sin(a)], axis=1) / float(libm.cos(
        np.array([np.pi / sides]))[0])                  # unit apothem
    u = np.linspace(0.0, 1.0, n + 1)
    U, W = np.meshgrid(u, u, indexing="ij")
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    q = (i * (n + 1) + j).ravel()
    cells = np.concatenate([np.stack([q, q + n + 2, q + n + 1], 1),
                            np.stack([q, q + 1, q + n + 2], 1)])
    rings = [(0.5 * outlet, 0.0), (0.5 * width, height), (0.5 * width, height + bin_height)]
    parts = []
    for (r0, z0), (r1, z1) in zip(rings[:-1], rings[1:]):
        for k in range(sides):
            p00, p10 = np.append(r0 * corner[k], z0), np.append(r0 * corner[k + 1], z0)
            p01, p11 = np.append(r1 * corner[k], z1), np.append(r1 * corner[k + 1], z1)
            P = (p00 * ((1 - U) * (1 - W))[..., None] + p10 * (U * (1 - W))[..., None]
                 + p01 * ((1 - U) * W)[..., None] + p11 * (U * W)[..., None])
            parts.append(P.reshape(-1, 3)[cells])
    return weld(np.concatenate(parts))
