"""Screws, the constraint operator of seed 003 and its null space (Blanding's exact constraint).

Convention (the only one in parsolve.analysis): a small motion of a rigid body is the twist
xi = (omega, v) in the world frame: omega = r dtheta (unit axis r times the angle) and
v = t ds - omega x p, the displacement of the body point at the world origin (p any point of
the axis). A body point c moves by omega x c + v. A constraint line through c along the unit
d changes length by

    dl = d . (omega x c + v) = (c x d) . omega + d . v,

so its row of the operator A is (c x d, d), the line's Pluecker coordinates, and the free
motions are the null space of A. A screw of pitch h (ds/dtheta, metres per radian, positive
right-handed) about the axis through p along r is omega = r, v = h r - r x p.

Numerics: A is analysed in a chart of each body, a reference point o (the body's centre or
the lines' centroid) and a length L (the lines' RMS distance from it, at least the body's
size where it is known): the chart's twist is (L omega, velocity of o), so a row reads
((c - o) x d / L, d). Every tolerance is relative (`rtol`) in that chart, so the answers do
not depend on units or on where the origin is. The floor keeps round-off out: lines through
a point that equals the centre up to round-off would otherwise have an L of 1e-16 m, and
their rows' noise would read as levers.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..tables.checks import finite, unit

RTOL = 1e-9          # default relative tolerance: rank, translation split, zero pitch, checks


@dataclass
class Chart:
    """A body's reference point o [m] and length scale L [m] (see the module's docstring)."""
    origin: np.ndarray
    scale: float

    @classmethod
    def of(cls, points, origin=None, size=None):
        """The chart of lines through `points`: o defaults to their centroid, L is their RMS
        distance from o, at least the body's `size` [m] (its radius) when given, else 1 m
        when they all pass through o."""
        points = np.asarray(points, float).reshape(-1, 3)
        if origin is None:
            origin = points.mean(axis=0) if len(points) else np.zeros(3)
        origin = np.asarray(origin, float)
        rms = float(np.sqrt(np.mean(np.sum((points - origin) ** 2, axis=1)))) if len(
            points) else 0.0
        if size is not None and size > 0:
            return cls(origin, max(rms, float(size)))
        return cls(origin, rms if rms > 0 else 1.0)

    def rows(self, points, directions):
        """The chart's rows ((c - o) x d / L, d) of lines through `points` along `directions`."""
        return np.hstack([np.cross(points - self.origin, directions) / self.scale, directions])

    def to_world(self, twist):
        """A chart twist (L omega, velocity of o) as the world twist (omega, v)."""
        omega = twist[:3] / self.scale
        return np.concatenate([omega, twist[3:] - np.cross(omega, self.origin)])

    def from_world(self, twist):
        omega = twist[:3]
        return np.concatenate([self.scale * omega, twist[3:] + np.cross(omega, self.origin)])


def operator(points, directions):
    """Seed 003's n x 6 operator A: row i is (c_i x d_i, d_i), the length change of line i
    per unit of the twist (omega, v). Directions must be unit vectors."""
    return np.hstack([np.cross(points, directions), directions])


def svd_split(A, rtol=RTOL):
    """(rank, row space, null space) of A by numpy's SVD: singular values below rtol times
    the largest count as zero. The spaces are orthonormal columns (6k x r, 6k x (6k - r))."""
    m = A.shape[1]
    if A.shape[0] == 0:
        return 0, np.zeros((m, 0)), np.eye(m)
    _, s, vt = np.linalg.svd(A, full_matrices=True)
    rank = int(np.sum(s > rtol * s[0])) if s[0] > 0 else 0
    return rank, vt[:rank].T, vt[rank:].T


def redundant_rows(A, rtol=RTOL):
    """Indices of the rows of A that lie in the span of the rows before them (the redundant,
    over-constraining lines, in the order given): a row whose part orthogonal to the rows
    kept so far is below rtol times the norm of A (svd_split's scale)."""
    if len(A) == 0:
        return []
    tol = rtol * np.linalg.norm(A, 2)
    basis = np.zeros((0, A.shape[1]))
    redundant = []
    for i, row in enumerate(A):
        rest = row - basis.T @ (basis @ row)
        rest -= basis.T @ (basis @ rest)                 # twice is enough (Kahan)
        norm = np.linalg.norm(rest)
        if norm > tol:
            basis = np.vstack([basis, rest / norm])
        else:
            redundant.append(i)
    return redundant


@dataclass
class Motion:
    """A free (or restrained) motion of one body, in the world frame.

    kind: "translation" (direction), "rotation" (axis direction through point) or "screw"
    (axis, point, pitch ds/dtheta in m/rad); point is the axis point nearest the chart's
    reference; twist is (omega, v) with |omega| = 1 (|v| = 1 for a translation); amount
    is |omega| (|v|) of the twist it was read from, in rad (m) per unit of that twist."""
    kind: str
    direction: np.ndarray
    point: np.ndarray = None
    pitch: float = 0.0
    twist: np.ndarray = None
    amount: float = 1.0

    def as_dict(self):
        out = {"kind": self.kind, "direction": self.direction.tolist()}
        if self.kind != "translation":
            out.update(point=self.point.tolist(), pitch=self.pitch)
        out.update(twist=self.twist.tolist(), amount=self.amount)
        return out


