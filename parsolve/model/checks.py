"""Validation of user input: every check names the item and the offending value."""
import numpy as np

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


def _first(arr, bad):
    idx = np.argwhere(np.atleast_1d(bad))[0]
    val = np.atleast_1d(arr)[tuple(idx)]
    return f"{val} at index {tuple(int(i) for i in idx)}" if np.ndim(arr) else f"{val}"
