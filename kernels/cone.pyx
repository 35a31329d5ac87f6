"""Python entry points to the one-contact kernels of cone.pxd and local.pxd (for tests, benches
and the FCLIB tools). The pure-Python twins are in parsolve/solvers/reference.py."""
import numpy as np
from cone cimport project_cone, natural_map_sq
from local cimport local_enumerate


def project(const double[::1] z, double mu):
    """P_K(z) for one 3-vector (normal first)."""
    out = np.empty(3)
    cdef double[::1] o = out
    project_cone(&z[0], mu, &o[0])
    return out


def natural_map(const double[::1] r, const double[::1] u, double mu):
    """|r - P_K(r - (u_N + mu |u_T|, u_T))|."""
    return natural_map_sq(&r[0], &u[0], mu) ** 0.5


def local_solve(const double[:, ::1] W, const double[::1] b, double mu, r0=None):
    """Solve one contact's local problem; returns (r, code) with code a LOCAL_* outcome."""
    out = np.zeros(3) if r0 is None else np.array(r0, dtype=float)
    cdef double[::1] o = out
    cdef int code = local_enumerate(&W[0, 0], &b[0], mu, &o[0])
    return out, code
