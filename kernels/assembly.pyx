# The local dynamics' blocks in compiled loops (Python twins, the same names and arguments:
# parsolve/assembly/operators.py): H of point rows, K = M^-1 H^T, W's diagonal blocks and
# U = H u. Each sum is taken in numpy's order (its einsum sums a contiguous axis in two lanes,
# even terms then odd ones; a strided axis in order; np.add.at from zero), so the bits are
# the twins'.
import numpy as np
from typedefs cimport index_t


def point_incidences(const index_t[::1] a, const index_t[::1] b, const double[:, ::1] point,
                     const double[:, ::1] offset, const double[:, :, ::1] frame,
                     const double[:, ::1] x):
    """(contact index, body index, H (m, 3, 6), ptr (nc + 1)) of every incidence, ordered by
    (contact, side): H = sign E [I, -[r]x], r from the body's centre to the row's point on it
    (B's: point + offset), as for point rows; contact c's incidences are ptr[c]:ptr[c + 1]."""
    return _point_rows(a, b, point, offset, frame, x)


cdef tuple _point_rows(const index_t[::1] a, const index_t[::1] b, const double[:, ::1] point,
                       const double[:, ::1] offset, const double[:, :, ::1] frame,
                       const double[:, ::1] x):
    """point_incidences on views already taken (point_blocks passes its own on)."""
    cdef index_t m = _count_incidences(b)
    con_arr, body_arr = np.empty(m, np.int64), np.empty(m, np.int64)
    H_arr, ptr_arr = np.empty((m, 3, 6)), np.empty(a.shape[0] + 1, np.int64)
    cdef index_t[::1] con = con_arr, body = body_arr, ptr = ptr_arr
    cdef double[:, :, ::1] H = H_arr
    with nogil:
        _point_incidences(a, b, point, offset, frame, x, con, body, H, ptr)
    return con_arr, body_arr, H_arr, ptr_arr


cdef index_t _count_incidences(const index_t[::1] b) noexcept nogil:
    """The incidences of rows whose sides B are b (-1: an obstacle, no incidence)."""
    cdef index_t m = b.shape[0], c
    for c in range(b.shape[0]):
        if b[c] >= 0:
            m += 1
    return m


