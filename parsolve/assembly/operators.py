"""H, H^T and W = H M^-1 H^T for rigid bodies, vectorised over incidences.

An incidence is one (contact, body) pair: a contact has one with body A (sign +1) and, unless B
is an obstacle, one with body B (sign -1). For an incidence with local frame E (rows n, t1, t2)
and lever r = point - x_body, H_e = sign * E [I, -[r]x], so that H_e (v, w) = sign E (v + w x r).
Sums over incidences run in a fixed order (contact, then side; for W, body id), so the result
does not depend on how the contacts were partitioned. H is made per the row's geometry
(geometry.py: a point pair, or body coordinates).
"""
import numpy as np

from .._kernels import compiled
from . import twins
from ..tables.keys import POINT
from .geometry import JACOBIANS

assert POINT == 0                     # incidences: point rows alone have no nonzero geometry

_modules = compiled("assembly")
_kernel = _modules[0] if _modules is not None else twins
apply_H = _kernel.apply_H                    # U = H u, per contact (twins.py says more)
inverse_mass_HT = _kernel.inverse_mass_HT    # K = M^-1 H^T per incidence
diagonal_blocks = _kernel.diagonal_blocks    # W_aa
local_blocks = _kernel.local_blocks          # the three above in one call, H u_free and H u
reaction_work = _kernel.reaction_work        # R . (U0 + U1) / 2 per row


def incidences(contacts, bodies):
    """(contact index, body index, H (m, 3, 6), ptr) for every incidence, ordered by (contact,
    side), contact c's at ptr[c]:ptr[c + 1]: H of point rows, then each other geometry's rows
    made by its maker (geometry.py)."""
    made = _kernel.point_incidences(contacts.a, contacts.b, contacts.point, contacts.offset,
                                    contacts.frame, bodies.x)
    if not np.count_nonzero(contacts.geometry):   # point rows alone (POINT is 0)
        return made
    con, body, H, _ = made
    geometry = contacts.geometry[con]
    for code, jacobians in JACOBIANS.items():
        other = geometry == code
        if other.any():
            side_b = np.zeros(len(con), bool)      # a row's second incidence is its side B
            side_b[1:] = con[1:] == con[:-1]
            H[other] = jacobians(contacts.frame[con[other]], side_b[other])
    return made


def local_blocks_of(contacts, bodies, inv_mass, Jinv, v_free, w_free):
    """(con, body, H, ptr, K, W_aa, H u_free, H u) of `contacts` on `bodies` at their
    velocities u: the incidences and local_blocks; point rows alone in one compiled call."""
    if not np.count_nonzero(contacts.geometry):   # point rows alone (POINT is 0)
        return _kernel.point_blocks(contacts.a, contacts.b, contacts.point, contacts.offset,
                                    contacts.frame, bodies.x, inv_mass, Jinv, v_free, w_free,
                                    bodies.v, bodies.w)
    made = incidences(contacts, bodies)
    return made + local_blocks(*made[:3], inv_mass, Jinv, v_free, w_free, bodies.v, bodies.w,
                               len(contacts))


def apply_HT(con, body, H, R, nbodies):
    """H^T R as (impulse, angular impulse) per body, world frame."""
    g = np.einsum("mij,mi->mj", H, R[con])
    out = np.zeros((nbodies, 6))
    np.add.at(out, body, g)
    return out[:, :3], out[:, 3:]


def delassus(con, body, H, K, body_gid, nc):
    """W = H M^-1 H^T as block CSR (indptr, indices, blocks (nnz, 3, 3), diag).

    The block pattern is the linked-interaction map: W_ab != 0 iff contacts a and b share a body.
    """
    from ..parallel.operators import pairs_sharing

    # all ordered pairs of incidences that share a body
    by_body = np.argsort(body, kind="stable")
    q1, q2 = pairs_sharing(body[by_body])
    p1, p2 = by_body[q1], by_body[q2]
    rows, cols = con[p1], con[p2]
    order = np.lexsort((body_gid[body[p1]], cols, rows))
    rows, cols, p1, p2 = rows[order], cols[order], p1[order], p2[order]
    prod = np.einsum("mik,mkj->mij", H[p1], K[p2])
    new = np.ones(len(rows), bool)
    new[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    starts = np.nonzero(new)[0]
    blocks = np.add.reduceat(prod, starts, axis=0) if len(starts) else np.zeros((0, 3, 3))
    brow, bcol = rows[starts], cols[starts]
    indptr = np.zeros(nc + 1, np.int64)
    np.add.at(indptr, brow + 1, 1)
    indptr = np.cumsum(indptr)
    diag = np.nonzero(brow == bcol)[0]
    return indptr, bcol.astype(np.int64), np.ascontiguousarray(blocks), diag.astype(np.int64)


def block_matvec(indptr, indices, blocks, R):
    """W R for W in block CSR (3 x 3 blocks) and R (n, 3)."""
    n = len(indptr) - 1
    out = np.zeros((n, 3))
    rows = np.repeat(np.arange(n), np.diff(indptr))
    np.add.at(out, rows, np.einsum("kij,kj->ki", blocks, R[indices]))
    return out
