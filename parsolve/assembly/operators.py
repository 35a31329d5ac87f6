"""H, H^T and W = H M^-1 H^T for rigid bodies, vectorised over incidences.

An incidence is one (contact, body) pair: a contact has one with body A (sign +1) and, unless B
is an obstacle, one with body B (sign -1). For an incidence with local frame E (rows n, t1, t2)
and lever r = point - x_body, H_e = sign * E [I, -[r]x], so that H_e (v, w) = sign E (v + w x r).
Sums over incidences run in a fixed order (contact, then side; for W, body id), so the result
does not depend on how the contacts were partitioned. H is made per the row's geometry
(geometry.py: a point pair, or body coordinates).
"""
import numpy as np

from .geometry import JACOBIANS, point_jacobians


def incidences(contacts, bodies):
    """(contact index, body index, H (m, 3, 6)) for every incidence, ordered by (contact, side)."""
    nc = len(contacts)
    has_b = contacts.b >= 0
    con = np.concatenate([np.arange(nc), np.nonzero(has_b)[0]])
    body = np.concatenate([contacts.a, contacts.b[has_b]])
    sign = np.concatenate([np.ones(nc), -np.ones(int(has_b.sum()))])
    order = np.lexsort((sign < 0, con))
    con, body, sign = con[order], body[order], sign[order]
    E = contacts.frame[con] * sign[:, None, None]
    point = contacts.point[con]
    side_b = sign < 0
    point[side_b] += contacts.offset[con[side_b]]      # a joint's second point (zero offset for
    r = point - bodies.x[body]                         # a contact)
    H = point_jacobians(E, r)
    geometry = contacts.geometry[con]
    for code, jacobians in JACOBIANS.items():
        other = geometry == code
        if other.any():
            H[other] = jacobians(contacts.frame[con[other]], side_b[other])
    return con, body, H


def apply_H(con, body, H, v, w, nc):
    """U = H u, per contact, in the local frame."""
    u = np.concatenate([v[body], w[body]], axis=1)
    U = np.zeros((nc, 3))
    np.add.at(U, con, np.einsum("mij,mj->mi", H, u))
    return U


def apply_HT(con, body, H, R, nbodies):
    """H^T R as (impulse, angular impulse) per body, world frame."""
    g = np.einsum("mij,mi->mj", H, R[con])
    out = np.zeros((nbodies, 6))
    np.add.at(out, body, g)
    return out[:, :3], out[:, 3:]


def inverse_mass_HT(body, H, inv_mass, Jinv):
    """K_e = M^-1 H_e^T (6 x 3) per incidence: the body velocity change of a unit reaction."""
    K = np.empty((len(H), 6, 3))
    K[:, :3, :] = np.swapaxes(H[:, :, :3], 1, 2) * inv_mass[body][:, None, None]
    K[:, 3:, :] = np.einsum("mij,mkj->mik", Jinv[body], H[:, :, 3:])
    return K


def diagonal_blocks(con, H, K, nc):
    """W_aa = sum over contact a's incidences of H_e M^-1 H_e^T, (nc, 3, 3)."""
    out = np.zeros((nc, 3, 3))
    np.add.at(out, con, np.einsum("mik,mkj->mij", H, K))
    return out


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
