"""Validation of user input: every check names the item and the offending value."""
import numpy as np

from ..dynamics.rotation import axis_angle_to_quat, matrix_to_quat
from ..errors import InputError


def finite(what, value, shape=None):
    """`value` as a float array of `shape`, all finite; else InputError naming `what`."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected numbers, got {value!r}") from None
    if shape is not None:
        try:
            arr = np.broadcast_to(arr, shape).copy()
        except ValueError:
            raise InputError(f"{what}: expected shape {shape}, got {np.shape(value)}") from None
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(f"{what}: not a finite number ({_first(arr, bad)})")
    return arr


def positive(what, value, shape=None):
    arr = finite(what, value, shape)
    bad = arr <= 0
    if bad.any():
        raise InputError(f"{what}: must be > 0, got {_first(arr, bad)}")
    return arr


def in_range(what, value, lo, hi):
    v = float(finite(what, value))
    if not lo <= v <= hi:
        raise InputError(f"{what}: must lie in [{lo}, {hi}], got {v}")
    return v


def unit(what, value):
    v = finite(what, value, (3,))
    n = np.linalg.norm(v)
    if n == 0:
        raise InputError(f"{what}: the zero vector has no direction")
    return v / n


def body_id(what, body):
    """A body given by its id: an integer >= 0 (not a bool); else InputError naming `what`."""
    if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer, float)) \
            or not float(body).is_integer() or int(body) < 0:
        raise InputError(f"{what}: a body is given by its id (an integer >= 0), got {body!r}")
    return int(body)


def orientation_quaternion(what, orientation):
    """A unit quaternion from a quaternion, a rotation matrix or an (axis, angle) pair."""
    if isinstance(orientation, (tuple, list)) and len(orientation) == 2 and \
            np.ndim(orientation[1]) == 0 and np.size(orientation[0]) == 3:
        axis = finite(f"{what}: axis", orientation[0], (3,))
        angle = float(finite(f"{what}: angle", orientation[1]))
        if np.linalg.norm(axis) == 0:
            raise InputError(f"{what}: the rotation axis is zero")
        return axis_angle_to_quat(axis, angle)
    if np.shape(orientation) == (3, 3):
        R = finite(what, orientation, (3, 3))
        if not (np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0):
            raise InputError(f"{what}: not a rotation matrix (R^T R != I or det R < 0)")
        return matrix_to_quat(R)
    q = finite(what, orientation, (4,))
    if np.linalg.norm(q) == 0:
        raise InputError(f"{what}: orientation quaternion is zero")
    return q


def _first(arr, bad):
    idx = np.argwhere(np.atleast_1d(bad))[0]
    val = np.atleast_1d(arr)[tuple(idx)]
    return f"{val} at index {tuple(int(i) for i in idx)}" if np.ndim(arr) else f"{val}"
