"""The pure-Python twins of kernels/joints.pyx (the same names and arguments), numpy over all
rows; tests/test_joints.py holds them equal, bit for bit."""
import numpy as np

from ..contact.twins import frames_from_normals
from ..dynamics.rotation import quat_to_matrix

POINT, DIRECTION, LINE, LINK = range(4)     # the joint rows' forms (joints.py: FORMS)


def _points(x, q, v, w, a, b, use, pa, pb):
    """The world geometry of the joint rows `use` at the held bodies' state (x, q, v, w):
    a, b the rows' bodies (b = -1: the world), pa A's points in A's frame, pb B's in B's frame
    or world points (every joint's: indexed by `use`). Returns (point, offset, e, dist, dv,
    far): A's point, B's minus A's, e = A's minus B's and its length, the points' relative
    velocity (A's minus B's, from v + w x r), and the larger distance from the point to a
    body's centre."""
    two = b >= 0
    point = x[a] + np.einsum("nij,nj->ni", quat_to_matrix(q[a]), pa[use])
    other = pb[use]
    vb = np.zeros((len(use), 3))
    ra = point - x[a]
    va = v[a] + np.cross(w[a], ra)
    far = np.linalg.norm(ra, axis=1)
    if two.any():
        bb = b[two]
        other[two] = x[bb] + np.einsum("nij,nj->ni", quat_to_matrix(q[bb]), pb[use][two])
        vb[two] = v[bb] + np.cross(w[bb], other[two] - x[bb])
        far[two] = np.maximum(far[two], np.linalg.norm(point[two] - x[bb], axis=1))
    e = point - other
    return point, other - point, e, np.linalg.norm(e, axis=1), va - vb, far


def joint_rows(x, q, v, w, a, b, use, pa, pb, form, direction, rest, h):
    """The twin of kernels/joints.pyx's joint_rows (its docstring says what each output is):
    the rows' geometry (_points), then their frames, shifts and rates by their forms, numpy
    over all rows."""
    point, offset, e, dist, dv, far = _points(x, q, v, w, a, b, use, pa, pb)
    n = len(use)
    frame = np.repeat(np.eye(3)[None], n, axis=0)
    shift = np.zeros((n, 3))
    at = form == POINT
    shift[at] = e[at] / h
    normals = np.array(direction, float)
    line = form >= LINE
    normals[line] = e[line] / dist[line, None]
    frame[~at] = frames_from_normals(normals[~at])
    link = form == LINK
    shift[link, 0] = (dist[link] - rest[link]) / h
    return point, offset, e, dist, far, frame, shift, np.einsum("ni,ni->n", dv, frame[:, 0])
