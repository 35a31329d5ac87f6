# The joints' world geometry per step in one compiled loop, one row at a time (Python twin, the
# same name and arguments: parsolve/elements/twins.py): numpy's operations in numpy's order, so
# the same bits. quat_to_matrix's entries as written there; einsum("nij,nj->ni") over three
# terms sums (t0 + t2) + t1 onto a zero; np.cross a1 b2 - a2 b1, ...; np.linalg.norm(axis=1)
# sqrt((s0 + s1) + s2); einsum("ni,ni->n") (t0 + t2) + t1 onto a zero; np.maximum keeps a NaN.
import numpy as np
from libc.math cimport sqrt
from typedefs cimport index_t
from frames cimport frame_from_normal

# the joint rows' forms (parsolve/elements/joints.py: FORMS): a point's three equalities, a
# given direction, the line through the points, that line held at a length
cdef enum:
    POINT = 0
    DIRECTION = 1
    LINE = 2
    LINK = 3


cdef inline void rotate(const double[:, :] q, index_t k, const double* p,
                        double* out) noexcept nogil:
    """out = R(q[k]) p, R as dynamics.rotation.quat_to_matrix, summed as einsum sums."""
    cdef double w = q[k, 0], x = q[k, 1], y = q[k, 2], z = q[k, 3]
    cdef double r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - w * z), r02 = 2 * (x * z + w * y)
    cdef double r10 = 2 * (x * y + w * z), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - w * x)
    cdef double r20 = 2 * (x * z - w * y), r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y)
    out[0] = 0.0 + ((r00 * p[0] + r02 * p[2]) + r01 * p[1])
    out[1] = 0.0 + ((r10 * p[0] + r12 * p[2]) + r11 * p[1])
    out[2] = 0.0 + ((r20 * p[0] + r22 * p[2]) + r21 * p[1])


cdef inline void point_velocity(const double[:, :] v, const double[:, :] w, index_t k,
                                const double* r, double* out) noexcept nogil:
    """out = v[k] + w[k] x r."""
    cdef double w0 = w[k, 0], w1 = w[k, 1], w2 = w[k, 2]
    out[0] = v[k, 0] + (w1 * r[2] - w2 * r[1])
    out[1] = v[k, 1] + (w2 * r[0] - w0 * r[2])
    out[2] = v[k, 2] + (w0 * r[1] - w1 * r[0])


cdef inline void body_point(const double[:, :] x, const double[:, :] q,
                            const double[:, :] v, const double[:, :] w, index_t k,
                            const double[:, ::1] local, index_t j, double* p, double* r,
                            double* vel) noexcept nogil:
    """p = x[k] + R(q[k]) local[j], the body's point in the world; r = p - x[k]; vel its
    velocity."""
    cdef double s[3]
    cdef int i
    s[0], s[1], s[2] = local[j, 0], local[j, 1], local[j, 2]
    rotate(q, k, s, p)
    for i in range(3):
        p[i] = x[k, i] + p[i]
        r[i] = p[i] - x[k, i]
    point_velocity(v, w, k, r, vel)


cdef inline double norm3(const double* r) noexcept nogil:
    return sqrt((r[0] * r[0] + r[1] * r[1]) + r[2] * r[2])


def joint_rows(const double[:, :] x, const double[:, :] q, const double[:, :] v,
               const double[:, :] w, const index_t[::1] a, const index_t[::1] b,
               const index_t[::1] use, const double[:, ::1] pa, const double[:, ::1] pb,
               const index_t[::1] form, const double[:, ::1] direction,
               const double[::1] rest, double h):
    """The joint rows `use` at the held bodies' state (x, q, v, w): a, b the rows' bodies
    (b = -1: the world), pa A's points in A's frame, pb B's in B's frame or world points
    (every joint's: indexed by `use`); each row's form, direction and rest length. Returns
    (point, offset, e, dist, far, frame, shift, rate): A's point, B's minus A's, e = A's minus
    B's and its length, the larger distance from the point to a body's centre; the row's
    local frame and free-term shift by its form: POINT the identity and e / h; DIRECTION the
    frame of the given direction; LINE that of the line through the points, e / |e|; LINK
    the line's, with (|e| - rest) / h along it (no shift but a point's or a link's: the
    caller adds the others'); and rate, the points' relative velocity (from v + w x r) along
    the frame's first axis (a spring's stretch rate)."""
    cdef index_t n = use.shape[0], k, i, ka, kb, j
    point_, offset_, e_, shift_ = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)), \
        np.empty((n, 3))
    dist_, far_, rate_ = np.empty(n), np.empty(n), np.empty(n)
    frame_ = np.empty((n, 3, 3))
    cdef double[:, ::1] point = point_, offset = offset_, e = e_, shift = shift_
    cdef double[::1] dist = dist_, far = far_, rate = rate_
    cdef double[:, :, ::1] frame = frame_
    cdef double pw[3]
    cdef double ow[3]
    cdef double r[3]
    cdef double va[3]
    cdef double vb[3]
    cdef double dv[3]
    cdef double fa, fb, d
    cdef double* E
    with nogil:
        for k in range(n):
            ka, kb, j = a[k], b[k], use[k]
            body_point(x, q, v, w, ka, pa, j, pw, r, va)
            fa = norm3(r)
            if kb >= 0:
                body_point(x, q, v, w, kb, pb, j, ow, r, vb)
                for i in range(3):
                    r[i] = pw[i] - x[kb, i]
                fb = norm3(r)
                if not (fa >= fb or fa != fa):
                    fa = fb
            else:
                ow[0], ow[1], ow[2] = pb[j, 0], pb[j, 1], pb[j, 2]
                vb[0] = vb[1] = vb[2] = 0.0
            for i in range(3):
                point[k, i] = pw[i]
                offset[k, i] = ow[i] - pw[i]
                e[k, i] = pw[i] - ow[i]
                dv[i] = va[i] - vb[i]
                shift[k, i] = 0.0
            d = norm3(&e[k, 0])
            dist[k] = d
            far[k] = fa
            E = &frame[k, 0, 0]
            if form[k] == POINT:
                for i in range(9):
                    E[i] = 0.0
                E[0] = E[4] = E[8] = 1.0
                for i in range(3):
                    shift[k, i] = e[k, i] / h
            elif form[k] == DIRECTION:
                frame_from_normal(direction[k, 0], direction[k, 1], direction[k, 2], E)
            else:
                frame_from_normal(e[k, 0] / d, e[k, 1] / d, e[k, 2] / d, E)
                if form[k] == LINK:
                    shift[k, 0] = (d - rest[k]) / h
            rate[k] = 0.0 + ((dv[0] * E[0] + dv[2] * E[2]) + dv[1] * E[1])
    return point_, offset_, e_, dist_, far_, frame_, shift_, rate_
