"""Continuum fields coarse-grained from the bodies and contacts on a structured grid
(Goldhirsch's coarse-graining; Weinhart et al., MercuryDPM): values at the cells' centres.

    density   rho(r) = sum_p m_p phi(r - x_p)
    momentum  p(r) = sum_p m_p v_p phi(r - x_p); velocity V = p / rho
    stress    contact part, compression positive: sum over the contacts' ends of
              f (x) l * (integral over the segment from the contact point c to the body's
              centre x of phi), l = x - c (the two ends of a contact between two bodies
              make the branch from B's centre through the contact to A's centre);
              kinetic part sum_p m_p v'_p (x) v'_p phi, v' = v_p - V(r)

phi is a kernel of stated width w: "gaussian" (standard deviation w, cut at 3 w) or "lucy"
(Lucy's quartic, support radius w). Each point's weights are normalised on the grid's
lattice (sum over nodes of phi dV = 1, counting nodes beyond the grid), so the fields conserve
exactly what lies inside: sum rho dV is the mass of the bodies (all of it when every kernel
fits in the grid), and sum sigma dV the Love-Weber total. The segment integral takes
`points` Gauss-Legendre points, each normalised alike. Every field is a sum of terms (one
per body or per end and node), summed exactly by the caller.
"""
import numpy as np

from ..errors import InputError
from ..platform import libm

KERNELS = ("gaussian", "lucy")


def _phi(d, kernel, width):
    s = d / width
    if kernel == "gaussian":
        return np.where(s <= 3.0, libm.exp(-0.5 * s * s), 0.0)
    t = np.minimum(s, 1.0)
    return (1.0 + 3.0 * t) * (1.0 - t) * (1.0 - t) * (1.0 - t)


def cutoff(kernel, width):
    if kernel not in KERNELS:
        raise InputError(f"coarse-graining: kernel {kernel!r}: choose from {', '.join(KERNELS)}")
    if not width > 0:
        raise InputError(f"coarse-graining: the kernel's width must be > 0, got {width}")
    return 3.0 * width if kernel == "gaussian" else width


def weights(grid, y, kernel, width):
    """(row, cell, phi) of the points y (n, 3) on the grid's nodes (cell centres): phi per
    unit volume, normalised over the whole lattice; nodes beyond the grid are dropped."""
    y = np.asarray(y, float).reshape(-1, 3)
    cut = cutoff(kernel, width)
    dx = grid.spacing
    first = np.floor((y - cut - grid.lo) / dx - 0.5).astype(np.int64)
    last = np.floor((y + cut - grid.lo) / dx - 0.5).astype(np.int64) + 1
    span = (last - first + 1).max(axis=0, initial=1)
    rows, nodes, phi = [], [], []
    for offset in np.ndindex(*span):
        ijk = first + np.array(offset)
        ok = np.all(ijk <= last, axis=1)
        r = np.flatnonzero(ok)
        centre = grid.lo + (ijk[r] + 0.5) * dx
        w = _phi(np.linalg.norm(centre - y[r], axis=1), kernel, width)
        rows.append(r)
        nodes.append(ijk[r])
        phi.append(w)
    rows, nodes, phi = np.concatenate(rows), np.concatenate(nodes), np.concatenate(phi)
    total = np.bincount(rows, phi, minlength=len(y)) * float(np.prod(dx))
    inside = np.all((nodes >= 0) & (nodes < np.array(grid.shape)), axis=1) & (phi > 0)
    rows, nodes, phi = rows[inside], nodes[inside], phi[inside]
    cells = np.ravel_multi_index(nodes.T, grid.shape, order="F")
    return rows, cells, phi / total[rows]


FIELDS = {"density": 1, "momentum": 3, "mvv": 9, "stress": 9}
_OFF = dict(zip(FIELDS, np.cumsum([0] + list(FIELDS.values()))[:-1]))
WIDTH = sum(FIELDS.values())


def terms(grid, bodies, ends, kernel="gaussian", width=None, points=5):
    """(terms (n, WIDTH), cells) of this rank's bodies and ends (centres attached)."""
    width = float(width if width is not None else 2.0 * np.max(grid.spacing))
    m, v = bodies["mass"], bodies["v"]
    r, c, w = weights(grid, bodies["x"], kernel, width)
    tb = np.zeros((len(r), WIDTH))
    mw = m[r] * w
    tb[:, 0] = mw
    tb[:, 1:4] = mw[:, None] * v[r]
    tb[:, 4:13] = (mw[:, None, None] * v[r][:, :, None] * v[r][:, None, :]).reshape(-1, 9)
    s, omega = np.polynomial.legendre.leggauss(int(points))
    s, omega = 0.5 * (s + 1.0), 0.5 * omega
    l = ends["x"] - ends["point"]
    fl = (ends["force"][:, :, None] * l[:, None, :]).reshape(-1, 9)
    parts, cells = [tb], [c]
    for sq, wq in zip(s, omega):
        r, c, w = weights(grid, ends["point"] + sq * l, kernel, width)
        te = np.zeros((len(r), WIDTH))
        te[:, 13:22] = fl[r] * (wq * w)[:, None]
        parts.append(te)
        cells.append(c)
    return np.concatenate(parts), np.concatenate(cells)


def finish(sums):
    """The fields from the summed terms (ncells, WIDTH): density, momentum, velocity,
    stress_contact, stress_kinetic and stress (their sum), each (ncells, ...)."""
    rho = sums[:, 0]
    p = sums[:, 1:4]
    V = np.divide(p, rho[:, None], out=np.zeros_like(p), where=rho[:, None] > 0)
    kin = sums[:, 4:13].reshape(-1, 3, 3) - rho[:, None, None] * V[:, :, None] * V[:, None, :]
    contact = sums[:, 13:22].reshape(-1, 3, 3)
    return {"density": rho, "momentum": p, "velocity": V, "stress_contact": contact,
            "stress_kinetic": kin, "stress": contact + kin}


def fields(grid, bodies, ends, sums, kernel="gaussian", width=None, points=5):
    """The coarse-grained fields on `grid` through sums(terms, cells, ncells)."""
    t, c = terms(grid, bodies, ends, kernel, width, points)
    return finish(sums(t, c, grid.ncells))
