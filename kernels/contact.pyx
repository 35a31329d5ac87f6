# Detection's per-row arithmetic in compiled loops (Python twins, the same names and arguments:
# parsolve/contact/twins.py), the twins' operations in their order, so the same bits.
import numpy as np
from libc.math cimport fabs, sqrt
from typedefs cimport index_t


def frames_from_normals(const double[:, ::1] n):
    """(k, 3) unit normals -> (k, 3, 3) orthonormal frames with rows (n, t1, t2): t1 = n x e
    normalised, e the world axis least aligned with n (the first on a tie), t2 = n x t1."""
    cdef index_t k = n.shape[0], i
    out = np.empty((k, 3, 3))
    cdef double[:, :, ::1] E = out
    cdef double a0, a1, a2, e0, e1, e2, t0, t1, t2, s
    with nogil:
        for i in range(k):
            a0, a1, a2 = n[i, 0], n[i, 1], n[i, 2]
            e0 = e1 = e2 = 0.0
            if fabs(a0) <= fabs(a1) and fabs(a0) <= fabs(a2):
                e0 = 1.0
            elif fabs(a1) <= fabs(a2):
                e1 = 1.0
            else:
                e2 = 1.0
            t0 = a1 * e2 - a2 * e1
            t1 = a2 * e0 - a0 * e2
            t2 = a0 * e1 - a1 * e0
            s = sqrt(t0 * t0 + t1 * t1 + t2 * t2)
            t0 = t0 / s
            t1 = t1 / s
            t2 = t2 / s
            E[i, 0, 0], E[i, 0, 1], E[i, 0, 2] = a0, a1, a2
            E[i, 1, 0], E[i, 1, 1], E[i, 1, 2] = t0, t1, t2
            E[i, 2, 0] = a1 * t2 - a2 * t1
            E[i, 2, 1] = a2 * t0 - a0 * t2
            E[i, 2, 2] = a0 * t1 - a1 * t0
    return out
