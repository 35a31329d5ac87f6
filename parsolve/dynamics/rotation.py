"""Unit quaternions (w, x, y, z), body frame -> world frame, vectorised over bodies."""
import numpy as np

from ..platform import libm


def quat_to_matrix(q):
    """(n, 4) unit quaternions -> (n, 3, 3) rotation matrices."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    R = np.empty((len(q), 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - w * z)
    R[:, 0, 2] = 2 * (x * z + w * y)
    R[:, 1, 0] = 2 * (x * y + w * z)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - w * x)
    R[:, 2, 0] = 2 * (x * z - w * y)
    R[:, 2, 1] = 2 * (y * z + w * x)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def quat_mul(a, b):
    """Hamilton product a * b, row-wise."""
    aw, ax, ay, az = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    bw, bx, by, bz = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=1)


def exp_map(phi):
    """Rotation vectors (n, 3) -> unit quaternions: the exponential map of so(3)."""
    angle = np.linalg.norm(phi, axis=1)
    half = 0.5 * angle
    # sin(a/2)/a, with its series near zero
    small = angle < 1e-8
    k = np.where(small, 0.5 - angle ** 2 / 48.0, libm.sin(half) / np.where(small, 1.0, angle))
    return np.concatenate([libm.cos(half)[:, None], k[:, None] * phi], axis=1)


def rotate_spatial(q, w, dt):
    """Orientation after turning at the world-frame angular velocity w for dt: exp(dt w) q."""
    out = quat_mul(exp_map(dt * w), q)
    out /= np.linalg.norm(out, axis=1)[:, None]
    return out


def axis_angle(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[libm.cos(angle / 2)], libm.sin(angle / 2) * axis])


def axis_angle_to_quat(axis, angle):
    """The unit quaternion of a rotation by `angle` [rad] about `axis` (right-handed)."""
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[libm.cos(0.5 * angle)], libm.sin(0.5 * angle) * axis])


def matrix_to_quat(R):
    """The unit quaternion (w >= 0) of a 3 x 3 rotation matrix (Shepperd's method: the
    largest of the four squares is taken first, so no division by a small number)."""
    R = np.asarray(R, float)
    t = np.trace(R)
    squares = np.array([1 + t, 1 + 2 * R[0, 0] - t, 1 + 2 * R[1, 1] - t, 1 + 2 * R[2, 2] - t])
    k = int(np.argmax(squares))
    s = 2.0 * np.sqrt(squares[k])
    if k == 0:
        q = [s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif k == 1:
        q = [(R[2, 1] - R[1, 2]) / s, s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif k == 2:
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s]
    else:
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4]
    q = np.array(q)
    return q if q[0] >= 0 else -q
