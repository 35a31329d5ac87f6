"""The pure-Python twins of kernels/assembly.pyx (the same names and arguments), numpy over
all incidences; tests/test_assembly.py holds them equal, bit for bit."""
import numpy as np

from .geometry import point_jacobians


def point_incidences(a, b, point, offset, frame, x):
    """(contact index, body index, H (m, 3, 6), ptr (nc + 1)) of every incidence, ordered by
    (contact, side): H = sign E [I, -[r]x], r from the body's centre to the row's point on it
    (B's: point + offset), as for point rows; contact c's incidences are ptr[c]:ptr[c + 1]."""
    nc = len(a)
    has_b = b >= 0
    con = np.concatenate([np.arange(nc), np.nonzero(has_b)[0]])
    body = np.concatenate([a, b[has_b]])
    sign = np.concatenate([np.ones(nc), -np.ones(int(has_b.sum()))])
    order = np.lexsort((sign < 0, con))
    con, body, sign = con[order], body[order], sign[order]
    E = frame[con] * sign[:, None, None]
    p = point[con]
    side_b = sign < 0
    p[side_b] += offset[con[side_b]]
    return con, body, point_jacobians(E, p - x[body]), np.searchsorted(con, np.arange(nc + 1))


def apply_H(con, body, H, v, w, nc):
    """U = H u, per contact, in the local frame."""
    u = np.concatenate([v[body], w[body]], axis=1)
    U = np.zeros((nc, 3))
    np.add.at(U, con, np.einsum("mij,mj->mi", H, u))
    return U


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


def local_blocks(con, body, H, inv_mass, Jinv, v_free, w_free, v, w, nc):
    """(K, W_aa, H u_free, H u) in one call: inverse_mass_HT, diagonal_blocks and apply_H of
    the free and the start velocities (the local dynamics' blocks of a step)."""
    K = inverse_mass_HT(body, H, inv_mass, Jinv)
    return (K, diagonal_blocks(con, H, K, nc), apply_H(con, body, H, v_free, w_free, nc),
            apply_H(con, body, H, v, w, nc))


def point_blocks(a, b, point, offset, frame, x, inv_mass, Jinv, v_free, w_free, v, w):
    """point_incidences and local_blocks in one call, for point rows alone: (con, body, H,
    ptr, K, W_aa, H u_free, H u)."""
    con, body, H, ptr = point_incidences(a, b, point, offset, frame, x)
    return (con, body, H, ptr) + local_blocks(con, body, H, inv_mass, Jinv, v_free, w_free,
                                              v, w, len(a))


def reaction_work(R, U0, U1):
    """R . (U0 + U1) / 2 per row: the work of the reactions over a step, from the relative
    velocities at its start and end (or a moving side's work, from its velocities)."""
    return 0.5 * np.einsum("ki,ki->k", R, U0 + U1)
