"""What the measures read: a body table and the contacts' ends, built from this rank's rows.

A contact row (origin "contact": tables/keys.py; joints' and connectors' rows are no contacts)
couples body A (gid k1) and B, a body (B's code in the key: its gid + 2^20) or an obstacle
(the code: its index). Its force on A over the step is f = frame^T R / h (R the impulse, world frame after
the transpose), its normal force f_n = R_N / h (> 0 compressive), its normal n points from B
to A. A row has one end per body: A's (force f, normal n) and, for a body B, B's (-f, -n).
The measures read ends, not rows: an end needs its own body's centre only, so that a body and
its ends meet on one rank (the rank a hash of its id picks; parsolve.parallel.measures) and
every measure is a sum of terms, one per body or per end.
"""
import numpy as np

from ..errors import InputError
from ..tables.keys import CONTACT, OBSTACLE_CODES, origin_of, pair_code
from .. import shapes

BODY_COLUMNS = ("gid", "x", "v", "mass", "radius", "shape", "volume")
END_COLUMNS = ("gid", "partner", "first", "point", "normal", "force", "fn", "gap", "x")


def body_volumes(shape, radius, half, template=None):
    """Each body's volume: a sphere's from its radius, a box's from its half extents, a
    polyhedron's from its template (shapes.LIBRARY; NaN where none is known)."""
    shape = np.asarray(shape)
    out = np.full(len(shape), np.nan)
    s = shape == shapes.SPHERE
    out[s] = shapes.sphere.volume(radius[s])
    b = shape == shapes.BOX
    out[b] = 8.0 * np.prod(half[b], axis=1)
    if template is not None:
        for key in np.unique(template[shape == shapes.POLYHEDRON]):
            h = shapes.polyhedron.hull(int(key))
            out[(shape == shapes.POLYHEDRON) & (template == key)] = \
                shapes.polyhedron.mass_properties(h.vertices, h.faces)[0]
    return out


def bodies_table(bodies, n=None):
    """The measures' body table of the first n rows of a BodySet (default: the owned)."""
    n = bodies.n_owned if n is None else n
    rows = np.arange(n)
    half = np.zeros((n, 3))
    box = np.flatnonzero(bodies.shape[:n] == shapes.BOX)
    half[box] = shapes.box.half_extents(bodies, box)
    return {"gid": bodies.gid[rows], "x": bodies.x[rows], "v": bodies.v[rows],
            "mass": bodies.mass[rows], "radius": bodies.radius[rows],
            "shape": bodies.shape[rows],
            "volume": body_volumes(bodies.shape[rows], bodies.radius[rows], half,
                                   bodies.template[rows])}


def ends_of(k1, k2, point, frame, R, gap, h, status=None, origin=None):
    """The ends of the contact rows among (k1, k2, point, frame, R, gap), step size h (the
    rows' origins: `origin`, or from their keys for results written before rows had one):
    columns END_COLUMNS but x (the centre, attached later): gid (the end's body), partner
    (the other side's code: an obstacle's index, or a body's gid + 2^20), first (A's end),
    point, normal (from the other side to this body), force (on this body, world), fn
    (normal force, > 0 pushing the bodies apart), gap; and status (the rows' status codes,
    laws.codes.STATUS) when given."""
    origin = origin_of(k2) if origin is None else np.asarray(origin)
    c = np.flatnonzero(origin == CONTACT)
    k1, code = np.asarray(k1)[c], pair_code(np.asarray(k2)[c])
    frame, R = np.asarray(frame)[c], np.asarray(R)[c]
    point, gap = np.asarray(point)[c], np.asarray(gap)[c]
    f = np.einsum("kji,kj->ki", frame, R) / h
    n = frame[:, 0, :]
    fn = R[:, 0] / h
    b = np.flatnonzero(code >= OBSTACLE_CODES)
    extra = {} if status is None else \
        {"status": np.concatenate([np.asarray(status)[c], np.asarray(status)[c][b]])}
    return {**extra, "gid": np.concatenate([k1, code[b] - OBSTACLE_CODES]),
            "partner": np.concatenate([code, k1[b] + OBSTACLE_CODES]),
            "first": np.concatenate([np.ones(len(c), bool), np.zeros(len(b), bool)]),
            "point": np.concatenate([point, point[b]]),
            "normal": np.concatenate([n, -n[b]]),
            "force": np.concatenate([f, -f[b]]),
            "fn": np.concatenate([fn, fn[b]]),
            "gap": np.concatenate([gap, gap[b]])}


def ends_table(contacts, h):
    """The ends of an Interactions table's contact rows, with their status."""
    from .. import laws

    return ends_of(contacts.k1, contacts.k2, contacts.point, contacts.frame, contacts.R,
                   contacts.gap, h, laws.status(contacts.kind, contacts.param, contacts.R),
                   contacts.origin)


def attach(ends, bodies):
    """ends with column x: the centre of each end's body, looked up by id in `bodies` (which
    must hold every end's body)."""
    order = np.argsort(bodies["gid"], kind="stable")
    gids = bodies["gid"][order]
    at = np.searchsorted(gids, ends["gid"])
    at = np.minimum(at, max(len(gids) - 1, 0))
    if len(ends["gid"]) and (len(gids) == 0 or np.any(gids[at] != ends["gid"])):
        missing = ends["gid"][(len(gids) == 0) | (gids[at] != ends["gid"])][0]
        raise InputError(f"measures: contact of body {missing}, which is not in the frame")
    out = dict(ends)
    out["x"] = bodies["x"][order][at] if len(gids) else np.zeros((0, 3))
    return out


def wall(ends):
    """Ends whose other side is an obstacle."""
    return ends["partner"] < OBSTACLE_CODES


def mean_normal_force(ends):
    """The mean normal force of the loaded contact points between bodies (each row once) of
    `ends` (serial: all of a frame's ends); 0 without any."""
    rows = ends["first"] & ~wall(ends) & (ends["fn"] > 0)
    return float(ends["fn"][rows].mean()) if rows.any() else 0.0


def select(table, rows):
    return {k: v[rows] for k, v in table.items()}


def polygon_volumes(vertices, topology, face_gid):
    """Volume of each closed body drawn by its faces (XDMF Mixed polygons [3, count, ids]; the
    results' polyhedra): {gid: volume}, by the divergence theorem over each face's fan."""
    vol = {}
    at, face = 0, 0
    while at < len(topology):
        count = int(topology[at + 1])
        ids = topology[at + 2:at + 2 + count]
        p = vertices[ids]
        det = np.einsum("ij,ij->i", np.broadcast_to(p[0], p[1:-1].shape),
                        np.cross(p[1:-1], p[2:]))
        g = int(face_gid[face])
        vol[g] = vol.get(g, 0.0) + det.sum() / 6.0
        at += 2 + count
        face += 1
    return {g: abs(v) for g, v in vol.items()}