def fmt_vector(v):
    return "(" + ", ".join(f"{0.0 if abs(x) < 5e-13 else x:.6g}" for x in v) + ")"


def screw_of(twist, chart, rtol=RTOL):
    """The Motion of one chart twist (L omega, velocity of o): a translation when its rotation
    part is below rtol times its translation part, else a rotation or a screw (seed 003: the
    axis point by least squares on omega x (p - o) = -(velocity of o), the pitch from the
    remainder along the axis, zero below rtol L)."""
    w, vo = twist[:3], twist[3:]
    nw, nv = np.linalg.norm(w), np.linalg.norm(vo)
    if nw <= rtol * nv:
        t = vo / nv
        return Motion("translation", t, twist=np.concatenate([np.zeros(3), t]), amount=nv)
    r, vo = w / nw, vo * chart.scale / nw     # world: |omega| = 1, vo the velocity of o
    skew = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
    offset = np.linalg.lstsq(skew, -vo, rcond=None)[0]      # min norm: nearest point to o
    pitch = float(r @ vo)
    if abs(pitch) <= rtol * chart.scale:
        pitch = 0.0
    point = chart.origin + offset
    world = np.concatenate([r, vo - np.cross(r, chart.origin)])
    return Motion("screw" if pitch else "rotation", r, point, pitch, world, nw / chart.scale)


def canonical_axes(span, rtol=RTOL):
    """An orthonormal basis of the span of the columns (in R^3), chosen from the world axes:
    repeatedly the axis whose projection on what is left of the span is longest (the first
    of equals), projected and normalised, largest component positive. The plane z = 0 gives
    x and y; a line gives its direction."""
    u, s, _ = np.linalg.svd(np.atleast_2d(span), full_matrices=False)
    basis = u[:, s > rtol * (s[0] if len(s) else 0)]
    proj = basis @ basis.T
    out = []
    for _ in range(basis.shape[1]):
        norms = np.linalg.norm(proj, axis=0)
        i = int(np.argmax(norms >= norms.max() * (1 - 1e-9)))
        d = proj[:, i] / norms[i]
        d = d * np.sign(d[np.argmax(np.abs(d) >= np.abs(d).max() * (1 - 1e-9))])
        out.append(d)
        proj = proj - np.outer(d, d)
    return np.array(out).reshape(-1, 3).T


def interpret(space, chart, rtol=RTOL):
    """Readable motions spanning a subspace of one body's chart twists (orthonormal columns).

    The rule: the subspace's translations (twists whose rotation part is below rtol) come
    first, along canonical_axes of their directions; then one rotation per canonical axis of
    the remaining rotation directions, taken with the least velocity of the reference point
    (that velocity orthogonal to the free translations), so that its axis passes as near the
    reference as the translations allow and its pitch is the least possible."""
    if space.shape[1] == 0:
        return []
    w, v = space[:3], space[3:]
    _, s, vt = np.linalg.svd(w, full_matrices=True)
    k = int(np.sum(s > rtol))
    rot, trans = vt[:k].T, vt[k:].T
    t_dirs = canonical_axes(v @ trans, rtol) if trans.shape[1] else np.zeros((3, 0))
    motions = [screw_of(np.concatenate([np.zeros(3), t]), chart, rtol) for t in t_dirs.T]
    if k:
        wr = w @ rot
        for r in canonical_axes(wr, rtol).T:
            z = np.linalg.lstsq(wr, r, rcond=None)[0]
            twist = space @ (rot @ z)
            twist[3:] -= t_dirs @ (t_dirs.T @ twist[3:])
            motions.append(screw_of(twist, chart, rtol))
    return motions


def user_twist(spec, reference):
    """The world twist of a motion given as a dict: "axis" (rotation direction), "point" on
    it (default: `reference`) and "pitch" (m/rad, default 0); or "translation" (direction)."""
    unknown = set(spec) - {"axis", "point", "pitch", "translation"}
    if unknown:
        raise InputError(f"motion check: unknown key(s) {sorted(unknown)}; use axis=, point=, "
                         "pitch= or translation=")
    if ("axis" in spec) == ("translation" in spec):
        raise InputError("motion check: give either axis= (a rotation or screw) or "
                         "translation=")
    if "translation" in spec:
        return np.concatenate([np.zeros(3), unit("motion check: translation",
                                                  spec["translation"])])
    r = unit("motion check: axis", spec["axis"])
    p = finite("motion check: point", spec.get("point", reference), (3,))
    h = float(finite("motion check: pitch", spec.get("pitch", 0.0)))
    return np.concatenate([r, h * r - np.cross(r, p)])
