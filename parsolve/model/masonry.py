"""Polyhedra and masonry in the model vocabulary (a mixin of Model).

    model.polyhedron(vertices, "stone", density=2400)            # the convex hull, world frame
    model.polyhedra(brick, centers, "stone", density=2400)       # one template, many blocks
    model.arch(span=2.0, thickness=0.2, depth=0.5, blocks=21, material="stone", density=2400)
    model.wall(length=3.0, height=1.0, brick=(0.2, 0.1, 0.05), material="stone", density=1800)
    model.vault(span=2.0, thickness=0.15, length=1.0, blocks=15, rings=4, ...)
    model.bridge(span=10.0, thickness=0.5, width=6.0, blocks=50, rings=30, deck=6.0, ...)

A polyhedron is given by its vertices (the convex hull) or vertices and faces; its mass, centre
and inertia are those of the uniform solid (shapes/polyhedron.py). Blocks placed from one
template share it in shapes.LIBRARY (an arch's equal voussoirs, a wall's bricks).
Abutments and bases are fixed (fixed=True): obstacles, which never size the broad phase.
"""
import numpy as np

from .. import shapes
from ..dynamics.rotation import matrix_to_quat
from ..errors import InputError
from ..platform import libm
from ..shapes import polyhedron
from ..tables.checks import finite, orientation_quaternion, positive


