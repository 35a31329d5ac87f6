"""Twin of kernels/linalg.pxd: the 3 x 3 solve by cofactors and the disc-constrained 2 x 2
quadratic minimum, operation for operation."""
import math

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


def disc_min(s00, s01, s11, c0, c1, radius):
    """argmin 1/2 x^T S x + c^T x over |x| <= radius (twin of linalg.pxd's, operation for
    operation): a list [x0, x1]."""
    a, d, det, lam = s00, s11, s00 * s11 - s01 * s01, 0.0
    if radius <= 0.0 or det <= 0.0:
        return [0.0, 0.0]
    x0 = (-c0 * d + c1 * s01) / det
    x1 = (-c1 * a + c0 * s01) / det
    n = math.sqrt(x0 * x0 + x1 * x1)
    if n <= radius:
        return [x0, x1]
    for _ in range(100):
        y0 = (x0 * d - x1 * s01) / det
        y1 = (x1 * a - x0 * s01) / det
        step = (n - radius) / radius * (n * n) / (x0 * y0 + x1 * y1)
        if not step > 1e-15 * lam:
            break
        lam = lam + step
        a = s00 + lam
        d = s11 + lam
        det = a * d - s01 * s01
        x0 = (-c0 * d + c1 * s01) / det
        x1 = (-c1 * a + c0 * s01) / det
        n = math.sqrt(x0 * x0 + x1 * x1)
    return [x0 * (radius / n), x1 * (radius / n)]
