"""The pure-Python twins of kernels/libm.pyx (same names, flat float64 arrays in and out):
Python's math module, which calls the same C library; where math raises instead of
answering (a pole, an overflow, outside the domain), numpy's answer, which for those inputs
is IEEE's and the C library's on every CPU (inf, 0 or NaN)."""
import math

import numpy as np


def _elementwise(f, numpy_f):
    def twin(*arrays):
        out = []
        for v in zip(*(a.tolist() for a in arrays)):
            try:
                out.append(f(*v))
            except (ValueError, OverflowError):
                with np.errstate(all="ignore"):
                    out.append(float(numpy_f(*v)))
        return np.array(out, float)
    twin.__name__ = f.__name__
    return twin


sin, cos, exp, log, arcsin, arctan2, power = (
    _elementwise(f, g) for f, g in ((math.sin, np.sin), (math.cos, np.cos), (math.exp, np.exp),
                                    (math.log, np.log), (math.asin, np.arcsin),
                                    (math.atan2, np.arctan2), (math.pow, np.power)))
