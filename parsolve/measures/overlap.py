"""Exact volumes of a sphere's overlap with a box and with another sphere, for packing
fractions that a region's boundary does not blur.

Sphere and box: the box's indicator is a signed sum of eight orthants (H(x - x0) - H(x - x1)
per axis), so the overlap is a signed sum of the volumes of the ball cut by three orthogonal
half-spaces {x > a, y > b, z > c}. That corner volume has a closed form from the divergence
theorem about the centre: V = (1/3) (S - a A_x - b A_y - c A_z), S the spherical part of the
boundary (by Archimedes' hat-box theorem an integral over z of the arc in each slice, done in
closed form) and A_x, A_y, A_z the flat faces (disc segments cut by two lines, also by the
divergence theorem in the plane). Negative offsets are reflected (a region {x > -a} is the
whole minus its mirror). Round-off only: no quadrature, no sampling.

Sphere and sphere: the lens of two balls (the classical formula in the distance).
"""
import numpy as np

from ..platform import libm

HALF_PI = 0.5 * np.pi


def _sqrt(x):
    return np.sqrt(np.maximum(x, 0.0))


def _arc_integral(a, z, w):
    """G = integral of acos(a / sqrt(1 - z^2)) dz at z, given w = sqrt(1 - a^2 - z^2) (a, z,
    w >= 0): z atan2(w, a) - a atan2(z, w) + atan2(a z, w), in arctangents of the exact
    coordinates so that a tangency costs no square root of a rounded difference."""
    first = np.where(a == 0.0, HALF_PI, libm.arctan2(w, a))
    return z * first - a * libm.arctan2(z, w) + libm.arctan2(a * z, w)


def _disc_corner(b, c, rho2):
    """Area of the disc of squared radius rho2 cut to {y > b, z > c} (b, c >= 0): half the
    boundary's moment about the centre (arc rho^2 dtheta, the two chords' -b l_y, -c l_z)."""
    inside = b * b + c * c < rho2
    sb, sc = _sqrt(rho2 - b * b), _sqrt(rho2 - c * c)
    angle = np.where(b == 0.0, HALF_PI, libm.arctan2(sb, b)) - libm.arctan2(c, sc)
    area = 0.5 * (rho2 * angle - b * (sb - c) - c * (sc - b))
    return np.where(inside, area, 0.0)


def _corner_positive(a, b, c):
    """Volume of the unit ball cut to {x > a, y > b, z > c}, for a, b, c >= 0."""
    inside = a * a + b * b + c * c < 1.0
    a, b, c = (np.where(inside, t, 0.0) for t in (a, b, c))
    zm = _sqrt(1.0 - a * a - b * b)
    S = (_arc_integral(a, zm, b) - _arc_integral(a, c, _sqrt(1.0 - a * a - c * c))
         + _arc_integral(b, zm, a) - _arc_integral(b, c, _sqrt(1.0 - b * b - c * c))
         - HALF_PI * (zm - c))
    V = (S - a * _disc_corner(b, c, 1.0 - a * a) - b * _disc_corner(a, c, 1.0 - b * b)
         - c * _disc_corner(a, b, 1.0 - c * c)) / 3.0
    return np.where(inside, V, 0.0)


def ball_corner(a, b, c):
    """Volume of the unit ball cut to {x > a, y > b, z > c}, any signs (arrays alike)."""
    a, b, c = (np.asarray(t, float) for t in np.broadcast_arrays(a, b, c))
    total = np.zeros(a.shape)
    choices = []
    for t in (a, b, c):       # {x > t} for t < 0: twice {x > 0} minus {x > |t|} mirrored
        neg = t < 0
        choices.append(((np.where(neg, 2.0, 0.0), np.zeros_like(t)),
                        (np.where(neg, -1.0, 1.0), np.abs(t))))
    for wa, ta in choices[0]:
        for wb, tb in choices[1]:
            for wc, tc in choices[2]:
                w = wa * wb * wc
                at = np.flatnonzero((w != 0) & (ta * ta + tb * tb + tc * tc < 1.0))
                if len(at):                         # only corners that hold some volume
                    total.flat[at] += w.flat[at] * _corner_positive(ta.flat[at], tb.flat[at],
                                                                    tc.flat[at])
    return total


def sphere_box(centre, radius, lo, hi):
    """Overlap volumes of spheres (centre (n, 3), radius (n,)) with axis-aligned boxes
    [lo, hi] ((n, 3) each, or (3,)): exact to round-off."""
    centre = np.atleast_2d(np.asarray(centre, float))
    radius = np.asarray(radius, float).reshape(-1)
    lo = np.broadcast_to(np.asarray(lo, float), centre.shape)
    hi = np.broadcast_to(np.asarray(hi, float), centre.shape)
    u0 = np.clip((lo - centre) / radius[:, None], -1.0, 1.0)
    u1 = np.clip((hi - centre) / radius[:, None], -1.0, 1.0)
    full = 4.0 / 3.0 * np.pi * radius * radius * radius
    out = np.zeros(len(radius))
    inside = np.all((u0 <= -1.0) & (u1 >= 1.0), axis=1)
    outside = np.any(u0 >= u1, axis=1)
    out[inside] = full[inside]
    cut = np.flatnonzero(~inside & ~outside)
    if len(cut):
        total = np.zeros(len(cut))
        bounds = ((u0[cut], 1.0), (u1[cut], -1.0))
        for (ax, sx) in bounds:
            for (ay, sy) in bounds:
                for (az, sz) in bounds:
                    total += sx * sy * sz * ball_corner(ax[:, 0], ay[:, 1], az[:, 2])
        r = radius[cut]
        out[cut] = np.clip(total, 0.0, 4.0 / 3.0 * np.pi) * r * r * r
    return out


def sphere_ball(centre, radius, ball_centre, ball_radius):
    """Overlap volumes of spheres (centre (n, 3), radius (n,)) with one ball: the lens."""
    centre = np.atleast_2d(np.asarray(centre, float))
    r = np.asarray(radius, float).reshape(-1)
    R = float(ball_radius)
    d = np.linalg.norm(centre - np.asarray(ball_centre, float), axis=1)
    small = np.minimum(r, R)
    lens = np.pi * (R + r - d) ** 2 * (d * d + 2 * d * r - 3 * r * r + 2 * d * R
                                       + 6 * r * R - 3 * R * R) / (12.0 * np.maximum(d, 1e-300))
    return np.where(d >= r + R, 0.0,
                    np.where(d <= np.abs(R - r), 4.0 / 3.0 * np.pi * small * small * small,
                             lens))