class MasonryCommands:
    """Model's commands for convex polyhedra and masonry (arches, walls, vaults)."""

    def polyhedron(self, vertices, material, faces=None, density=None, mass=None,
                   velocity=(0, 0, 0), angular_velocity=(0, 0, 0), id=None, fixed=False,
                   name=None):
        """One convex polyhedron with `vertices` (n, 3) in the world frame (and `faces`, lists
        of vertex indices, or None: the convex hull); returns its id (or name when fixed)."""
        out = self.polyhedra(vertices, [(0.0, 0.0, 0.0)], material, faces=faces,
                             density=density, mass=mass, velocities=[velocity],
                             angular_velocities=[angular_velocity],
                             ids=None if id is None else [id], fixed=fixed,
                             names=None if name is None else [name])
        return out[0]

    def polyhedron_from_file(self, path, material, units="m", scale=1.0, rotation=None,
                             translation=None, reader="auto", **options):
        """A convex block from a surface file (STL, OBJ, or what meshio reads): the convex
        hull of its vertices in `units`, placed by scale, rotation and translation (world
        frame); the rest as polyhedron() (density, mass, velocity, fixed, name, ...)."""
        from ..shapes.mesh import read_vertices

        return self.polyhedron(read_vertices(path, units, scale, rotation, translation, reader),
                               material, **options)

    def polyhedra(self, vertices, centers, material, faces=None, orientations=None,
                  density=None, mass=None, velocities=None, angular_velocities=None, ids=None,
                  fixed=False, names=None):
        """Copies of one convex polyhedron: `vertices` (n, 3) in its own frame, whose origin
        is put at each of `centers` (k, 3), turned by `orientations` (k quaternions, rotation
        matrices or (axis, angle) pairs; default none). One template for all. Returns the
        ids (or the names, fixed=True: obstacles, default "polyhedron K")."""
        what = "polyhedra" if ids is None else f"body {ids[0]}"
        hull, vol, moments, c, Q = polyhedron.make(what, vertices, faces)
        X = finite(f"{what}: centers", centers)
        if X.ndim != 2 or X.shape[1] != 3:
            raise InputError(f"{what}: centers must be a (k, 3) array, got shape {X.shape}")
        k = len(X)
        if orientations is None:
            Rs = np.tile(np.eye(3), (k, 1, 1))
        else:
            if len(orientations) != k:
                raise InputError(f"{what}: {k} centers but {len(orientations)} orientations")
            from ..dynamics.rotation import quat_to_matrix

            qs = np.array([orientation_quaternion(f"{what}: orientation {m}", o)
                           for m, o in enumerate(orientations)])
            Rs = quat_to_matrix(qs / np.linalg.norm(qs, axis=1)[:, None])
        x = X + Rs @ c
        q = np.array([matrix_to_quat(R @ Q) for R in Rs]).reshape(k, 4)
        key = shapes.LIBRARY.add(shapes.POLYHEDRON, hull.params())
        if fixed:
            if names is not None and len(names) != k:
                raise InputError(f"fixed polyhedra: {k} centers but {len(names)} names")
            out = []
            for m in range(k):
                name = self._fixed_name("polyhedron", None if names is None else names[m],
                                        density=density, mass=mass, id=ids,
                                        velocity=(0, 0, 0) if velocities is None else
                                        velocities[m], angular_velocity=(0, 0, 0)
                                        if angular_velocities is None else
                                        angular_velocities[m])
                self.obstacles._add(shapes.POLYHEDRON, key, x[m], np.zeros(3), q[m],
                                    hull.radius, self.materials.index(material), name)
                out.append(name)
            return out
        ids = self._ids(ids, k)
        m = self._mass(density, mass, np.full(k, vol), k, ids)
        inertia = (m / vol)[:, None] * moments[None, :]
        self._chunks.append(self._chunk(
            ids, shapes.POLYHEDRON, self.materials.index(material), np.full(k, hull.radius),
            key, m, inertia, x, q, velocities, angular_velocities))
        return ids

    # -- masonry -------------------------------------------------------------------------------
    def arch(self, span, thickness, depth, blocks, material, density, rise=None,
             origin=(0, 0, 0), abutments=True, abutment_material=None, pointed=False):
        """An arch of `blocks` voussoirs in the x-z plane, `depth` along y, centred on
        origin's x with its springings at origin's z; intrados span `span`, radial
        `thickness`. Circular: a semicircle (rise None: R = span / 2) or a segmental arch of
        that rise (<= span / 2), equal voussoirs. pointed=True: a pointed (Gothic) arch of
        that rise (> span / 2; default span, the equilateral arch), each half an arc centred
        on the springing line, an even number of voussoirs meeting on a vertical crown joint.
        Voussoirs are wedges between radial joints; abutments=True sets fixed blocks under
        the springings whose top faces are the springing joints. Returns the voussoirs' ids,
        springing to springing."""
        span = float(positive("arch: span", span))
        t = float(positive("arch: thickness", thickness))
        depth = float(positive("arch: depth", depth))
        n = int(blocks)
        if n < 1:
            raise InputError(f"arch: blocks must be >= 1, got {blocks}")
        o = finite("arch: origin", origin, (3,))
        half = span / 2.0

        def radial(cx, cz, Rr, ang):
            d = np.array([libm.cos(ang), 0.0, libm.sin(ang)])
            c = o + (cx, 0.0, cz)
            return c + Rr * d, c + (Rr + t) * d

        if pointed:
            rise = span if rise is None else float(positive("arch: rise", rise))
            if rise <= half or n % 2:
                raise InputError(f"arch: a pointed arch needs a rise above span / 2 (got "
                                 f"{rise}) and an even number of voussoirs (got {n})")
            cx = (half * half - rise * rise) / (2 * half)      # the right half's centre
            Rr = half - cx
            crown = libm.arctan2(rise, -cx)
            angles = np.linspace(0.0, crown, n // 2 + 1)
            right = [radial(cx, 0.0, Rr, a) for a in angles[:-1]]
            top = (o + (0.0, 0.0, rise), o + (0.0, 0.0, np.sqrt((Rr + t) ** 2 - cx * cx)))
            mirror = np.array([-1.0, 1.0, 1.0])
            left = [(o + (p - o) * mirror, o + (q - o) * mirror) for p, q in right]
            joints = left + [top] + right[::-1]
        else:
            if rise is None:
                Rr, zc, a0 = half, 0.0, 0.0
            else:
                rise = float(positive("arch: rise", rise))
                if rise > half:
                    raise InputError(f"arch: the rise {rise} of a circular arch is at most "
                                     "span / 2 (pointed=True for more)")
                Rr = (half * half + rise * rise) / (2 * rise)
                zc = rise - Rr
                a0 = libm.arcsin(-zc / Rr)
            joints = [radial(0.0, zc, Rr, a) for a in np.linspace(np.pi - a0, a0, n + 1)]
        return self._ring(joints, t, depth, material, density, abutments, abutment_material)

    def _ring(self, joints, t, depth, material, density, abutments, abutment_material):
        """Voussoirs between consecutive joints (intrados point, extrados point) in the x-z
        plane, and fixed abutments under the first and the last."""
        ids = []
        for k in range(len(joints) - 1):
            pts = []
            for joint in (joints[k], joints[k + 1]):
                for p in joint:
                    for y in (-depth / 2, depth / 2):
                        pts.append(p + (0.0, y, 0.0))
            ids.append(int(self._wedge(np.array(pts), material, density)))
        if abutments:
            for inner, outer in (joints[0], joints[-1]):
                lo = min(inner[2], outer[2]) - t
                pts = [np.asarray(p) + (0.0, y, 0.0) for y in (-depth / 2, depth / 2)
                       for p in (inner, outer, (inner[0], inner[1], lo),
                                 (outer[0], inner[1], lo))]
                self.polyhedron(np.array(pts), abutment_material or material, fixed=True)
        return ids

    def _wedge(self, pts, material, density):
        """One voussoir from its 8 corners (world), sharing a template with its equals: the
        corners are taken about their mean, turned into the x-z plane's frame of the wedge."""
        c = pts.mean(axis=0)
        r = pts[2::4].sum(axis=0) + pts[3::4].sum(axis=0) - pts[0::4].sum(axis=0) - \
            pts[1::4].sum(axis=0)                                # inner to outer, radial
        ang = libm.arctan2(r[0], r[2])                           # rotation about y
        Ry = np.array([[libm.cos(ang), 0, libm.sin(ang)], [0, 1, 0],
                       [-libm.sin(ang), 0, libm.cos(ang)]])
        local = np.round((pts - c) @ Ry, 12)                     # equal wedges: one template
        return self.polyhedra(local, [c], material, density=density, orientations=[Ry])[0]

    def wall(self, length, height, brick, material, density, origin=(0, 0, 0), gap=0.0):
        """A wall of bricks in running bond along x from origin (its lower left front
        corner), `brick` (lx, ly, lz) full dimensions; every other course starts with a half
        brick. Returns the ids, course by course."""
        lx, ly, lz = positive("wall: brick", brick, (3,))
        o = finite("wall: origin", origin, (3,))
        courses = int(round(float(height) / lz))
        per = int(round(float(length) / lx))
        if courses < 1 or per < 1:
            raise InputError(f"wall: {length} x {height} holds no brick of {tuple(brick)}")
        full = np.array([(x, y, z) for x in (-lx / 2, lx / 2) for y in (-ly / 2, ly / 2)
                         for z in (-lz / 2, lz / 2)])
        halfb = full * (0.5, 1, 1)
        ids = []
        for c in range(courses):
            z = o[2] + (c + 0.5) * lz + c * gap
            if c % 2 == 0:
                xs = [o[0] + (k + 0.5) * lx for k in range(per)]
                ids += list(self.polyhedra(full, [(x, o[1] + ly / 2, z) for x in xs],
                                           material, density=density))
            else:
                ends = [o[0] + lx / 4, o[0] + per * lx - lx / 4]
                xs = [o[0] + lx / 2 + (k + 0.5) * lx for k in range(per - 1)]
                ids += [int(self.polyhedra(halfb, [(ends[0], o[1] + ly / 2, z)], material,
                                           density=density)[0])]
                ids += list(self.polyhedra(full, [(x, o[1] + ly / 2, z) for x in xs],
                                           material, density=density))
                ids += [int(self.polyhedra(halfb, [(ends[1], o[1] + ly / 2, z)], material,
                                           density=density)[0])]
        return ids

    def vault(self, span, thickness, length, blocks, rings, material, density,
              origin=(0, 0, 0), abutments=True):
        """A barrel vault segment: `rings` semicircular arches of `blocks` voussoirs side by
        side along y, each `length / rings` deep, every other ring's joints staggered by half
        a voussoir (its end voussoirs halves: a bonded vault). Returns the ids."""
        rings = int(rings)
        if rings < 1:
            raise InputError(f"vault: rings must be >= 1, got {rings}")
        depth = float(positive("vault: length", length)) / rings
        o = finite("vault: origin", origin, (3,))
        n = int(blocks)
        if n < 2:
            raise InputError(f"vault: blocks must be >= 2, got {blocks}")
        Rr = float(positive("vault: span", span)) / 2
        t = float(positive("vault: thickness", thickness))
        full = np.linspace(np.pi, 0.0, n + 1)
        staggered = np.concatenate([[np.pi], 0.5 * (full[:-1] + full[1:]), [0.0]])
        ids = []
        for r in range(rings):
            at = o + (0.0, (r + 0.5) * depth - length / 2, 0.0)
            joints = [(at + Rr * d, at + (Rr + t) * d) for d in
                      (np.array([libm.cos(a), 0.0, libm.sin(a)]) for a in
                       (staggered if r % 2 else full))]
            ids += self._ring(joints, t, depth, material, density, abutments, None)
        return ids

    def bridge(self, span, thickness, width, blocks, rings, deck, brick, material, density,
               leaves=1, extend=None, gap=0.0, origin=(0, 0, 0)):
        """A masonry arch bridge: a barrel vault (`rings` semicircular rings of `blocks`
        voussoirs, bonded, across `width` along y) with spandrel walls on both faces, `leaves`
        bricks thick, in running bond from the springings up to the deck level `deck` (above
        the springings), `extend` beyond the extrados' springings (default the thickness),
        on two fixed abutments whose tops (z = 0) carry the springings and the walls' ends.
        A wall brick over the arch is the part of its course's brick above the face ring's
        extrados: its bottom is the chord of the extrados over the brick, raised to clear
        the extrados' corners between (a gap of at most that chord's sagitta); a part less
        than a quarter of a brick is left out. `gap`: between courses. Returns the ids
        (voussoirs, then the walls' bricks)."""
        Rr = float(positive("bridge: span", span)) / 2
        t = float(positive("bridge: thickness", thickness))
        W = float(positive("bridge: width", width))
        lx, ly, lz = positive("bridge: brick", brick, (3,))
        deck = float(positive("bridge: deck", deck))
        leaves = int(leaves)
        o = finite("bridge: origin", origin, (3,))
        if leaves < 1 or leaves * ly > W / 2:
            raise InputError(f"bridge: {leaves} leaves of {ly} do not fit in half the width {W}")
        if deck <= Rr + t:
            raise InputError(f"bridge: the deck {deck} must lie above the crown's extrados "
                             f"{Rr + t}")
        ext = t if extend is None else float(positive("bridge: extend", extend))
        ids = list(self.vault(2 * Rr, t, W, blocks, rings, material, density, origin=o,
                              abutments=False))
        end = Rr + t + ext
        for side in (-1, 1):              # an abutment under each springing and wall end
            xs = (side * (Rr - t), side * end)
            pts = [o + (x, y, z) for x in xs for y in (-W / 2, W / 2) for z in (-t, 0.0)]
            self.polyhedron(np.array(pts), material, fixed=True,
                            name=f"bridge abutment {'left' if side < 0 else 'right'}")
        # the extrados under each leaf: the highest of the rings it stands on (the vault's
        # even rings have full joints, its odd ones staggered)
        full = np.linspace(np.pi, 0.0, int(blocks) + 1)
        staggered = np.concatenate([[np.pi], 0.5 * (full[:-1] + full[1:]), [0.0]])
        depth = W / int(rings)
        courses = int(np.floor(deck / lz + 1e-9))      # courses under the deck
        per = int(np.ceil(2 * end / lx))
        for side in (-1, 1):
            for leaf in range(leaves):
                y = side * (W / 2 - (leaf + 0.5) * ly)
                r0 = int(np.floor((y - ly / 2 + W / 2) / depth + 1e-9))
                r1 = int(np.ceil((y + ly / 2 + W / 2) / depth - 1e-9))
                lines = [staggered if r % 2 else full for r in range(max(r0, 0), min(r1, rings))]
                px = np.unique(np.concatenate([(Rr + t) * libm.cos(a) for a in lines]))
                pz = np.max([np.interp(px, (Rr + t) * libm.cos(a), (Rr + t) * libm.sin(a))
                             for a in lines], axis=0)
                for c in range(courses):
                    z0 = c * (lz + gap)
                    shift = 0.5 * lx if (c + leaf) % 2 else 0.0
                    cuts = np.clip(-end + shift + lx * np.arange(-1, per + 1), -end, end)
                    for x0, x1 in zip(cuts[:-1], cuts[1:]):
                        if x1 - x0 > 1e-9 * lx:
                            ids += self._spandrel_brick(x0, x1, z0, z0 + lz, y, ly, px, pz,
                                                        o, lx, material, density)
        return ids

    def _spandrel_brick(self, x0, x1, z0, z1, y, ly, px, pz, o, lx, material, density):
        """The part of the brick [x0, x1] x [z0, z1] (depth ly about y) above the extrados
        polyline (px, pz), as one polyhedron ([] if less than a quarter of a brick)."""
        def extrados(x):
            return np.interp(x, px, pz, left=0.0, right=0.0)

        a, b = extrados(x0), extrados(x1)
        inner = px[(px > x0) & (px < x1)]
        lift = 0.0
        if len(inner):                    # the chord under the polyline's corners: raise it
            lift = max(0.0, float((extrados(inner) - (a + (b - a) * (inner - x0) /
                                                      (x1 - x0))).max()))
        a, b = a + lift, b + lift
        # the rectangle clipped to z >= chord(x) (Sutherland-Hodgman, one half-plane)
        rect = [(x0, z0), (x1, z0), (x1, z1), (x0, z1)]

        def above(p):
            return p[1] - (a + (b - a) * (p[0] - x0) / (x1 - x0))

        poly = []
        for k in range(4):
            p, q = rect[k], rect[(k + 1) % 4]
            fp, fq = above(p), above(q)
            if fp >= 0:
                poly.append(p)
            if (fp >= 0) != (fq >= 0):
                s = fp / (fp - fq)
                poly.append((p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])))
        P = np.array(poly)
        for _ in range(2):                # drop repeated and collinear corners
            if len(P) < 3:
                return []
            d1 = P - np.roll(P, 1, axis=0)
            d2 = np.roll(P, -1, axis=0) - P
            turn = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
            P = P[(np.abs(turn) > 1e-10 * lx * lx) & (np.hypot(*d1.T) > 1e-6 * lx)]
        if len(P) < 3:
            return []
        area = 0.5 * abs(np.dot(P[:, 0], np.roll(P[:, 1], -1)) -
                         np.dot(P[:, 1], np.roll(P[:, 0], -1)))
        if area < 0.25 * lx * (z1 - z0):
            return []
        pts = np.array([(px_, y + dy, pz_) for px_, pz_ in P for dy in (-ly / 2, ly / 2)])
        pts = pts + o
        c = pts.mean(axis=0)
        return list(self.polyhedra(np.round(pts - c, 12), [c], material, density=density))

