# The rigid bodies' integration in compiled loops, one body at a time (Python twins, the same
# names and arguments: parsolve/dynamics/twins.py): the same operations in the same order as
# the twins, so the same bits.
from libc.math cimport sin, cos, sqrt
from typedefs cimport index_t


def half_step(double[:, ::1] x, double[:, ::1] q, const double[:, ::1] v,
              const double[:, ::1] w, index_t n, double h):
    """x += h/2 v and q <- exp(h/2 w) q, normalised, for rows 0..n-1 (in place)."""
    cdef index_t i
    cdef double dt = 0.5 * h, c = 0.5 * h
    cdef double p0, p1, p2, angle, half, k, ew, ex, ey, ez, qw, qx, qy, qz, ow, ox, oy, oz, nrm
    with nogil:
        for i in range(n):
            x[i, 0] += c * v[i, 0]
            x[i, 1] += c * v[i, 1]
            x[i, 2] += c * v[i, 2]
            p0 = dt * w[i, 0]
            p1 = dt * w[i, 1]
            p2 = dt * w[i, 2]
            angle = sqrt(p0 * p0 + p1 * p1 + p2 * p2)
            half = 0.5 * angle
            if angle < 1e-8:
                k = 0.5 - angle * angle / 48.0
            else:
                k = sin(half) / angle
            ew, ex, ey, ez = cos(half), k * p0, k * p1, k * p2
            qw, qx, qy, qz = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
            ow = ew * qw - ex * qx - ey * qy - ez * qz
            ox = ew * qx + ex * qw + ey * qz - ez * qy
            oy = ew * qy - ex * qz + ey * qw + ez * qx
            oz = ew * qz + ex * qy - ey * qx + ez * qw
            nrm = sqrt(ow * ow + ox * ox + oy * oy + oz * oz)
            q[i, 0] = ow / nrm
            q[i, 1] = ox / nrm
            q[i, 2] = oy / nrm
            q[i, 3] = oz / nrm


cdef inline void rotation(const double* q, double* R) noexcept nogil:
    """R (3 x 3, row major) of the unit quaternion q (w, x, y, z): rotation.quat_to_matrix."""
    cdef double w = q[0], x = q[1], y = q[2], z = q[3]
    R[0] = 1 - 2 * (y * y + z * z)
    R[1] = 2 * (x * y - w * z)
    R[2] = 2 * (x * z + w * y)
    R[3] = 2 * (x * y + w * z)
    R[4] = 1 - 2 * (x * x + z * z)
    R[5] = 2 * (y * z - w * x)
    R[6] = 2 * (x * z - w * y)
    R[7] = 2 * (y * z + w * x)
    R[8] = 1 - 2 * (x * x + y * y)


cdef inline void congruent(const double* R, const double* d, double* out) noexcept nogil:
    """out = R diag(d) R^T, each entry summed over j in order (numpy's three-operand einsum)."""
    cdef int i, k, j
    cdef double acc
    for i in range(3):
        for k in range(3):
            acc = (R[3 * i] * d[0]) * R[3 * k]
            for j in range(1, 3):
                acc = acc + (R[3 * i + j] * d[j]) * R[3 * k + j]
            out[3 * i + k] = acc


cdef inline void matvec(const double* M, const double* x, double* y) noexcept nogil:
    """y = M x, each row summed as (m0 x0 + m2 x2) + m1 x1 (numpy's two-operand einsum over a
    contiguous axis of 3, which pairs its terms so)."""
    cdef int i
    for i in range(3):
        y[i] = (M[3 * i] * x[0] + M[3 * i + 2] * x[2]) + M[3 * i + 1] * x[1]


def free_velocity(const double[:, ::1] q, const double[:, ::1] inertia,
                  const double[::1] mass, const double[:, ::1] v, const double[:, ::1] w,
                  const double[:, ::1] force, const double[:, ::1] torque,
                  const double[::1] gravity, double h, double[:, ::1] v_free,
                  double[:, ::1] w_free, double[:, :, ::1] Jinv, double[::1] inv_mass):
    """u_free = u + h M^-1 f (gyroscopic moment -w x J_w w included), the inverse world
    inertia R diag(1/J) R^T and the inverse mass of every row (out: v_free, w_free, Jinv,
    inv_mass)."""
    cdef index_t i, n = q.shape[0]
    cdef int c
    cdef double R[9]
    cdef double J[9]
    cdef double d[3]
    cdef double Jw[3]
    cdef double g[3]
    cdef double t[3]
    cdef double a[3]
    with nogil:
        for i in range(n):
            rotation(&q[i, 0], R)
            for c in range(3):
                d[c] = 1.0 / inertia[i, c]
            congruent(R, d, &Jinv[i, 0, 0])
            congruent(R, &inertia[i, 0], J)
            matvec(J, &w[i, 0], Jw)
            g[0] = w[i, 1] * Jw[2] - w[i, 2] * Jw[1]
            g[1] = w[i, 2] * Jw[0] - w[i, 0] * Jw[2]
            g[2] = w[i, 0] * Jw[1] - w[i, 1] * Jw[0]
            for c in range(3):
                v_free[i, c] = v[i, c] + h * (gravity[c] + force[i, c] / mass[i])
                t[c] = torque[i, c] - g[c]
            matvec(&Jinv[i, 0, 0], t, a)
            for c in range(3):
                w_free[i, c] = w[i, c] + h * a[c]
            inv_mass[i] = 1.0 / mass[i]


