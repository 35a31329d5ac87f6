"""Benchmark scenes: pe's dense hexagonal close packing (Preclik and Ruede 2015, sec. 7.2)."""
import numpy as np

import parsolve as ps


def hcp_bed(n_target, r=1e-3, density=2650.0, mu=0.85, tilt_deg=30.0, boulders=0.0,
            ratio=20.0, periodic=False):
    """Spheres of radius r in hexagonal close packing, touching, on a floor inside walls.

    Gravity is tilted by tilt_deg in the x-z plane (as in pe's benchmark). periodic=True:
    periodic in x and y over a floor, pe's set-up (the periods are the lattice's, so the
    packing closes across them; an even number of rows in y); otherwise walls. boulders: that fraction of the n_target bodies are instead spheres
    `ratio` times larger, on a square lattice over the bed, the lowest layer resting on it
    (a polydisperse scene of the same count)."""
    nb = int(round(boulders * n_target))
    n_target -= nb
    nz = max(1, int(round((n_target / 1.3) ** (1 / 3))))
    nx = ny = max(2, int(np.ceil(np.sqrt(n_target / nz))))
    ny += ny % 2 if periodic else 0
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
    top = hi[2] + 10 * r
    if nb:
        R = ratio * r
        pitch = 2.0 * R + 2.0 * r
        nxb = max(1, int((hi[0] - 2 * r) // pitch))
        nyb = max(1, int((hi[1] - 2 * r) // pitch))
        k = np.arange(nb)
        big = np.stack([R + r + pitch * (k % nxb), R + r + pitch * ((k // nxb) % nyb),
                        hi[2] + R + pitch * (k // (nxb * nyb))], axis=1)
        top = max(top, big[:, 2].max() + 2 * R)
        model.spheres(big, R, "grain", density=density)
    if periodic:
        model.half_space((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), "wall", name="floor")
        model.periodic(x=(0.0, 2.0 * r * nx), y=(0.0, np.sqrt(3.0) * r * ny))
    else:
        model.box_walls((0.0, 0.0, 0.0), (hi[0] + 1e-12, hi[1] + 1e-12, top), "wall")
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


def _boxes_on_floor(mu):
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    model.surface("wood", "wood", friction=mu, restitution=0.0)
    model.surface("wood", "floor", friction=mu, restitution=0.0)
    model.half_space((0, 0, 0), (0, 0, 1), "floor")
    return model


def box_stacks(columns, height, mu, half=(0.1, 0.08, 0.05)):
    """`columns` side-by-side columns of `height` boxes resting on a floor (face to face: four
    corner contacts per face, so W is rank deficient); h = 1 ms."""
    model = _boxes_on_floor(mu)
    for c in range(columns):
        for k in range(height):
            model.box((2.5 * half[0] * c, 0.0, half[2] * (2 * k + 1)), half, "wood",
                      density=700.0)
    return model, 1e-3


def brick_wall(rows, per_row, mu, half=(0.1, 0.05, 0.05)):
    """A wall of bricks in running bond (every other row shifted by half a brick), touching
    along their ends and on their beds: the masonry case; h = 1 ms."""
    model = _boxes_on_floor(mu)
    for j in range(rows):
        shift = half[0] if j % 2 else 0.0
        for i in range(per_row - (j % 2)):
            model.box((shift + 2 * half[0] * i, 0.0, half[2] * (2 * j + 1)), half, "wood",
                      density=1800.0)
    return model, 1e-3


def kapla_tower(levels, mu, plank=(0.06, 0.012, 0.004)):
    """A Kapla-like tower: two thin planks per level, crossing the level below at right
    angles near their ends (a log-cabin tower); h = 1 ms."""
    a, b, c = plank
    model = _boxes_on_floor(mu)
    off = a - b
    for k in range(levels):
        z = c * (2 * k + 1)
        for s in (-1.0, 1.0):
            if k % 2:
                model.box((s * off, 0.0, z), (b, a, c), "wood", density=500.0)
            else:
                model.box((0.0, s * off, z), (a, b, c), "wood", density=500.0)
    return model, 1e-3


def _rained(n, mu, spacing, side, grain):
    """A model with a container (walls of "steel") for n bodies of material `grain` set on a
    lattice of side x side sites per layer, `spacing` apart: the model and the sites (n, 3)."""
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    model.surface(grain, grain, friction=mu, restitution=0.0)
    model.surface(grain, "steel", friction=mu, restitution=0.0)
    width = side * spacing
    model.box_walls((0.0, 0.0, 0.0), (width, width, spacing * (n // side ** 2 + 4)), "steel")
    k = np.arange(n)
    return model, spacing * np.stack([0.5 + k % side, 0.5 + (k // side) % side,
                                      0.7 + k // side ** 2], axis=1)


def box_pile(n, mu, half=(0.02, 0.015, 0.01), seed=3, spin=0.0):
    """n boxes of random orientation rained into a container to settle into a random pile
    (h = 1 ms); spin > 0 gives them random angular velocities of that scale (rad/s)."""
    rng = np.random.default_rng(seed)
    model, sites = _rained(n, mu, 2.6 * max(half), max(3, int(round((n / 4) ** 0.5))), "wood")
    for c in sites:
        q = rng.normal(size=4)
        model.box(c, half, "wood", density=700.0, orientation=q / np.linalg.norm(q),
                  velocity=rng.normal(0.0, 0.05, 3), angular_velocity=rng.normal(0.0, spin, 3))
    return model, 1e-3


def mixed_pile(n, mu, r=0.01, seed=5):
    """Spheres and boxes (one in four) rained into a container together (h = 1 ms)."""
    rng = np.random.default_rng(seed)
    model, sites = _rained(n, mu, 2.7 * r, max(4, int(round((n / 5) ** 0.5))), "g")
    for k in range(n):
        c = sites[k] + rng.uniform(-0.1, 0.1, 3) * r
        if k % 4 == 0:
            q = rng.normal(size=4)
            model.box(c, (r, 0.8 * r, 0.6 * r), "g", density=2500.0,
                      orientation=q / np.linalg.norm(q))
        else:
            model.sphere(c, r * rng.uniform(0.85, 1.0), "g", density=2500.0)
    return model, 1e-3
