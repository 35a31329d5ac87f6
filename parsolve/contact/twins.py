"""The pure-Python twins of kernels/contact.pyx (the same names and arguments), numpy over all
rows; tests/test_contact_physics.py holds them equal, bit for bit."""
import numpy as np


def frames_from_normals(n):
    """(k, 3) unit normals -> (k, 3, 3) orthonormal frames with rows (n, t1, t2): t1 = n x e
    normalised, e the world axis least aligned with n (the first on a tie), t2 = n x t1."""
    k = len(n)
    axis = np.argmin(np.abs(n), axis=1)            # the world axis least aligned with n
    e = np.zeros((k, 3))
    e[np.arange(k), axis] = 1.0
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    return np.stack([n, t1, t2], axis=1)