cdef void _point_incidences(const index_t[::1] a, const index_t[::1] b,
                            const double[:, ::1] point, const double[:, ::1] offset,
                            const double[:, :, ::1] frame, const double[:, ::1] x,
                            index_t[::1] con, index_t[::1] body, double[:, :, ::1] H,
                            index_t[::1] ptr) noexcept nogil:
    """point_incidences into arrays of _count_incidences(b) incidences."""
    cdef index_t nc = a.shape[0], c, e, i, k
    cdef double s, r0, r1, r2, p
    cdef double E[9]
    e = 0
    for c in range(nc):
        ptr[c] = e
        for k in range(2):
            if k == 1 and b[c] < 0:
                continue
            s = 1.0 if k == 0 else -1.0
            con[e] = c
            body[e] = a[c] if k == 0 else b[c]
            for i in range(9):
                E[i] = frame[c, i // 3, i % 3] * s
            p = point[c, 0] + offset[c, 0] if k == 1 else point[c, 0]
            r0 = p - x[body[e], 0]
            p = point[c, 1] + offset[c, 1] if k == 1 else point[c, 1]
            r1 = p - x[body[e], 1]
            p = point[c, 2] + offset[c, 2] if k == 1 else point[c, 2]
            r2 = p - x[body[e], 2]
            for i in range(3):
                H[e, i, 0] = E[3 * i]
                H[e, i, 1] = E[3 * i + 1]
                H[e, i, 2] = E[3 * i + 2]
                H[e, i, 3] = r1 * E[3 * i + 2] - r2 * E[3 * i + 1]
                H[e, i, 4] = r2 * E[3 * i] - r0 * E[3 * i + 2]
                H[e, i, 5] = r0 * E[3 * i + 1] - r1 * E[3 * i]
            e += 1
    ptr[nc] = e


cdef void _inverse_mass_HT(const index_t[::1] body, const double[:, :, ::1] H,
                           const double[::1] inv_mass, const double[:, :, ::1] Jinv,
                           double[:, :, ::1] K) noexcept nogil:
    cdef index_t m = H.shape[0], e, i, k, j
    for e in range(m):
        j = body[e]
        for i in range(3):
            for k in range(3):
                K[e, i, k] = H[e, k, i] * inv_mass[j]
                K[e, 3 + i, k] = (Jinv[j, i, 0] * H[e, k, 3] + Jinv[j, i, 2] * H[e, k, 5]) \
                    + Jinv[j, i, 1] * H[e, k, 4]


cdef void _diagonal_blocks(const index_t[::1] con, const double[:, :, ::1] H,
                           const double[:, :, ::1] K, double[:, :, ::1] out) noexcept nogil:
    cdef index_t m = H.shape[0], e, i, j, k
    cdef double acc
    for e in range(m):
        for i in range(3):
            for j in range(3):
                acc = H[e, i, 0] * K[e, 0, j]
                for k in range(1, 6):
                    acc = acc + H[e, i, k] * K[e, k, j]
                out[con[e], i, j] += acc


cdef void _apply_H(const index_t[::1] con, const index_t[::1] body, const double[:, :, ::1] H,
                   const double[:, ::1] v, const double[:, ::1] w,
                   double[:, ::1] U) noexcept nogil:
    cdef index_t m = H.shape[0], e, i, j
    cdef double even, odd
    for e in range(m):
        j = body[e]
        for i in range(3):
            even = (H[e, i, 0] * v[j, 0] + H[e, i, 2] * v[j, 2]) + H[e, i, 4] * w[j, 1]
            odd = (H[e, i, 1] * v[j, 1] + H[e, i, 3] * w[j, 0]) + H[e, i, 5] * w[j, 2]
            U[con[e], i] += even + odd


def inverse_mass_HT(const index_t[::1] body, const double[:, :, ::1] H,
                    const double[::1] inv_mass, const double[:, :, ::1] Jinv):
    """K_e = M^-1 H_e^T (6 x 3) per incidence: the body velocity change of a unit reaction."""
    K_arr = np.empty((H.shape[0], 6, 3))
    _inverse_mass_HT(body, H, inv_mass, Jinv, K_arr)
    return K_arr


def diagonal_blocks(const index_t[::1] con, const double[:, :, ::1] H,
                    const double[:, :, ::1] K, index_t nc):
    """W_aa = sum over contact a's incidences of H_e M^-1 H_e^T, (nc, 3, 3)."""
    out_arr = np.zeros((nc, 3, 3))
    _diagonal_blocks(con, H, K, out_arr)
    return out_arr


def apply_H(const index_t[::1] con, const index_t[::1] body, const double[:, :, ::1] H,
            const double[:, ::1] v, const double[:, ::1] w, index_t nc):
    """U = H u, per contact, in the local frame."""
    U_arr = np.zeros((nc, 3))
    _apply_H(con, body, H, v, w, U_arr)
    return U_arr


def local_blocks(const index_t[::1] con, const index_t[::1] body, const double[:, :, ::1] H,
                 const double[::1] inv_mass, const double[:, :, ::1] Jinv,
                 const double[:, ::1] v_free, const double[:, ::1] w_free,
                 const double[:, ::1] v, const double[:, ::1] w, index_t nc):
    """(K, W_aa, H u_free, H u) in one call: inverse_mass_HT, diagonal_blocks and apply_H of
    the free and the start velocities (the local dynamics' blocks of a step)."""
    return _local_blocks(con, body, H, inv_mass, Jinv, v_free, w_free, v, w, nc)


cdef tuple _local_blocks(const index_t[::1] con, const index_t[::1] body,
                         const double[:, :, ::1] H, const double[::1] inv_mass,
                         const double[:, :, ::1] Jinv, const double[:, ::1] v_free,
                         const double[:, ::1] w_free, const double[:, ::1] v,
                         const double[:, ::1] w, index_t nc):
    """local_blocks on views already taken (point_blocks passes its own on)."""
    K_arr = np.empty((H.shape[0], 6, 3))
    W_arr = np.zeros((nc, 3, 3))
    free_arr = np.zeros((nc, 3))
    start_arr = np.zeros((nc, 3))
    cdef double[:, :, ::1] K = K_arr
    cdef double[:, :, ::1] W = W_arr
    cdef double[:, ::1] free = free_arr
    cdef double[:, ::1] start = start_arr
    with nogil:
        _inverse_mass_HT(body, H, inv_mass, Jinv, K)
        _diagonal_blocks(con, H, K, W)
        _apply_H(con, body, H, v_free, w_free, free)
        _apply_H(con, body, H, v, w, start)
    return K_arr, W_arr, free_arr, start_arr


def point_blocks(const index_t[::1] a, const index_t[::1] b, const double[:, ::1] point,
                 const double[:, ::1] offset, const double[:, :, ::1] frame,
                 const double[:, ::1] x, const double[::1] inv_mass,
                 const double[:, :, ::1] Jinv, const double[:, ::1] v_free,
                 const double[:, ::1] w_free, const double[:, ::1] v, const double[:, ::1] w):
    """point_incidences and local_blocks in one call, for point rows alone: (con, body, H,
    ptr, K, W_aa, H u_free, H u). The same cores on views taken once."""
    made = _point_rows(a, b, point, offset, frame, x)
    return made + _local_blocks(made[0], made[1], made[2], inv_mass, Jinv, v_free, w_free, v,
                                w, a.shape[0])


def reaction_work(const double[:, ::1] R, const double[:, ::1] U0, const double[:, ::1] U1):
    """R . (U0 + U1) / 2 per row: the work of the reactions over a step, from the relative
    velocities at its start and end (or a moving side's work, from its velocities)."""
    cdef index_t n = R.shape[0], k
    out_arr = np.empty(n)
    cdef double[::1] out = out_arr
    cdef double s0, s1, s2
    with nogil:
        for k in range(n):
            s0, s1, s2 = U0[k, 0] + U1[k, 0], U0[k, 1] + U1[k, 1], U0[k, 2] + U1[k, 2]
            out[k] = 0.5 * (0.0 + ((R[k, 0] * s0 + R[k, 2] * s2) + R[k, 1] * s1))
    return out_arr
