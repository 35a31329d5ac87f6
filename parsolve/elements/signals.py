"""Signals of time that drive elements: a scalar Signal (a prescribed joint motion) and a
3-vector MotionSignal (a moving obstacle, a kinematic body, a time load), each a linear spline
through (times, values) constant beyond its ends, or a Python callable of t. A callable that
raises or returns a non-finite value is an InputError naming the signal and t.
"""
import numpy as np

from ..errors import InputError
from ..tables.checks import finite


class Signal:
    """A scalar signal of time: a linear spline through (times, values), constant beyond its
    ends, or a Python callable f(t) -> float."""

    def __init__(self, what, spec):
        self.what = what
        if callable(spec):
            self.f, self.times, self.values = spec, None, None
            return
        try:
            times, values = (np.asarray(x, float) for x in spec)
        except (TypeError, ValueError):
            raise InputError(f"{what}: give (times, values) or a callable of t, got "
                             f"{spec!r}") from None
        if times.ndim != 1 or times.shape != values.shape or len(times) < 1:
            raise InputError(f"{what}: times and values must be 1-D of one length, got "
                             f"{times.shape} and {values.shape}")
        finite(f"{what}: times", times)
        finite(f"{what}: values", values)
        if (np.diff(times) <= 0).any():
            k = int(np.flatnonzero(np.diff(times) <= 0)[0])
            raise InputError(f"{what}: times must increase, got {times[k]:g} then "
                             f"{times[k + 1]:g}")
        self.f, self.times, self.values = None, times, values

    def __call__(self, t):
        if self.f is None:
            return float(np.interp(t, self.times, self.values))
        try:
            v = float(self.f(t))
        except Exception as exc:
            raise InputError(f"{self.what}: the callable raised at t = {t:g}: {exc!r}") from None
        if not np.isfinite(v):
            raise InputError(f"{self.what}: the callable returned {v} at t = {t:g}")
        return v

    def integral(self, t):
        """The integral from 0 to t (exact for a spline; trapezoids of 64 pieces for a
        callable)."""
        if self.f is not None:
            s = np.linspace(0.0, t, 65)
            v = np.array([self(x) for x in s])
            return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(s)))
        knots = np.concatenate([[0.0], self.times[(self.times > 0) & (self.times < t)], [t]])
        v = np.interp(knots, self.times, self.values)
        return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(knots)))

    def state(self):
        """What defines it, for the model's fingerprint."""
        if self.f is not None:
            return getattr(self.f, "__qualname__", repr(self.f))
        return [self.times.tolist(), self.values.tolist()]


class MotionSignal:
    """A 3-vector signal of time: a constant, a linear spline (times, values (n, 3)) constant
    beyond its ends, or a callable f(t) -> 3 numbers."""

    def __init__(self, what, spec):
        self.what = what
        self.f = spec if callable(spec) else None
        if self.f is not None:
            return
        if isinstance(spec, tuple) and len(spec) == 2 and np.ndim(spec[1]) == 2:
            times = finite(f"{what}: times", spec[0])
            values = finite(f"{what}: values", spec[1], (len(times), 3))
            if (np.diff(times) <= 0).any():
                raise InputError(f"{what}: times must increase")
        else:
            times, values = np.zeros(1), finite(what, spec, (3,))[None]
        self.times, self.values = times, values

    def __call__(self, t):
        if self.f is None:
            return np.array([np.interp(t, self.times, self.values[:, i]) for i in range(3)])
        try:
            v = np.asarray(self.f(t), float).reshape(3)
        except Exception as exc:
            raise InputError(f"{self.what}: the callable raised at t = {t:g}: {exc!r}") from None
        if not np.isfinite(v).all():
            raise InputError(f"{self.what}: the callable returned {v.tolist()} at t = {t:g}")
        return v

    def state(self):
        if self.f is not None:
            return getattr(self.f, "__qualname__", repr(self.f))
        return [self.times.tolist(), self.values.tolist()]


def is_signal(value):
    """A time signal (a callable, or a spline (times, values)) rather than a constant."""
    return callable(value) or (isinstance(value, tuple) and len(value) == 2
                               and np.ndim(value[1]) == 2)
