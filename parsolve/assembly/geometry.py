"""H per geometry: how a row's velocity U = H u is taken from its bodies' velocities. A row's
geometry column (tables/keys.py) selects the maker; assembly names no law and no element.

point        U = E (v_A + w_A x r_A) - E (v_B + w_B x r_B), E the local frame (rows n, t1, t2),
             r the lever from a body's centre to the row's point on it (contacts, joints);
coordinate   U_N = f1 u_m1 - f0 u_m0, a combination of body coordinates: a body's velocity
             along an axis through its centre, or its angular velocity about an axis (Exudyn's
             coordinate markers; connectors and their limit stops). The row's frame holds the
             coordinates' Jacobians (`encode`): frame[0] the side of body A (its axis times its
             signed gear factor), frame[1] body B's (its incidence takes minus it), frame[2] =
             (A rotational, B rotational, 0). The tangent rows of H complete each axis to an
             orthonormal frame (scaled alike), so that W_TT > 0 although such a law has R_T = 0.
rotation     U = E (w_A - w_B): A's angular velocity relative to B's in the row's frame, spin
             about the normal first, then the two rolling components (a contact's rolling row);
             H = [0, E] for A and [0, -E] for B, R an angular impulse [N m s].

A new geometry is one maker here, registered in JACOBIANS.
"""
import numpy as np

from ..contact.frames import frames_from_normals
from ..tables.keys import COORDINATE, POINT, ROTATION


def point_jacobians(E, r):
    """H (m, 3, 6) of point incidences: [E, -E [r]x] (E already signed by the side)."""
    H = np.empty((len(E), 3, 6))
    H[:, :, :3] = E
    H[:, :, 3:] = np.cross(r[:, None, :], E)          # rows of -E [r]x are r x e_i
    return H


def encode(dir_a, rot_a, dir_b, rot_b):
    """The frame column (n, 3, 3) of coordinate rows: A's and B's signed, scaled axes
    (world frame; B's zero without a body B) and whether each is a rotation."""
    n = len(dir_a)
    frame = np.zeros((n, 3, 3))
    frame[:, 0], frame[:, 1] = dir_a, dir_b
    frame[:, 2, 0], frame[:, 2, 1] = rot_a, rot_b
    return frame


def coordinate_jacobians(frame, side_b):
    """H (m, 3, 6) of coordinate incidences from their rows' frames (m, 3, 3): side A's
    H = [f E, 0] (translation) or [0, f E] (rotation), E the axis's orthonormal frame and f
    its scale; side B's the same of minus its axis."""
    d = np.where(side_b[:, None], -frame[:, 1], frame[:, 0])
    rot = np.where(side_b, frame[:, 2, 1], frame[:, 2, 0]) > 0.5
    scale = np.linalg.norm(d, axis=1)
    E = frames_from_normals(d / np.where(scale > 0, scale, 1.0)[:, None]) * scale[:, None, None]
    H = np.zeros((len(d), 3, 6))
    H[~rot, :, :3] = E[~rot]
    H[rot, :, 3:] = E[rot]
    return H


def coordinate_rate(frame, v_a, w_a, v_b, w_b):
    """U_N of coordinate rows, f1 u_m1 - f0 u_m0, from their bodies' velocities (B's zero
    for the ground)."""
    rot_a, rot_b = frame[:, 2, 0] > 0.5, frame[:, 2, 1] > 0.5
    ua = np.where(rot_a[:, None], w_a, v_a)
    ub = np.where(rot_b[:, None], w_b, v_b)
    return np.einsum("ni,ni->n", frame[:, 0], ua) - np.einsum("ni,ni->n", frame[:, 1], ub)


def rotation_jacobians(frame, side_b):
    """H (m, 3, 6) of rotation incidences: [0, E] on side A, [0, -E] on side B."""
    H = np.zeros((len(frame), 3, 6))
    H[:, :, 3:] = np.where(side_b[:, None, None], -frame, frame)
    return H


# geometry code -> H (m, 3, 6) of its incidences from (frame (m, 3, 3), side_b (m,)); the
# point geometry's H is the default every incidence starts from (it needs the levers too)
JACOBIANS = {COORDINATE: coordinate_jacobians, ROTATION: rotation_jacobians}
assert POINT not in JACOBIANS
