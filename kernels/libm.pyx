"""Elementwise functions of the C library over flat float64 arrays: sin, cos, exp, log,
arcsin, arctan2, power. numpy's own take SVML's AVX-512 code where the CPU has AVX512_SKX,
whose last bits differ from the C library's (and from numpy's on other CPUs): a trajectory
that went through them would depend on the node it ran on. Python twins:
parsolve/libm_twin.py, same names; parsolve/libm.py chooses and takes any shape."""
from libc cimport math as cm
import numpy as np

ctypedef double (*unary)(double) noexcept nogil


cdef apply(unary f, const double[::1] x):
    cdef double[::1] y = np.empty(x.shape[0])
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            y[i] = f(x[i])
    return np.asarray(y)


def sin(const double[::1] x):
    return apply(cm.sin, x)


def cos(const double[::1] x):
    return apply(cm.cos, x)


def exp(const double[::1] x):
    return apply(cm.exp, x)


def log(const double[::1] x):
    return apply(cm.log, x)


def arcsin(const double[::1] x):
    return apply(cm.asin, x)


ctypedef double (*binary)(double, double) noexcept nogil


cdef apply2(binary f, const double[::1] a, const double[::1] b):
    assert a.shape[0] == b.shape[0]
    cdef double[::1] y = np.empty(a.shape[0])
    cdef Py_ssize_t i
    with nogil:
        for i in range(a.shape[0]):
            y[i] = f(a[i], b[i])
    return np.asarray(y)


def arctan2(const double[::1] a, const double[::1] b):
    """atan2(a, b) elementwise (a and b of one length)."""
    return apply2(cm.atan2, a, b)


def power(const double[::1] a, const double[::1] b):
    """pow(a, b) elementwise (a and b of one length)."""
    return apply2(cm.pow, a, b)
