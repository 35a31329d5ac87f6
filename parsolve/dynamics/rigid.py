"""Newton-Euler dynamics in seed 001's scheme (Moreau's midpoint, velocity-impulse form).

  q(t+h/2) = q(t) + h/2 u(t)                     half_step (orientation by the exponential map)
  u_free   = u(t) + h M^-1 f(t+h/2)              free_velocity (gyroscopic term included)
  u(t+h)   = u_free + M^-1 H^T R                 apply_velocity_change
  q(t+h)   = q(t+h/2) + h/2 u(t+h)               half_step again
Angular velocities are world-frame; the world inertia J_w = R J R^T follows the orientation, and
the gyroscopic moment -w x J_w w is taken at the half step. The position part is exact for
constant forces: x(t+h) = x + h v + h^2/2 a.
"""
import numpy as np

from .rotation import rotate_spatial


def half_step(bodies, h, upto=None):
    n = bodies.n_owned if upto is None else upto
    bodies.x[:n] += 0.5 * h * bodies.v[:n]
    bodies.q[:n] = rotate_spatial(bodies.q[:n], bodies.w[:n], 0.5 * h)


def free_velocity(bodies, h, gravity):
    """(v_free, w_free, inverse world inertia) of every body held, at the current orientation."""
    Jinv = bodies.inverse_inertia_world()
    Jw = bodies.inertia_world()
    w = bodies.w
    gyro = np.cross(w, np.einsum("nij,nj->ni", Jw, w))
    v_free = bodies.v + h * (gravity[None, :] + bodies.force / bodies.mass[:, None])
    w_free = w + h * np.einsum("nij,nj->ni", Jinv, bodies.torque - gyro)
    return v_free, w_free, Jinv


def apply_velocity_change(bodies, v_free, w_free, du, upto=None):
    """u(t+h) = u_free + du, with du = M^-1 H^T R per body as (linear, angular) columns."""
    n = bodies.n_owned if upto is None else upto
    bodies.v[:n] = v_free[:n] + du[:n, :3]
    bodies.w[:n] = w_free[:n] + du[:n, 3:]
