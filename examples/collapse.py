"""Production-size example: the collapse of a granular column in a channel.

A column of L0 x W x a L0 (aspect ratio a) of polydisperse glass beads, released at t = 0,
spreads along a channel (Lajeunesse, Mangeney-Castelnau and Vilotte 2004; Lube et al. 2004:
the run-out L_inf / L0 grows like a for a < 3 and like a^(2/3) above). Beads are made by a
generator, each rank only its share, so a million or more never sit on one rank.

    parsolve run examples/collapse.py -- --spheres 20000 --duration 0.2      (a laptop)
    sbatch jobs/collapse.sbatch                                (1e6 beads, see jobs/README.md)
"""
import argparse

import numpy as np

import parsolve as ps
from parsolve.model.generators import hashed_uniform

ap = argparse.ArgumentParser()
ap.add_argument("--spheres", type=int, default=1_000_000)
ap.add_argument("--aspect", type=float, default=2.0, help="column height / length a")
ap.add_argument("--width", type=int, default=40, help="channel width in bead diameters")
ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds")
ap.add_argument("--step", type=float, default=2e-4)
ap.add_argument("--output", default="out/collapse.h5")
args = ap.parse_args()

r = 0.5e-3                                   # mean bead radius [m] (glass, 1 mm beads)
spacing = 2.2 * r                            # loose lattice: beads jitter and fall into place
ny = args.width
# column of nx x ny x nz sites with nz = a nx and nx ny nz >= spheres
nx = int(np.ceil((args.spheres / (ny * args.aspect)) ** 0.5))
nz = int(np.ceil(args.spheres / (nx * ny)))
L0, W, H0 = nx * spacing, ny * spacing, nz * spacing
channel = L0 * (1.0 + 4.0 * args.aspect)     # long enough for the run-out

model = ps.Model(gravity=(0.0, 0.0, -9.81))
model.surface("glass", "glass", friction=0.5, restitution=0.1)
model.surface("glass", "wall", friction=0.3, restitution=0.1)
model.box_walls((0.0, 0.0, 0.0), (channel, W, 1.5 * H0), "wall")


def beads(ids):
    """Site (i, j, k) of the column for each id, jittered; radius 0.9 r to 1.0 r."""
    i, j, k = ids % nx, (ids // nx) % ny, ids // (nx * ny)
    jitter = np.stack([hashed_uniform(ids, s) - 0.5 for s in (1, 2, 3)], axis=1)
    centres = np.stack([i, j, k], axis=1) * spacing + 0.5 * spacing + 0.08 * r * jitter
    return {"centers": centres, "radii": r * (0.9 + 0.1 * hashed_uniform(ids, 4))}


model.sphere_generator(args.spheres, beads, "glass", density=2500.0)
model.run(duration=args.duration, step=args.step,
          solver=ps.GaussSeidel(tol=1e-4, max_iter=500),
          output=args.output, frames=0.02, progress=30.0,
          checkpoint_seconds=1800, checkpoint_keep=2)
