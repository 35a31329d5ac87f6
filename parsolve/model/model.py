"""The model a user script describes: bodies, shapes, surface materials, obstacles, loads.

    import parsolve as ps
    model = ps.Model(gravity=(0, 0, -9.81))
    model.surface("grain", "grain", friction=0.5, restitution=0.0)
    model.surface("grain", "wall", friction=0.3)
    model.box_walls((0, 0, 0), (1, 1, 1), material="wall")
    model.spheres(centres, radii=0.01, density=2650, material="grain")
    model.run(duration=1.0, step=1e-4, output="pour.h5")

Every input is checked where it is given; cross-checks (duplicate ids, undefined material
pairs, loads on unknown bodies) when the model is built. Units are SI (see bodies.py).
"""
import hashlib
import json

import numpy as np

from .. import elements, shapes
from ..elements.signals import is_signal
from ..errors import InputError
from ..tables import bodies as B
from ..tables.checks import finite, orientation_quaternion, positive
from .masonry import MasonryCommands
from .materials import SurfaceMaterials
from .obstacles import Obstacles

# what Model.run calls: parsolve.run's `run` (it sets this when imported, so that the model
# imports no run), or a command that loads a script for something else than a run
RUNNER = None


class Model(MasonryCommands, *elements.COMMANDS):
    """What the user describes: materials, obstacles, bodies, loads, sensors, and the
    elements' specs (joints, connectors, drivers: parsolve/elements), by kind in `elements`.
    No MPI and no run: Model.run is the entry point to parsolve.run."""

    def __init__(self, gravity=(0.0, 0.0, -9.81), contact_margin=None):
        self.gravity = finite("gravity", gravity, (3,))
        self.contact_margin = None if contact_margin is None else float(
            finite("contact_margin", contact_margin))
        self.materials = SurfaceMaterials()
        self.obstacles = Obstacles()
        self._chunks = []            # dicts of per-body arrays, in the order given
        self._generators = []        # (first id, count, make, material, density, mass)
        self._loads = []             # (gid, force, torque)
        self.sensors = []             # parsolve.io.sensors.Sensor
        self.elements = {}            # element kind's NAME -> its specs (parsolve/elements)
        self.periods = {}             # periodic axes: name -> (lower, upper)
        self._count = 0

    # -- materials and obstacles -------------------------------------------------------------
    def surface(self, a, b, friction, restitution=0.0, rolling=0.0, spinning=0.0,
                stiffness=0.0):
        """Friction coefficient and restitution for contacts between labels a and b; rolling
        and spinning: the coefficients of rolling and spinning resistance, lengths [m] (the
        largest moment a contact transmits against rolling, or spinning about its normal, is
        the coefficient times its normal force; laws/rolling.py); stiffness: a linear normal
        contact stiffness k [N/m], 0 for rigid contacts (a compliant contact's spring
        compresses by its force over k; laws/coulomb.py)."""
        self.materials.define(a, b, friction, restitution, rolling, spinning, stiffness)

    def half_space(self, point, normal, material, name=None):
        """A fixed plane through `point`; bodies live on the side `normal` points to."""
        name = name or f"half-space {len(self.obstacles)}"
        self.obstacles.add_half_space(point, normal, self.materials.index(material), name)

    def box_walls(self, lower, upper, material, top=False):
        """A fixed container [lower, upper] of inward-facing walls (open at the top by default)."""
        lo = finite("box_walls: lower", lower, (3,))
        hi = finite("box_walls: upper", upper, (3,))
        if np.any(hi <= lo):
            raise InputError(f"box_walls: upper {hi} must exceed lower {lo} in every coordinate")
        for axis in range(3):
            for side, corner in ((1.0, lo), (-1.0, hi)):
                if axis == 2 and side < 0 and not top:
                    continue
                n = np.zeros(3)
                n[axis] = side
                label = "xyz"[axis] + ("-min" if side > 0 else "-max")
                self.half_space(corner, n, material, name=f"wall {label}")

    def mesh(self, surface, material, units="m", scale=1.0, rotation=None, translation=None,
             name=None, inside=False, sides=None, repair=(), closed=None, reader="auto"):
        """A triangle-mesh obstacle (a hopper, a silo, a chute, a drum, terrain): `surface` a
        file (STL ASCII or binary, OBJ; other formats through meshio) read in `units` and
        placed by scale, rotation (a quaternion or a matrix) and translation, or a
        shapes.mesh.TriangleMesh already placed. inside=True: a closed surface holding the
        bodies (its normals turned inwards); sides=1 or 2 (default: 1 closed, 2 open);
        repair, closed: TriangleMesh's checks. On every rank, fixed unless model.move moves
        it; returns its name (default the file's name, or "mesh K")."""
        from ..shapes.mesh import TriangleMesh

        if isinstance(surface, TriangleMesh):
            if units != "m" or scale != 1.0 or rotation is not None or translation is not None:
                raise InputError(f"mesh {surface.name!r}: a TriangleMesh is placed already "
                                 "(units, scale, rotation, translation are for files)")
            m = surface
            name = name or f"mesh {len(self.obstacles)}"
        else:
            import os

            name = name or os.path.basename(os.fspath(surface))
            m = TriangleMesh.read(surface, units=units, scale=scale, rotation=rotation,
                                  translation=translation, reader=reader, name=name,
                                  inside=inside, sides=sides, repair=repair, closed=closed)
        if name in self.obstacles.names:
            raise InputError(f"mesh {name!r}: an obstacle of that name exists (give name=)")
        self.obstacles._add(shapes.MESH, shapes.mesh.add(m), np.zeros(3), np.zeros(3),
                            (1.0, 0.0, 0.0, 0.0), shapes.mesh.bounding_radius(m),
                            self.materials.index(material), name)
        return name

    def periodic(self, x=None, y=None, z=None):
        """Periodic boundaries: along each axis given as (lower, upper) space repeats with the
        period upper - lower (a body leaving at upper comes back at lower, and bodies touch
        across the boundary). For chute and shear flows and pe's periodic benchmarks; walls
        across a periodic axis make no sense and the period must exceed twice the largest
        body's diameter. Not with projection on constraints (yet)."""
        from ..contact.periodic import Period

        spec = {k: v for k, v in (("x", x), ("y", y), ("z", z)) if v is not None}
        Period(spec)                                    # checks it
        self.periods = {k: (float(v[0]), float(v[1])) for k, v in spec.items()}

    # -- bodies ------------------------------------------------------------------------------
    def sphere(self, center, radius, material, density=None, mass=None, velocity=(0, 0, 0),
               angular_velocity=(0, 0, 0), id=None, inertia=None, fixed=False, name=None):
        """One sphere; returns its id. fixed=True makes it an obstacle, as for box()."""
        if fixed:
            name = self._fixed_name("sphere", name, density=density, mass=mass,
                                    inertia=inertia, id=id, velocity=velocity,
                                    angular_velocity=angular_velocity)
            self.obstacles.add_sphere(center, radius, self.materials.index(material), name)
            return name
        ids = None if id is None else [id]
        return int(self.spheres([center], radius, material, density, mass, [velocity],
                                [angular_velocity], ids, inertia)[0])

    def spheres(self, centers, radii, material, density=None, mass=None, velocities=None,
                angular_velocities=None, ids=None, inertia=None):
        """Many spheres at once (arrays; radii, density or mass may be scalars). Returns ids.

        Mass comes from density (uniform ball) or is given; so is the moment of inertia
        (default 2/5 m r^2; `inertia` gives it, scalar or one per sphere, e.g. a hollow shell's
        2/3 m r^2)."""
        n = len(np.atleast_2d(centers))
        ids = self._ids(ids, n)
        self._chunks.append(self._sphere_chunk(ids, centers, radii, self.materials.index(
            material), density, mass, velocities, angular_velocities, inertia))
        return ids

    def sphere_generator(self, count, make, material, density=None, mass=None):
        """`count` spheres made on demand, with ids first..first+count-1 (returned as a range).

        make(ids) returns a dict with "centers" (k, 3), "radii" (k or scalar) and optionally
        "velocities", "angular_velocities" for the given int64 ids. Each rank calls it for its
        own share only, so no rank ever holds every body: the way to set up millions of them."""
        count = int(count)
        if count < 1:
            raise InputError(f"sphere_generator: count must be >= 1, got {count}")
        ids = self._ids(None, count)
        self._generators.append((ids[0], count, make, self.materials.index(material), density,
                                 mass))
        return range(int(ids[0]), int(ids[0]) + count)

    def _sphere_chunk(self, ids, centers, radii, material, density, mass, velocities,
                      angular_velocities, inertia=None):
        x = finite("spheres: centers", centers)
        n = len(ids)
        if x.ndim != 2 or x.shape != (n, 3):
            raise InputError(f"spheres: centers must be an ({n}, 3) array, got shape {x.shape}")
        r = self._per_body("radius", radii, n, ids)
        m = self._mass(density, mass, shapes.sphere.volume(r), n, ids)
        inertia = np.repeat((shapes.sphere.inertia(m, r) if inertia is None else
                             self._per_body("inertia", inertia, n, ids))[:, None], 3, axis=1)
        return self._chunk(ids, shapes.SPHERE, material, r, shapes.NONE, m, inertia, x,
                           np.tile([1.0, 0, 0, 0], (n, 1)), velocities, angular_velocities)

    def box(self, center, half_extents, material, density=None, mass=None,
            orientation=(1.0, 0, 0, 0), velocity=(0, 0, 0), angular_velocity=(0, 0, 0), id=None,
            inertia=None, fixed=False, name=None):
        """A cuboid with half extents (a, b, c) along its body axes; returns its id.

        orientation: a quaternion (w, x, y, z), a 3 x 3 rotation matrix (body axes as its
        columns, in the world frame) or an (axis, angle) pair [rad]. Mass from density
        (uniform solid) or given; principal moments of inertia about the body axes
        m (b^2 + c^2) / 3, ... unless `inertia` (3 values) gives them.

        fixed=True makes it an obstacle (a wall, a floor slab, a container's side): it never
        moves, has no mass, is held by every rank and does not size the broad-phase cells.
        It takes no density, mass, inertia, id or velocity; `name` (default "box K") names
        it in messages and sensors, and is returned."""
        if fixed:
            name = self._fixed_name("box", name, density=density, mass=mass, inertia=inertia,
                                    id=id, velocity=velocity, angular_velocity=angular_velocity)
            q = orientation_quaternion(f"fixed box {name!r}: orientation", orientation)
            self.obstacles.add_box(center, half_extents, q / np.linalg.norm(q),
                                   self.materials.index(material), name)
            return name
        ids = self._ids(None if id is None else [id], 1)
        half = positive(f"body {ids[0]}: half_extents", half_extents, (3,))[None, :]
        q = orientation_quaternion(f"body {ids[0]}: orientation", orientation)
        nq = np.linalg.norm(q)
        m = self._mass(density, mass, shapes.box.volume(half), 1, ids)
        inertia = (shapes.box.inertia(m, half) if inertia is None else
                   positive(f"body {ids[0]}: inertia", inertia, (3,))[None, :])
        self._chunks.append(self._chunk(
            ids, shapes.BOX, self.materials.index(material), shapes.box.bounding_radius(half),
            shapes.LIBRARY.add(shapes.BOX, half[0]), m, inertia,
            finite(f"body {ids[0]}: center", center, (3,))[None, :],
            (q / nq)[None, :], [velocity], [angular_velocity]))
        return int(ids[0])

    def compound(self, parts, material, density=None, mass=None, centre=None, inertia=None,
                 position=(0.0, 0.0, 0.0), orientation=(1.0, 0, 0, 0), velocity=(0, 0, 0),
                 angular_velocity=(0, 0, 0), id=None, rtol=None):
        """One compound body of `parts` (shapes.compound's sphere(c, r), block(vertices) and
        block_from_file(path, ...): a clump of spheres, a non-convex block of convex ones),
        given in its own frame, whose origin is put at `position`, turned by `orientation`
        (the parts in world coordinates by default). Mass, centre and inertia of the uniform
        solid from `density`, or scaled to `mass`: exact for disjoint parts, within a stated
        bound for overlapping spheres (rtol: the largest relative error accepted); or given:
        mass=, centre= and inertia= (3 x 3 about the centre, the given frame). Contacts are
        the parts' own, never between parts of one body. Returns its id."""
        ids = None if id is None else [id]
        return int(self.compounds(parts, [position], material, [orientation], density, mass,
                                  centre, inertia, [velocity], [angular_velocity], ids,
                                  rtol)[0])

    def compounds(self, parts, positions, material, orientations=None, density=None,
                  mass=None, centre=None, inertia=None, velocities=None,
                  angular_velocities=None, ids=None, rtol=None):
        """Copies of one compound (compound() says what the arguments are): its frame's origin
        at each of `positions` (k, 3), turned by `orientations` (k quaternions, matrices or
        (axis, angle) pairs; default none). One template for all; returns the ids."""
        from ..dynamics.rotation import matrix_to_quat, quat_to_matrix
        from ..shapes import compound as parts_of

        if not len(parts) or not all(isinstance(p, parts_of.Part) for p in parts):
            raise InputError("compound: parts must be a non-empty list of "
                             "parsolve.shapes.compound.sphere(...) / block(...) parts, got "
                             f"{parts!r}")
        props = parts_of.mass_properties(parts, density=density, mass=mass, centre=centre,
                                         inertia=inertia, rtol=rtol)
        shape = parts_of.build(parts, props)
        key = parts_of.add(shape)
        X = finite("compound: positions", positions)
        if X.ndim != 2 or X.shape[1] != 3:
            raise InputError(f"compound: positions must be a (k, 3) array, got {X.shape}")
        k = len(X)
        if orientations is None:
            Rs = np.tile(np.eye(3), (k, 1, 1))
        else:
            if len(orientations) != k:
                raise InputError(f"compound: {k} positions but {len(orientations)} "
                                 "orientations")
            qs = np.array([orientation_quaternion(f"compound: orientation {m}", o)
                           for m, o in enumerate(orientations)])
            Rs = quat_to_matrix(qs / np.linalg.norm(qs, axis=1)[:, None])
        ids = self._ids(ids, k)
        q = np.array([matrix_to_quat(R @ props.Q) for R in Rs]).reshape(k, 4)
        self._chunks.append(self._chunk(
            ids, shapes.COMPOUND, self.materials.index(material), np.full(k, shape.radius),
            key, np.full(k, props.mass), np.tile(props.moments, (k, 1)),
            X + np.einsum("nij,j->ni", Rs, props.centre), q, velocities, angular_velocities))
        return ids

    def _fixed_name(self, shape, name, **body_only):
        """The name of a fixed shape (default "SHAPE K", K its obstacle index), after refusing
        what only a body takes."""
        name = f"{shape} {len(self.obstacles)}" if name is None else str(name)
        for key, value in body_only.items():
            moving = key.endswith("velocity") and np.any(np.asarray(value, float) != 0)
            if moving or (not key.endswith("velocity") and value is not None):
                raise InputError(f"fixed {shape} {name!r}: a fixed {shape} takes no {key} (it "
                                 "never moves and has no mass)")
        return name

    def sensor(self, name, bodies=None, pairs=None, quantities=None, every=1, joints=None,
               region=None, **options):
        """A time series of chosen bodies, contact pairs or joints (by name) in the results
        file, every `every` steps, at /sensors/NAME (parsolve/sensors.py lists the
        quantities); or, with region=, the measures of a region's cells
        (parsolve/measures/sensor.py)."""
        from ..io.sensors import Sensor

        if any(s.name == name for s in self.sensors):
            raise InputError(f"sensor {name!r} is defined twice")
        if region is not None:
            from ..measures.sensor import MeasureSensor

            if any(x is not None for x in (bodies, pairs, joints)):
                raise InputError(f"sensor {name!r}: give region= alone, or bodies=, pairs= "
                                 "or joints=")
            self.sensors.append(MeasureSensor(name, region, quantities, every, **options))
            return
        if options:
            raise InputError(f"sensor {name!r}: {', '.join(options)}: options of a region "
                             "sensor (region=)")
        self.sensors.append(Sensor(name, bodies, pairs, quantities, every, joints))

    def load(self, body, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)):
        """A force (at the mass centre) and torque on a body, world frame: constants, or
        signals of time (a callable of t, or a spline (times, values (n, 3))) evaluated at
        each step's midpoint."""
        if is_signal(force) or is_signal(torque):
            return self._time_load(body, force, torque)
        f = finite(f"load on body {body}: force", force, (3,))
        t = finite(f"load on body {body}: torque", torque, (3,))
        self._loads.append((int(body), f, t))

    # -- building ----------------------------------------------------------------------------
    def build(self):
        """All the bodies as a BodySet sorted by id, with their loads, after the model-wide
        checks (duplicate ids, loads on unknown bodies, material pairs)."""
        bodies, found, counts = self.part(0, 1)
        twice = bodies.gid[1:][bodies.gid[1:] == bodies.gid[:-1]]
        self.check(int(twice.min()) if len(twice) else None, found, counts)
        return bodies

    def part(self, rank, size):
        """Rank `rank`'s slice (of `size` equal slices) of the bodies, sorted by id, with their
        constant loads; and what the model-wide checks (`check`) need of it, to be reduced over
        the ranks by the run: which of the model's loads act on its bodies, and how many of its
        bodies have each material. Calls the sphere generators (user code) for the slice."""
        if not self._chunks and not self._generators:
            raise InputError("the model has no bodies")
        bodies = self._this_ranks_bodies(rank, size)
        found = np.zeros(len(self._loads), bool)
        for k, (gid, f, t) in enumerate(self._loads):
            i = np.searchsorted(bodies.gid, gid)
            if i < len(bodies) and bodies.gid[i] == gid:
                bodies.force[i] += f
                bodies.torque[i] += t
                found[k] = True
        return bodies, found, np.bincount(bodies.material, minlength=len(self.materials.labels))

    def check(self, duplicate, found, counts):
        """The model-wide checks on facts reduced over all the bodies: the smallest id given
        twice (or None), which loads act on a body, the bodies of each material."""
        if duplicate is not None:
            raise InputError(f"duplicate body id {duplicate}")
        if not found.all():
            raise InputError(f"load on unknown body {self._loads[int(np.argmin(found))][0]}")
        self._check_pairs(counts)

    def _this_ranks_bodies(self, rank, size):
        """Rank `rank`'s slice (of `size`) of every chunk and generator, sorted by id."""
        share = lambda n: slice(n * rank // size, n * (rank + 1) // size)  # noqa: E731
        pieces = [{f: v[share(len(c["gid"]))] for f, v in c.items()} for c in self._chunks]
        for first, count, make, material, density, mass in self._generators:
            s = share(count)
            ids = np.arange(first + s.start, first + s.stop, dtype=np.int64)
            if len(ids):
                d = make(ids)
                bad = ~np.isfinite(np.asarray(d["centers"], float)).reshape(len(ids), -1).all(1)
                if bad.any():
                    raise InputError(f"sphere_generator: body {ids[bad][0]}: centre "
                                     f"{np.asarray(d['centers'])[bad][0]} is not finite")
                pieces.append(self._sphere_chunk(ids, d["centers"], d["radii"], material,
                                                 density, mass, d.get("velocities"),
                                                 d.get("angular_velocities")))
        pieces = [p for p in pieces if len(p["gid"])]
        cat = {f: np.concatenate([p[f] for p in pieces]) if pieces else
               np.zeros((0,) + B.FIELDS[f][0], B.FIELDS[f][1]) for f in B.FIELDS}
        return B.BodySet(len(cat["gid"]), **cat).sorted_by_gid()

    def _check_pairs(self, count):
        used = np.nonzero(count)[0]
        count = count[used]
        for i, ci in zip(used, count):
            for j in used:
                if i < j or (i == j and ci > 1):
                    self.materials.require(i, j, "bodies of both labels may touch")
            for k, name in zip(self.obstacles.material, self.obstacles.names):
                self.materials.require(i, k, f"bodies may touch {name}")

    def fingerprint(self):
        """A hash of everything that defines the model (not its state): guards restarts."""
        h = hashlib.sha256()
        defined = {"gravity": self.gravity.tolist(), "margin": self.contact_margin,
                   "materials": self.materials.state(), "obstacles": self.obstacles.names}
        if self.periods:
            defined["periodic"] = self.periods
        h.update(json.dumps(defined, default=str).encode())
        for arr in (self.obstacles.point, self.obstacles.normal):
            h.update(np.ascontiguousarray(arr).tobytes())
        if np.any(self.obstacles.shape != shapes.PLANE):
            # obstacles of other shapes and their templates (a model whose obstacles are all
            # planes keeps the fingerprint it had before obstacles had shapes)
            for arr in (self.obstacles.shape, self.obstacles.template, self.obstacles.q):
                h.update(np.ascontiguousarray(arr).tobytes())
        for group in elements.FINGERPRINT:                 # the elements' specs
            specs = [s for state in group for s in state(self)]
            if specs:
                h.update(json.dumps(specs, default=str).encode())
        for c in self._chunks:
            for f in ("gid", "shape", "material", "radius", "half", "mass", "inertia"):
                h.update(np.ascontiguousarray(_half(c) if f == "half" else c[f]).tobytes())
            if np.any(~np.isin(c["shape"], shapes.BY_PARAMETERS)):     # geometry by template
                h.update(np.ascontiguousarray(c["template"]).tobytes())
        for first, count, make, material, density, mass in self._generators:
            h.update(repr((int(first), count, getattr(make, "__qualname__", ""), int(material),
                           density, mass)).encode())
        return h.hexdigest()

    def run(self, duration, step, **options):
        """Integrate for `duration` seconds with time step `step`: parsolve.run.run, which
        makes a parsolve.Simulation (its docstring lists the options) and runs it.

        A command that loads the script for another purpose (`parsolve dofs`) replaces
        RUNNER, which then receives the model instead of a run."""
        return RUNNER(self, duration=duration, step=step, **options)

    # -- helpers -----------------------------------------------------------------------------
    def _ids(self, ids, n):
        if ids is None:
            out = np.arange(self._count, self._count + n, dtype=np.int64)
        else:
            out = np.asarray(ids)
            if out.shape != (n,) or not np.issubdtype(out.dtype, np.integer):
                raise InputError(f"ids must be {n} integers, got {ids!r}")
            if np.any(out < 0):
                raise InputError(f"body id must be >= 0, got {int(out[out < 0][0])}")
            out = out.astype(np.int64)
        self._count += n
        return out

    @staticmethod
    def _per_body(name, value, n, ids):
        """A positive per-body quantity (scalar or n values); errors name the body."""
        try:
            arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
        except (TypeError, ValueError):
            raise InputError(f"body {ids[0]}: {name}: expected {n} numbers, got {value!r}") \
                from None
        bad = ~np.isfinite(arr) | (arr <= 0)
        if bad.any():
            k = int(np.argmax(bad))
            raise InputError(f"body {int(ids[k])}: {name} must be a finite number > 0, "
                             f"got {arr[k]}")
        return arr

    def _mass(self, density, mass, volume, n, ids):
        if (density is None) == (mass is None):
            raise InputError(f"body {ids[0]}: give exactly one of density and mass")
        if mass is not None:
            return self._per_body("mass", mass, n, ids)
        return self._per_body("density", density, n, ids) * volume

    @staticmethod
    def _chunk(ids, shape, material, radius, template, mass, inertia, x, q, v, w):
        n = len(ids)
        v = np.zeros((n, 3)) if v is None else finite(f"body {ids[0]}: velocity", v, (n, 3))
        w = np.zeros((n, 3)) if w is None else finite(f"body {ids[0]}: angular velocity", w,
                                                       (n, 3))
        return {
            "gid": ids, "shape": np.full(n, shape, np.int8),
            "material": np.full(n, material, np.int32),
            "radius": radius, "template": np.full(n, template, np.int64), "mass": mass,
            "inertia": inertia, "x": x, "q": q,
            "v": v, "w": w, "force": np.zeros((n, 3)), "torque": np.zeros((n, 3))}


def _half(chunk):
    """A chunk's box half extents (zero for other shapes): the fingerprint hashes them as it
    did before bodies had templates, so a model keeps its fingerprint."""
    half = np.zeros((len(chunk["gid"]), 3))
    box = chunk["shape"] == shapes.BOX
    half[box] = shapes.LIBRARY.params(shapes.BOX, chunk["template"][box])
    return half
