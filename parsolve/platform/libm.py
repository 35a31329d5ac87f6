"""sin, cos, exp, log, arcsin, arctan2 and power with the same bits on every CPU, for whatever
feeds a trajectory (rotations, model geometry, masses, connector laws, the broad phase's
levels).

numpy's own ufuncs take SVML's AVX-512 code where the CPU has AVX512_SKX, and its last bits
differ from the C library's, which numpy calls on other CPUs: the same run would give other
trajectories on another node type, and a restart there would not continue it. These call
the C library on every CPU (kernels/libm.pyx, or its twins parsolve/libm_twin.py when
PARSOLVE_KERNELS=python or the extension is not built). Any shape; a scalar gives a float.
"""
import numpy as np

from .._kernels import compiled
from . import libm_twin

NAMES = ("sin", "cos", "exp", "log", "arcsin", "arctan2", "power")
_modules = compiled("libm")
COMPILED = _modules is not None
_impl = _modules[0] if COMPILED else libm_twin


def _flat(f, *args):
    arrays = np.broadcast_arrays(*(np.asarray(a, float) for a in args))
    shape = arrays[0].shape
    out = f(*(np.ascontiguousarray(a).reshape(-1) for a in arrays)).reshape(shape)
    return float(out) if not shape else out


def sin(x):
    return _flat(_impl.sin, x)


def cos(x):
    return _flat(_impl.cos, x)


def exp(x):
    return _flat(_impl.exp, x)


def log(x):
    return _flat(_impl.log, x)


def arcsin(x):
    return _flat(_impl.arcsin, x)


def arctan2(y, x):
    """atan2(y, x) elementwise, broadcast as numpy's."""
    return _flat(_impl.arctan2, y, x)


def power(x, p):
    """x ** p elementwise, broadcast as numpy's (numpy's own takes SVML's pow for any
    exponent but -1, 0, 0.5, 1 and 2)."""
    return _flat(_impl.power, x, p)
