"""Constraint lines between bodies, from contacts and (with the joints) from joints.

A line passes through `point` along the unit `direction`; it couples body `a` to body `b`
(global ids; b = GROUND: fixed in the world) and its length change under the bodies' twists
is dl = d . (u_a(c) - u_b(c)) (screws.py has the twist convention). A contact is a
unilateral line along its normal (from B to A), so dl > 0 separates. `key` (source, k1, k2)
orders lines independently of the ranks; `label` names a line in reports and errors.

Joints feed their lines in through `line_source` (joint_lines.py): a function
(model, held) -> ConstraintLines giving the bilateral lines of the joints this rank is responsible for, made with the
exact-constraint sets below (`ball`, `hinge`, `slider`, `cylinder`, `lead_screw`, `fixed`,
Blanding's patterns) and `ConstraintLines.between`.
"""
import numpy as np

from ..contact.frames import frames_from_normals
from ..errors import InputError
from ..platform import libm
from ..tables.checks import finite, positive, unit
from ..tables.keys import FEATURES, OBSTACLE_CODES, pair_code

GROUND = -1
JOINT, CONTACT = 0, 1           # key[:, 0]: the source of a line
FIELDS = ("a", "b", "point", "direction", "unilateral", "key", "label")
LINE_SOURCES = []               # functions (model, held BodySet) -> ConstraintLines


def line_source(fn):
    """Register fn(model, held) -> ConstraintLines as a source of bilateral lines (joints).

    `held` is this rank's BodySet (owned bodies, then ghosts): a source gives the lines of
    each joint exactly once over the ranks (e.g. on the owner of the joint's first body) and
    keys them (JOINT, joint id, line number)."""
    LINE_SOURCES.append(fn)
    return fn


class ConstraintLines:
    """Lines as arrays (see the module's docstring): a, b (n,), point, direction (n, 3),
    unilateral (n,) bool, key (n, 3) int64, label (n,) str. Directions are normalised; a
    zero, NaN or infinite entry raises InputError naming the line."""

    def __init__(self, a, b, point, direction, label, unilateral=False, key=None):
        label = np.asarray(label, dtype=str).reshape(-1)
        n = len(label)
        self.label = label
        self.a = np.broadcast_to(np.asarray(a, np.int64), (n,)).copy()
        self.b = np.broadcast_to(np.asarray(b, np.int64), (n,)).copy()
        pts = np.array(point, float).reshape(-1, 3) if n else np.zeros((0, 3))
        dirs = np.asarray(direction, float).reshape(-1, 3) if n else np.zeros((0, 3))
        if len(pts) != n or len(dirs) != n:
            raise InputError(f"constraint lines: {n} labels, {len(pts)} points, "
                             f"{len(dirs)} directions")
        norm = np.linalg.norm(dirs, axis=1)
        bad = ~np.isfinite(pts).all(axis=1) | ~np.isfinite(norm) | (norm == 0)
        if bad.any():                        # the first culprit, named by the usual checks
            i = int(np.argmax(bad))
            finite(f"constraint line {label[i]!r}: point", pts[i], (3,))
            unit(f"constraint line {label[i]!r}: direction", dirs[i])
        self.point, self.direction = pts, dirs / np.where(bad, 1.0, norm)[:, None]
        self.unilateral = np.broadcast_to(np.asarray(unilateral, bool), (n,)).copy()
        self.key = (np.stack([np.full(n, JOINT), np.arange(n), np.zeros(n, np.int64)], axis=1)
                    if key is None else np.asarray(key, np.int64).reshape(n, 3))

    def __len__(self):
        return len(self.label)

    @classmethod
    def between(cls, a, b, points, directions, name, unilateral=False, key=None):
        """Lines `points`/`directions` (e.g. hinge(...)) coupling body a to b (or GROUND),
        labelled "name.0", "name.1", ..."""
        n = len(np.asarray(points).reshape(-1, 3))
        return cls(a, b, points, directions, [f"{name}.{i}" for i in range(n)], unilateral,
                   key)

    @classmethod
    def concat(cls, parts):
        parts = [p for p in parts if p is not None]
        if not parts:
            return cls([], [], [], [], [])
        return cls.from_rows({f: np.concatenate([getattr(p, f) for p in parts])
                              for f in FIELDS})

    @classmethod
    def from_rows(cls, rows):
        return cls(rows["a"], rows["b"], rows["point"], rows["direction"], rows["label"],
                   rows["unilateral"], rows["key"])

    def rows(self):
        """The arrays, as a dict (what a gather sends)."""
        return {f: getattr(self, f) for f in FIELDS}

    def take(self, index):
        return ConstraintLines.from_rows({f: getattr(self, f)[index] for f in FIELDS})

    def canonical(self):
        """Sorted by key: bilateral (joint) lines first, then contacts by their keys."""
        return self.take(np.lexsort(self.key.T[::-1]))

    def touching(self, gids):
        return self.take(np.nonzero(np.isin(self.a, gids) | np.isin(self.b, gids))[0])

    def of_body(self, gid):
        """(index, direction) of the lines on body gid, oriented so that dl > 0 is the
        line's lengthening seen from that body alone (the other body held still)."""
        on_a, on_b = self.a == gid, self.b == gid
        index = np.nonzero(on_a | on_b)[0]
        sign = np.where(on_a[index], 1.0, -1.0)
        return index, self.direction[index] * sign[:, None]


