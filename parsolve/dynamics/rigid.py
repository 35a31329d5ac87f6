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

from .._kernels import compiled
from . import twins

_modules = compiled("rigid")
_kernel = _modules[0] if _modules is not None else twins


def half_step(bodies, h, upto=None):
    """q(t+h/2) = q(t) + h/2 u(t) for rows 0..upto-1 (default the owned ones), in place."""
    n = bodies.n_owned if upto is None else upto
    _kernel.half_step(bodies.x, bodies.q, bodies.v, bodies.w, n, h)


def free_velocity(bodies, h, gravity):
    """(v_free, w_free, inverse world inertia, inverse mass) of every body held, at the
    current orientation."""
    n = len(bodies)
    v_free, w_free, Jinv, inv_mass = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), \
        np.empty(n)
    _kernel.free_velocity(bodies.q, bodies.inertia, bodies.mass, bodies.v, bodies.w,
                          bodies.force, bodies.torque, np.ascontiguousarray(gravity, float), h,
                          v_free, w_free, Jinv, inv_mass)
    return v_free, w_free, Jinv, inv_mass


def energies(bodies, gravity, n=None):
    """(kinetic, potential) energy of rows 0..n-1 (default the owned ones), per body."""
    n = bodies.n_owned if n is None else n
    kinetic, potential = np.empty(n), np.empty(n)
    _kernel.energies(bodies.q, bodies.inertia, bodies.mass, bodies.x, bodies.v, bodies.w,
                     np.ascontiguousarray(gravity, float), kinetic, potential)
    return kinetic, potential


def apply_velocity_change(bodies, v_free, w_free, du, upto=None):
    """u(t+h) = u_free + du, with du = M^-1 H^T R per body as (linear, angular) columns."""
    n = bodies.n_owned if upto is None else upto
    _kernel.apply_velocity_change(bodies.v, bodies.w, v_free, w_free, du, n)


def loads_work(bodies, x0, w0, h):
    """Each body's work of its constant loads over a step from positions x0 and angular
    velocities w0 to its current ones: f.(x - x0) + h/2 t.(w0 + w)."""
    out = np.empty(len(bodies))
    _kernel.loads_work(bodies.force, bodies.x, x0, bodies.torque, w0, bodies.w, h, out)
    return out


def travel(x0, x1, radius, fraction):
    """(|x1 - x0| per row, the number of rows that moved more than fraction of their radius)."""
    out = np.empty(len(x0))
    return out, _kernel.travel(x0, x1, radius, float(fraction), out)
