"""The pure-Python twins of kernels/rigid.pyx (the same names and arguments): numpy over all
rows, the same operations in the same order, so the same bits (tests/test_dynamics.py holds
them equal)."""
import numpy as np

from .rotation import quat_to_matrix, rotate_spatial


def half_step(x, q, v, w, n, h):
    """x += h/2 v and q <- exp(h/2 w) q, normalised, for rows 0..n-1 (in place)."""
    x[:n] += 0.5 * h * v[:n]
    q[:n] = rotate_spatial(q[:n], w[:n], 0.5 * h)


def free_velocity(q, inertia, mass, v, w, force, torque, gravity, h, v_free, w_free, Jinv,
                  inv_mass):
    """u_free = u + h M^-1 f (gyroscopic moment -w x J_w w included), the inverse world
    inertia R diag(1/J) R^T and the inverse mass of every row (out: v_free, w_free, Jinv,
    inv_mass)."""
    Rm = quat_to_matrix(q)
    Jinv[:] = np.einsum("nij,nj,nkj->nik", Rm, 1.0 / inertia, Rm)
    Jw = np.einsum("nij,nj,nkj->nik", Rm, inertia, Rm)
    gyro = np.cross(w, np.einsum("nij,nj->ni", Jw, w))
    v_free[:] = v + h * (gravity[None, :] + force / mass[:, None])
    w_free[:] = w + h * np.einsum("nij,nj->ni", Jinv, torque - gyro)
    inv_mass[:] = 1.0 / mass


def energies(q, inertia, mass, x, v, w, gravity, kinetic, potential):
    """Each row's kinetic energy (m v.v + w.J_w w) / 2 and potential energy -m x.g (out), for
    the first rows of the inputs, as many as the outputs have."""
    n = len(kinetic)
    q, inertia, mass, x, v, w = q[:n], inertia[:n], mass[:n], x[:n], v[:n], w[:n]
    Rm = quat_to_matrix(q)
    Jw = np.einsum("nij,nj,nkj->nik", Rm, inertia, Rm)
    kinetic[:] = 0.5 * (mass * np.einsum("ni,ni->n", v, v) + np.einsum("ni,nij,nj->n", w, Jw, w))
    potential[:] = -mass * ((x[:, 0] * gravity[0] + x[:, 1] * gravity[1]) + x[:, 2] * gravity[2])


def apply_velocity_change(v, w, v_free, w_free, du, n):
    """v = v_free + du[:, :3] and w = w_free + du[:, 3:] for rows 0..n-1 (in place)."""
    v[:n] = v_free[:n] + du[:n, :3]
    w[:n] = w_free[:n] + du[:n, 3:]


def loads_work(force, x, x0, torque, w0, w, h, out):
    """Each row's work of constant loads over a step, f.(x - x0) + h/2 t.(w0 + w) (out)."""
    out[:] = (np.einsum("ni,ni->n", force, x - x0)
              + 0.5 * h * np.einsum("ni,ni->n", torque, w0 + w))


def travel(x0, x1, radius, fraction, out):
    """Each row's travel |x1 - x0| (out) and the number of rows whose travel exceeds
    fraction times their radius."""
    out[:] = np.linalg.norm(x1 - x0, axis=1)
    return int(np.count_nonzero(out > fraction * radius))
