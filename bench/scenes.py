"""Benchmark scenes: pe's dense hexagonal close packing (Preclik and Ruede 2015, sec. 7.2)."""
import numpy as np

import parsolve as ps


def hcp_bed(n_target, r=1e-3, density=2650.0, mu=0.85, tilt_deg=30.0):
    """Spheres of radius r in hexagonal close packing, touching, on a floor inside walls.

    Gravity is tilted by tilt_deg in the x-z plane (as in pe's benchmark); walls replace pe's
    periodic boundaries."""
    nz = max(1, int(round((n_target / 1.3) ** (1 / 3))))
    nx = ny = max(2, int(np.ceil(np.sqrt(n_target / nz))))
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    i, j, k = i.ravel(), j.ravel(), k.ravel()
    x = (2 * i + (j + k) % 2) * r + r
    y = np.sqrt(3.0) * (j + (k % 2) / 3.0) * r + r
    z = 2.0 * np.sqrt(6.0) / 3.0 * k * r + r
    centres = np.stack([x, y, z], axis=1)[:n_target]
    g = 9.81
    t = np.radians(tilt_deg)
    model = ps.Model(gravity=(g * np.sin(t), 0.0, -g * np.cos(t)))
    model.surface("grain", "grain", friction=mu, restitution=0.0)
    model.surface("grain", "wall", friction=mu, restitution=0.0)
    hi = centres.max(axis=0) + r
    model.box_walls((0.0, 0.0, 0.0), (hi[0] + 1e-12, hi[1] + 1e-12, hi[2] + 10 * r), "wall")
    model.spheres(centres, r, "grain", density=density)
    return model


def poured_pile(n, mu, r=0.005, seed=7):
    """n polydisperse glass beads (radii 0.9 r to r) rained from a jittered loose lattice into
    a box about sqrt(n / 8) beads wide, to settle into a random pile (about 8 layers) under
    plain gravity; restitution 0. Returns (model, step): step 5e-4 s, settled after ~500."""
    rng = np.random.default_rng(seed)
    side = max(6, int(round((n / 8) ** 0.5)))
    spacing = 2.5 * r
    k = np.arange(n)
    centres = np.stack([r + spacing * (0.5 + k % side), r + spacing * (0.5 + (k // side) % side),
                        2 * r + spacing * (k // (side * side))], axis=1)
    centres += rng.uniform(-0.2, 0.2, (n, 3)) * r
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    model.surface("glass", "glass", friction=mu, restitution=0.0)
    model.surface("glass", "steel", friction=mu, restitution=0.0)
    width = side * spacing + 2 * r
    model.box_walls((0.0, 0.0, 0.0), (width, width, centres[:, 2].max() + 4 * r), "steel")
    model.spheres(centres, radii=r * rng.uniform(0.9, 1.0, n), density=2500.0,
                  material="glass", velocities=rng.normal(0.0, 0.05, (n, 3)))
    return model, 5e-4