def energies(const double[:, ::1] q, const double[:, ::1] inertia, const double[::1] mass,
             const double[:, ::1] x, const double[:, ::1] v, const double[:, ::1] w,
             const double[::1] gravity, double[::1] kinetic, double[::1] potential):
    """Each row's kinetic energy (m v.v + w.J_w w) / 2 and potential energy -m x.g (out), for
    the first rows of the inputs, as many as the outputs have (the owned ones of held
    bodies: no slices made)."""
    cdef index_t i, n = kinetic.shape[0]
    cdef int j, k
    assert potential.shape[0] == n and min(q.shape[0], inertia.shape[0], mass.shape[0],
                                           x.shape[0], v.shape[0], w.shape[0]) >= n
    cdef double R[9]
    cdef double J[9]
    cdef double vv, wJw
    with nogil:
        for i in range(n):
            rotation(&q[i, 0], R)
            congruent(R, &inertia[i, 0], J)
            vv = (v[i, 0] * v[i, 0] + v[i, 2] * v[i, 2]) + v[i, 1] * v[i, 1]
            wJw = (w[i, 0] * J[0]) * w[i, 0]
            for j in range(3):
                for k in range(3):
                    if j or k:
                        wJw = wJw + (w[i, j] * J[3 * j + k]) * w[i, k]
            kinetic[i] = 0.5 * (mass[i] * vv + wJw)
            potential[i] = -mass[i] * ((x[i, 0] * gravity[0] + x[i, 1] * gravity[1])
                                       + x[i, 2] * gravity[2])


def apply_velocity_change(double[:, ::1] v, double[:, ::1] w, const double[:, ::1] v_free,
                          const double[:, ::1] w_free, const double[:, ::1] du, index_t n):
    """v = v_free + du[:, :3] and w = w_free + du[:, 3:] for rows 0..n-1 (in place)."""
    cdef index_t i
    cdef int c
    with nogil:
        for i in range(n):
            for c in range(3):
                v[i, c] = v_free[i, c] + du[i, c]
                w[i, c] = w_free[i, c] + du[i, 3 + c]


def loads_work(const double[:, ::1] force, const double[:, ::1] x, const double[:, ::1] x0,
               const double[:, ::1] torque, const double[:, ::1] w0, const double[:, ::1] w,
               double h, double[::1] out):
    """Each row's work of constant loads over a step, f.(x - x0) + h/2 t.(w0 + w) (out); the
    dot products summed as numpy's einsum sums three terms, (0 + 2) + 1."""
    cdef index_t i, n = out.shape[0]
    cdef double d[3]
    cdef double s[3]
    cdef double hh = 0.5 * h
    cdef int c
    with nogil:
        for i in range(n):
            for c in range(3):
                d[c] = x[i, c] - x0[i, c]
                s[c] = w0[i, c] + w[i, c]
            out[i] = (((force[i, 0] * d[0] + force[i, 2] * d[2]) + force[i, 1] * d[1])
                      + hh * ((torque[i, 0] * s[0] + torque[i, 2] * s[2]) + torque[i, 1] * s[1]))


def travel(const double[:, ::1] x0, const double[:, ::1] x1, const double[::1] radius,
           double fraction, double[::1] out):
    """Each row's travel |x1 - x0| (out, summed as numpy's norm sums, (0 + 1) + 2) and the
    number of rows whose travel exceeds fraction times their radius."""
    cdef index_t i, fast = 0, n = out.shape[0]
    cdef double a, b, c
    with nogil:
        for i in range(n):
            a = x1[i, 0] - x0[i, 0]
            b = x1[i, 1] - x0[i, 1]
            c = x1[i, 2] - x0[i, 2]
            out[i] = sqrt((a * a + b * b) + c * c)
            if out[i] > fraction * radius[i]:
                fast += 1
    return fast
