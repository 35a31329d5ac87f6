"""Joints (bilateral constraints), as Solfec defines them: commands that restrain the absolute
motion of a point of a body, or the relative motion of points of two bodies. Each joint becomes
one 3-D row of U = B + W R per step, whose law (parsolve.laws) is:

- fix_point (Solfec's FIX_POINT): U = 0, the bilateral law with 3 equalities;
- fix_direction (FIX_DIRECTION): U_N = 0 along a fixed world direction, R_T = 0;
- prescribe (SET_DISPLACEMENT / SET_VELOCITY / SET_ACCELERATION): U_N = velo(t) along a fixed
  direction, R_T = 0; velo is the velocity signal, the displacement signal differentiated over
  the step or the acceleration signal integrated from 0;
- rigid_link (PUT_RIGID_LINK): U_N = 0 along the line through the two points, R_T = 0;
- spring (PUT_SPRING): R_N = h user_force(d, d') along that line, R_T = 0, d the stretch (the
  spring law, implicit in the step's end velocity, so it is stable for any stiffness).

Points are given in world coordinates in the initial configuration and move with their bodies.
`other=None` means the world (a fixed point of space). Joint rows carry the key
(gid of the body, -1 - joint index): tables/keys.py's joint namespace.

At run time (Joints), every step one row of U = B + W R per joint, next to the contacts
detection finds.
The joints are replicated on every rank (a few numbers each), like the obstacles. A rank builds
the rows of the joints whose bodies it holds (owned or ghost); the row belongs, as a contact
does, to the rank that owns its point, A's point at the half step. The row's bodies lie within
its `reach` of that point; the cells of the partition and the colouring are at least twice the
largest reach (Stepper), so the owner holds both bodies and rows of one colour never share a
body: the trajectory does not depend on the ranks. A spring that stretches beyond the reach it
had is refused by name (never silently wrong).

Drift: the velocity-level rows let positions drift; each bilateral row's free term carries
e / h, e the constraint's violation at the half step (as a contact's carries gap / h), so a
violation decays instead of growing. The prescribed motions add -velo(t + h) (for a
displacement, the velocity that ends the step on it, the arc of a turning body's point
included at the step's start's angular velocity: see _arc).
"""
import numpy as np

from .._kernels import compiled
from ..dynamics.rotation import exp_map, quat_to_matrix
from ..errors import InputError, everywhere
from ..laws import bilateral, spring
from ..tables.checks import body_id, finite, positive, unit
from ..tables.interactions import STATES, Interactions
from ..tables.keys import JOINT, NAMESPACES
from ..tables.table import same
from . import twins
from .base import Element, lookup
from .signals import Signal

TYPES = ("fix_point", "fix_direction", "prescribe", "rigid_link", "spring")
FIX_POINT, FIX_DIRECTION, PRESCRIBE, RIGID_LINK, SPRING = range(len(TYPES))
# each type's row form in joint_rows (kernels/joints.pyx): a point's three equalities (0), a
# given direction (1), the line through the points (2), that line held at its length (3)
FORMS = np.array([0, 1, 1, 3, 2], np.int64)

POSITIONAL = ("fix_point", "fix_direction", "rigid_link")   # position constraints (projection)
REACH_SLACK = 1.5     # the cells hold rows whose bodies move to 1.5 times their first reach

_modules = compiled("joints")
_kernel = _modules[0] if _modules is not None else twins


