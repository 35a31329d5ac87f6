"""Small scenes shared by the tests."""
import numpy as np

import parsolve as ps
from parsolve.run import Simulation

G = 9.81


def run(model, duration, step, tol=1e-10, max_iter=2000, **kw):
    sim = Simulation(model, step=step, solver=ps.GaussSeidel(tol=tol, max_iter=max_iter),
                     progress=0, quiet=True, **kw)
    sim.run(duration)
    return sim


def on_floor(gravity=(0, 0, -G), mu=0.5, e=0.0):
    m = ps.Model(gravity=gravity)
    m.surface("body", "floor", friction=mu, restitution=e)
    m.surface("body", "body", friction=mu, restitution=e)
    m.half_space((0, 0, 0), (0, 0, 1), "floor")
    return m


def tilted(theta):
    """Gravity tilted by theta in the x-z plane: the floor acts as an incline of angle theta."""
    return (G * np.sin(theta), 0.0, -G * np.cos(theta))


def lattice(n, r, spacing, lo, per_row):
    k = np.arange(n)
    return np.asarray(lo) + spacing * np.stack(
        [k % per_row, (k // per_row) % per_row, k // (per_row * per_row)], axis=1) + r


def spheres_in_box(n, seed, gravity, friction, restitution, wall_friction, wall_restitution,
                   box, dz, radii, speed, spin=0.0):
    """n spheres on a lattice of 15 x 4 x ... sites in a closed box, thrown with random
    velocities: across the slabs of a partition along x (the MPI tests' scenes)."""
    rng = np.random.default_rng(seed)
    m = ps.Model(gravity=gravity)
    m.surface("g", "g", friction=friction, restitution=restitution)
    m.surface("g", "w", friction=wall_friction, restitution=wall_restitution)
    m.box_walls((0, 0, 0), box, "w", top=True)
    k = np.arange(n)
    x = np.stack([0.012 + 0.025 * (k % 15), 0.012 + 0.025 * ((k // 15) % 4),
                  dz[0] + dz[1] * (k // 60)], axis=1)
    r = rng.uniform(*radii, n) if np.ndim(radii) else radii
    m.spheres(x, r, "g", density=1000, velocities=rng.normal(0, speed, (n, 3)),
              angular_velocities=rng.normal(0, spin, (n, 3)) if spin else None)
    return m
