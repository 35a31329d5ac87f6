# Detection's per-row arithmetic in compiled loops (Python twins, the same names and arguments:
# parsolve/contact/twins.py), the twins' operations in their order, so the same bits.
import numpy as np
from typedefs cimport index_t
from frames cimport frame_from_normal


def frames_from_normals(const double[:, ::1] n):
    """(k, 3) unit normals -> (k, 3, 3) orthonormal frames with rows (n, t1, t2): t1 = n x e
    normalised, e the world axis least aligned with n (the first on a tie), t2 = n x t1."""
    cdef index_t k = n.shape[0], i
    out = np.empty((k, 3, 3))
    cdef double[:, :, ::1] E = out
    with nogil:
        for i in range(k):
            frame_from_normal(n[i, 0], n[i, 1], n[i, 2], &E[i, 0, 0])
    return out