class Joints(Element):
    """The joints at run time: one row each per step (see the module's docstring)."""
    NAME = "joints"

    def __init__(self, specs):
        super().__init__(specs)
        self.type = np.array([s["type"] for s in self.specs], dtype=object)
        self.a = np.array([s["body"] for s in self.specs], np.int64)
        self.b = np.array([s["other"] for s in self.specs], np.int64)
        # what every step asks of the specs, once: the types' codes (TYPES), the bodies to
        # look up (A's, then B's), the joints to the world, the prescribed ones, and which
        # joints are of the types a caller asks for (_wanted)
        self.code = np.array([TYPES.index(t) for t in self.type], np.int64)
        self._ends = np.concatenate([self.a, self.b])
        self._world = self.b < 0
        self._prescribed = [int(j) for j in np.flatnonzero(self.code == PRESCRIBE)]
        self._present = frozenset(self.code.tolist())
        self._of_types = {}
        self._chosen = {}                 # types -> (held ids, their joints: _choose)

    def bodies(self):
        return np.unique(np.concatenate([self.a, self.b[self.b >= 0]]))

    linked = bodies

    def set_up(self, found):
        """Each joint's points in its bodies' frames, its direction and rest length, and the
        reach of its row, from its bodies' initial state."""
        n = len(self)
        for s in self.specs:
            for g in (s["body"], s["other"]):
                if g >= 0 and g not in found:
                    raise everywhere(InputError(f"joint {s['name']!r}: unknown body {g}"))
        self.pa = np.zeros((n, 3))          # A's point, A's body frame
        self.pb = np.zeros((n, 3))          # B's point in B's body frame, or a world point
        self.direction = np.zeros((n, 3))
        self.L0 = np.zeros(n)
        self.c0 = np.zeros(n)               # fix_direction: the initial offset along it
        self._chosen = {}                   # (its records hold directions, rest lengths)
        reach = np.zeros(n)
        for j, s in enumerate(self.specs):
            ka = found.at(s["body"])
            xa, Ra = found.x[ka], quat_to_matrix(found.q[ka][None])[0]
            pa = s["point"]
            pb = pa if s["other_point"] is None else s["other_point"]
            self.pa[j] = Ra.T @ (pa - xa)
            reach[j] = np.linalg.norm(pa - xa)
            if s["other"] >= 0:
                kb = found.at(s["other"])
                xb, Rb = found.x[kb], quat_to_matrix(found.q[kb][None])[0]
                self.pb[j] = Rb.T @ (pb - xb)
                reach[j] = max(reach[j], np.linalg.norm(pa - xb))
            else:
                self.pb[j] = pb
            if "direction" in s:
                self.direction[j] = s["direction"]
                self.c0[j] = (pa - pb) @ s["direction"]
            self.L0[j] = np.linalg.norm(pa - pb)
            if s["type"] in ("rigid_link", "spring") and self.L0[j] == 0.0:
                raise everywhere(InputError(f"joint {s['name']!r}: its two points coincide: "
                                            "no direction (use fix_point)"))
        self.reach = REACH_SLACK * float(reach.max()) if n else 0.0

    def constraints(self, held, t, h):
        return self.rows(held, t, h, types=POSITIONAL)[0]

    def rows(self, held, t, h, types=None):
        """The rows (Interactions) of the joints whose bodies `held` holds, at the half step
        (held's positions) and the step [t, t + h]; and (d, name): the largest distance from
        a row's point to one of its bodies, and that joint's name. types: only joints of
        these types (default all)."""
        if not len(self):
            return Interactions.empty(), (0.0, "")
        # every rank evaluates every prescribed signal, rows or not: a callable that fails
        # stops all ranks with one named error
        signal = {j: self.specs[j]["value"](t + h) if self.specs[j]["signal"] != "acceleration"
                  else self.specs[j]["value"].integral(t + h)
                  for j in self._prescribed if types is None or "prescribe" in types}
        use, c = self._choose(held.gid, types)
        n = len(use)
        if n == 0:
            return Interactions.empty(), (0.0, "")
        # the rows' points at the half step, frames and shifts by their forms, and the
        # springs' rates at the step's start (twins.joint_rows says more)
        a, b = c["columns"]["a"], c["columns"]["b"]
        pa, offset, e, dist, far, frame, shift, rate = _kernel.joint_rows(
            held.x, held.q, held.v, held.w, a, b, use, self.pa, self.pb, c["form"],
            c["directions"], c["rest_rows"], h)
        if c["given"]:                                # fix_direction, prescribe: Python's
            self._shift_given(held, h, signal, use, a, c["code"], pa, e, shift)
        springs = c["springs"]
        if len(springs) == n:                         # springs alone: their rows are all
            law = spring.rows(c["forces"], dist - c["rest"], rate, h, c["names"])
        else:
            law = bilateral.rows(c["equalities"], shift)
            if len(springs):
                pull = spring.rows(c["forces"], dist[springs] - c["rest"], rate[springs], h,
                                   c["names"])
                for column in law:
                    law[column][springs] = pull[column]
        # how far the rows' bodies are from their points (the cells hold them within half one)
        worst = int(far.argmax())
        stretch = (float(far[worst]), c["labels"][worst])
        # the columns a step writes (the reactions, the laws' states) afresh, the others
        # shared read only
        rows = Interactions.of({**c["columns"], "R": np.zeros((n, 3)),
                                "state": np.zeros((n, STATES)), "point": pa,
                                "offset": offset, "frame": frame, **law})
        return rows, stretch

    def _shift_given(self, held, h, signal, use, a, code, pa, e, shift):
        """The shifts of the rows along a given direction, in place: a fixed direction's drift
        correction, a prescribed motion's target velocity (the others' come with the rows:
        joint_rows)."""
        if FIX_DIRECTION in self._present:
            for k in np.flatnonzero(code == FIX_DIRECTION):
                j = use[k]
                shift[k, 0] = (e[k] @ self.direction[j] - self.c0[j]) / h
        if self._prescribed:
            for k in np.flatnonzero(code == PRESCRIBE):
                j, normal = use[k], self.direction[use[k]]
                moved = (pa[k] - self.specs[j]["point"]) @ normal
                if self.specs[j]["signal"] == "displacement":
                    moved += _arc(held.w[a[k]], pa[k] - held.x[a[k]], h) @ normal
                shift[k, 0] = -self._velocity(j, signal[j], h, moved)

    def _choose(self, gid, types):
        """(use, record): the joints of `types` whose bodies the held ids `gid` hold, and
        what their rows take from that choice alone (_record); kept while the held ids are
        the same (a mechanism's on one rank, step after step)."""
        key = None if types is None else tuple(types)
        got = self._chosen.get(key)
        if got is not None and same(got[0], gid):
            return got[1]
        ends = lookup(gid, self._ends)
        ia, ib = ends[:len(self)], ends[len(self):]
        use = np.flatnonzero((ia >= 0) & (self._world | (ib >= 0)) & self._wanted(types))
        chosen = (use, self._record(use, ia[use], ib[use]))
        self._chosen[key] = (gid.copy(), chosen)
        return chosen

    def _record(self, use, a, b):
        """What the rows of the joints `use`, of bodies a and b (held indices), take from
        that choice alone, shared by the steps (read only, and so are the columns in each
        step's rows): the columns of bodies, keys, origin, geometry and gap; the joints'
        codes, the rows' forms (joint_rows), directions and links' lengths, whether any
        row's shift is given in Python (fix_direction, prescribe), the bilateral rows'
        equalities, the springs' rows, forces, rest lengths and names, and every row's
        joint's name."""
        n = len(use)
        code = self.code[use]
        springs = np.flatnonzero(code == SPRING) if SPRING in self._present \
            else np.zeros(0, np.int64)
        sj = use[springs]
        labels = [f"joint {self.names[j]!r}" for j in use]
        # every column but those made each step (the points, frames, the laws' and those a
        # step writes: the reactions and the laws' states), of its table's dtype
        columns = Interactions(n, a=a, b=b, obstacle=np.full(n, -1), k1=self.a[use],
                               k2=NAMESPACES[JOINT].key(use),
                               origin=np.full(n, JOINT, np.int8)).columns()
        for f in ("point", "offset", "frame", "kind", "param", "R", "state"):
            del columns[f]
        c = {"columns": columns,
             "code": code, "form": FORMS[code], "directions": self.direction[use],
             "rest_rows": np.where(code == RIGID_LINK, self.L0[use], 0.0),
             "given": bool(np.isin(code, (FIX_DIRECTION, PRESCRIBE)).any()),
             "equalities": np.where(code == FIX_POINT, 3, 1), "springs": springs,
             "forces": [self.specs[j]["force"] for j in sj], "rest": self.L0[sj],
             "names": [labels[k] for k in springs], "labels": labels}
        for array in (use, *c["columns"].values(), code, c["form"], c["directions"],
                      c["rest_rows"], c["equalities"], springs, c["rest"]):
            array.flags.writeable = False
        return c

    def _wanted(self, types):
        """Which joints are of `types` (None: all), kept per types (asked every step)."""
        key = None if types is None else tuple(types)
        if key not in self._of_types:
            self._of_types[key] = np.ones(len(self), bool) if types is None \
                else np.isin(self.type, types)
        return self._of_types[key]

    def _velocity(self, j, value, h, moved):
        """The prescribed velocity of joint j at the step's end from its signal's `value` at
        t + h: the velocity spline's; the displacement's, that ends the step at disp(t + h)
        from `moved`, the point's displacement at the half step plus its arc's part (_arc):
        x(t+h) = x(t+h/2) + h/2 U + arc, no lag, no drift; or the acceleration's integral
        from 0."""
        if self.specs[j]["signal"] == "displacement":
            return 2.0 * (value - moved) / h
        return value


