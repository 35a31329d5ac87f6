"""Twin of kernels/linalg.pxd: the 3 x 3 solve by cofactors, operation for operation."""
import numpy as np


def solve3(W, b):
    """W^-1 b (W 3 x 3); None when W is singular to round-off."""
    W = [float(x) for x in np.asarray(W).reshape(-1)]
    b = [float(b[0]), float(b[1]), float(b[2])]
    c00 = W[4] * W[8] - W[5] * W[7]
    c01 = W[5] * W[6] - W[3] * W[8]
    c02 = W[3] * W[7] - W[4] * W[6]
    det = W[0] * c00 + W[1] * c01 + W[2] * c02
    scale = abs(W[0]) + abs(W[4]) + abs(W[8])
    if abs(det) <= 1e-14 * scale * scale * scale:
        return None
    inv = 1.0 / det
    return np.array([
        (c00 * b[0] + (W[2] * W[7] - W[1] * W[8]) * b[1] + (W[1] * W[5] - W[2] * W[4]) * b[2])
        * inv,
        (c01 * b[0] + (W[0] * W[8] - W[2] * W[6]) * b[1] + (W[2] * W[3] - W[0] * W[5]) * b[2])
        * inv,
        (c02 * b[0] + (W[1] * W[6] - W[0] * W[7]) * b[1] + (W[0] * W[4] - W[1] * W[3]) * b[2])
        * inv])