def contact_lines(contacts, held, obstacle_names):
    """One unilateral line per contact, along its normal through its point (dl > 0
    separates), labelled "contact A|B#feature" with B a body id or an obstacle's name."""
    k2 = contacts.k2
    code, feature = pair_code(k2), k2 % FEATURES
    b = np.where(contacts.b >= 0, held.gid[np.maximum(contacts.b, 0)], GROUND)
    other = [f"body {c - OBSTACLE_CODES}" if c >= OBSTACLE_CODES else obstacle_names[c]
             for c in code]
    labels = [f"contact {a}|{o}#{f}" for a, o, f in zip(contacts.k1, other, feature)]
    key = np.stack([np.full(len(contacts), CONTACT), contacts.k1, k2], axis=1)
    return ConstraintLines(contacts.k1, b, contacts.point, contacts.frame[:, 0], labels,
                           True, key)


# -- Blanding's exact-constraint patterns: (points, directions) of a joint's lines ------------
def _frame(axis):
    """(u, w, a): a unit right-handed frame whose third axis is `axis`."""
    a = unit("joint axis", axis)
    n, u, w = frames_from_normals(a[None, :])[0]
    return u, w, n


def ball(point):
    """A ball joint: 3 lines through the centre along x, y, z (3 rotations free)."""
    p = finite("ball joint: point", point, (3,))
    return np.tile(p, (3, 1)), np.eye(3)


def hinge(point, axis, span=1.0):
    """A hinge (revolute joint) on the axis through `point`: at `point` and at span along the
    axis, two lines across it, plus one along it (1 rotation free)."""
    p, s = finite("hinge: point", point, (3,)), float(positive("hinge: span", span))
    u, w, a = _frame(axis)
    q = p + s * a
    return np.array([p, p, q, q, p]), np.array([u, w, u, w, a])


def cylinder(point, axis, span=1.0):
    """A cylindrical joint: the hinge without its line along the axis (rotation about and
    translation along the axis free)."""
    pts, dirs = hinge(point, axis, span)
    return pts[:4], dirs[:4]


def slider(point, axis, span=1.0):
    """A prismatic joint: lines across the axis at `point` and at span along it, and one
    offset by span across it (1 translation free, along the axis)."""
    p, s = finite("slider: point", point, (3,)), float(positive("slider: span", span))
    u, w, a = _frame(axis)
    q = p + s * a
    return np.array([p, p, q, q, p + s * u]), np.array([u, w, u, w, w])


def fixed(point, axis=(0.0, 0.0, 1.0), span=1.0):
    """A fixed joint (weld): the hinge's 5 lines and one across the axis off it (rigid)."""
    pts, dirs = hinge(point, axis, span)
    u, w, _ = _frame(axis)
    return np.vstack([pts, pts[0] + span * u]), np.vstack([dirs, w])


def lead_screw(point, axis, pitch, radius):
    """A lead screw (threaded joint): 5 lines normal to the thread, the helicoid
    c = point + rho (cos phi u + sin phi w) + pitch phi a, at phi = 0, 72, ..., 288 degrees
    and rho = radius or radius / 2; they leave one screw free: about the axis, of `pitch`
    (m/rad, positive right-handed)."""
    p = finite("lead screw: point", point, (3,))
    h = float(finite("lead screw: pitch", pitch))
    rho0 = float(positive("lead screw: radius", radius))
    u, w, a = _frame(axis)
    phi = 2.0 * np.pi * np.arange(5) / 5.0
    rho = rho0 * np.array([1.0, 0.5, 1.0, 0.5, 1.0])
    c, s = libm.cos(phi)[:, None], libm.sin(phi)[:, None]
    points = p + rho[:, None] * (c * u + s * w) + h * phi[:, None] * a
    normals = h * s * u - h * c * w + rho[:, None] * a
    return points, normals
