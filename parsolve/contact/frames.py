"""Local frames. A frame is stored as rows (n, t1, t2): E @ v gives v's (normal, tangent 1,
tangent 2) components, normal first as in FCLIB and Siconos. The normal points from body B to
body A; t1 is built from n alone, so a persisting contact keeps its frame as n turns slowly."""
import numpy as np


def frames_from_normals(n):
    """(k, 3) unit normals -> (k, 3, 3) orthonormal frames with rows (n, t1, t2)."""
    k = len(n)
    axis = np.argmin(np.abs(n), axis=1)            # the world axis least aligned with n
    e = np.zeros((k, 3))
    e[np.arange(k), axis] = 1.0
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    return np.stack([n, t1, t2], axis=1)
