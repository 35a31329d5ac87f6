# A contact's (or a joint row's) local frame from its unit normal, one row at a time: shared by
# detection's frames (kernels/contact.pyx) and the joints' rows (kernels/joints.pyx), so both
# give parsolve/contact/twins.py's frames_from_normals to the bit.
from libc.math cimport fabs, sqrt


cdef inline void frame_from_normal(double a0, double a1, double a2,
                                   double* E) noexcept nogil:
    """E (3 x 3, row major) = the rows (n, t1, t2): t1 = n x e normalised, e the world axis
    least aligned with n (the first on a tie), t2 = n x t1."""
    cdef double e0 = 0.0, e1 = 0.0, e2 = 0.0, t0, t1, t2, s
    if fabs(a0) <= fabs(a1) and fabs(a0) <= fabs(a2):
        e0 = 1.0
    elif fabs(a1) <= fabs(a2):
        e1 = 1.0
    else:
        e2 = 1.0
    t0 = a1 * e2 - a2 * e1
    t1 = a2 * e0 - a0 * e2
    t2 = a0 * e1 - a1 * e0
    s = sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    t0 = t0 / s
    t1 = t1 / s
    t2 = t2 / s
    E[0], E[1], E[2] = a0, a1, a2
    E[3], E[4], E[5] = t0, t1, t2
    E[6] = a1 * t2 - a2 * t1
    E[7] = a2 * t0 - a0 * t2
    E[8] = a0 * t1 - a1 * t0