def _arc(w, r, h):
    """How far a body point at r from the centre (half step) ends the step off the straight
    line of its velocity: the second half step turns r by the exponential map of h/2 w
    (dynamics.half_step), which moves it by exp(h/2 w) r - r = h/2 w x r + arc. Taken at the
    step's start's w (the end's is the solve's unknown): exact while w holds over the step,
    else off by O(h^2 |w| |dw| |r|). Zero without rotation."""
    turn = quat_to_matrix(exp_map(0.5 * h * w[None]))[0]
    return (turn @ r - r) - 0.5 * h * np.cross(w, r)


class JointCommands:
    """The joint commands of parsolve.Model (a mixin: the specs in model.elements["joints"])."""

    def _joint(self, kind, body, point, other=None, other_point=None, name=None, **extra):
        joints = self.elements.setdefault(Joints.NAME, [])
        name = name or f"{kind} {len(joints)}"
        if any(j["name"] == name for j in joints):
            raise InputError(f"joint {name!r}: the name is taken")
        spec = {"type": kind, "name": name, "body": body_id(f"joint {name!r}", body),
                "point": finite(f"joint {name!r}: point", point, (3,)),
                "other": -1 if other is None else body_id(f"joint {name!r}", other),
                "other_point": None}
        if other_point is not None:
            spec["other_point"] = finite(f"joint {name!r}: other_point", other_point, (3,))
        if spec["other"] == spec["body"]:
            raise InputError(f"joint {name!r}: joins body {spec['body']} to itself")
        spec.update(extra)
        joints.append(spec)
        return name

    def fix_point(self, body, point, other=None, other_point=None, name=None):
        """Solfec's FIX_POINT: the body's point (world coordinates now) stays where it is, or
        stays on `other`'s point (default: the same point)."""
        return self._joint("fix_point", body, point, other, other_point, name)

    def fix_direction(self, body, point, direction, other=None, other_point=None, name=None):
        """Solfec's FIX_DIRECTION: the body's point does not move along `direction` (a fixed
        world direction), relative to the world or to `other`'s point."""
        d = unit(f"joint {name or 'fix_direction'}: direction", direction)
        return self._joint("fix_direction", body, point, other, other_point, name, direction=d)

    def prescribe(self, body, point, direction, velocity=None, displacement=None,
                  acceleration=None, name=None):
        """Solfec's SET_VELOCITY / SET_DISPLACEMENT / SET_ACCELERATION: the body's point moves
        along the world `direction` with the given signal, (times, values) of a linear spline
        or a callable of t [m/s, m, m/s^2]. Exactly one signal."""
        given = {k: v for k, v in (("velocity", velocity), ("displacement", displacement),
                                   ("acceleration", acceleration)) if v is not None}
        label = name or f"prescribe {len(self.elements.get(Joints.NAME, []))}"
        if len(given) != 1:
            raise InputError(f"joint {label!r}: give exactly one of velocity, displacement, "
                             f"acceleration (got {sorted(given) or 'none'})")
        (signal, spec), = given.items()
        d = unit(f"joint {label!r}: direction", direction)
        return self._joint("prescribe", body, point, None, None, name, direction=d,
                           signal=signal, value=Signal(f"joint {label!r}: {signal}", spec))

    def rigid_link(self, body, point, other, other_point, name=None):
        """Solfec's PUT_RIGID_LINK: the distance between the body's point and `other`'s point
        (world coordinates now; other None: a point of space) stays what it is."""
        return self._joint("rigid_link", body, point, other, other_point, name)

    def spring(self, body, point, other, other_point, force, name=None):
        """Solfec's PUT_SPRING: a force force(d, ddot) [N] along the line through the two
        points, d the stretch (the distance minus the initial distance), positive pushing the
        points apart; e.g. lambda d, v: -k * d - c * v."""
        if not callable(force):
            raise InputError(f"joint {name or 'spring'!r}: force must be a callable of (d, ddot)")
        return self._joint("spring", body, point, other, other_point, name, force=force)

    def guide(self, body, point, span, free=(), velocity=None, name=None):
        """A body on guides: a block on a rail (free=("x",)), a shear plate pressed by its
        load (free=("z",), velocity={"x": V}), a piston, a hinge (free=("rz",)). Only the
        world-axis motions in `free` ("x", "y", "z", "rx", "ry", "rz") follow the dynamics;
        each other translation is held, or driven by `velocity[axis]` (a signal as for
        prescribe), and each other rotation is held. Made of Solfec's joints, named
        "NAME.i": a fix_direction (or prescribe) along every locked axis through `point`
        (the body's centre, say), and for every locked rotation one more along a locked
        axis d, at `span` [m] from the point along d x r (so the two rows hold r). A rotation
        about r can be locked only while a translation across r is. Returns NAME;
        sensor(joints=[NAME]) reads the joints' reactions."""
        axes = ("x", "y", "z")
        label = name or f"guide {len(self.elements.get(Joints.NAME, []))}"
        free = (free,) if isinstance(free, str) else tuple(free)
        velocity = dict(velocity or {})
        for a in free:
            if a not in axes + ("rx", "ry", "rz"):
                raise InputError(f"guide {label!r}: unknown free motion {a!r}: choose from "
                                 "x, y, z, rx, ry, rz")
        for a in velocity:
            if a not in axes or a in free:
                raise InputError(f"guide {label!r}: velocity along {a!r}: a driven axis is "
                                 "one of the locked translations x, y, z")
        c = finite(f"guide {label!r}: point", point, (3,))
        s = float(positive(f"guide {label!r}: span", span))
        locked = [k for k, a in enumerate(axes) if a not in free]
        e = np.eye(3)
        rows = [(c, k) for k in locked]
        for r, a in enumerate(axes):
            if "r" + a in free:
                continue
            across = [k for k in locked if k != r]
            if not across:
                raise InputError(f"guide {label!r}: rotation about {a} cannot be held while "
                                 f"every translation across it is free ({free})")
            d = across[0]
            rows.append((c + s * np.cross(e[d], e[r]), d))
        for i, (p, d) in enumerate(rows):
            jname = f"{label}.{i}"
            if axes[d] in velocity:
                self.prescribe(body, p, e[d], velocity=velocity[axes[d]], name=jname)
            else:
                self.fix_direction(body, p, e[d], name=jname)
        return label


def state(model):
    """What defines the joints, for the model's fingerprint."""
    out = []
    for j in model.elements.get(Joints.NAME, []):
        s = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in j.items()
             if k not in ("value", "force")}
        if "value" in j:
            s["value"] = j["value"].state()
        if "force" in j:
            s["force"] = getattr(j["force"], "__qualname__", repr(j["force"]))
        out.append(s)
    return out
