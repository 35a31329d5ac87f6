"""Demo: pour a few thousand glass beads into a box and let them settle.

    parsolve run examples/pour.py --output out/pour.h5
    parsolve run examples/pour.py -- --spheres 500 --duration 0.2   (smaller)
"""
import argparse

import numpy as np

import parsolve as ps

ap = argparse.ArgumentParser()
ap.add_argument("--spheres", type=int, default=3000)
ap.add_argument("--duration", type=float, default=0.5)
ap.add_argument("--step", type=float, default=5e-4)
args = ap.parse_args()

r = 0.005                                    # bead radius [m]
box = np.array([0.12, 0.12, 0.5])            # container [m]
model = ps.Model(gravity=(0.0, 0.0, -9.81))
model.surface("glass", "glass", friction=0.4, restitution=0.2)
model.surface("glass", "steel", friction=0.3, restitution=0.2)
model.box_walls((0, 0, 0), box, material="steel")

# a loose lattice of beads above the floor, jittered so that the pile is not a crystal and
# the beads rain down rather than land as one block
spacing = 2.5 * r
nx = int((box[0] - 2 * r) // spacing)
rng = np.random.default_rng(7)
k = np.arange(args.spheres)
centres = np.stack([r + spacing * (0.5 + k % nx), r + spacing * (0.5 + (k // nx) % nx),
                    2 * r + spacing * (k // (nx * nx))], axis=1)
centres += rng.uniform(-0.2, 0.2, (args.spheres, 3)) * r
velocities = rng.normal(0.0, 0.05, (args.spheres, 3))
model.spheres(centres, radii=r * rng.uniform(0.9, 1.0, args.spheres), density=2500,
              material="glass", velocities=velocities)

# 200 sweeps a step at most: a pour of beads onto beads needs 200-300 sweeps a step to 1e-3
# once the pile forms (measured: 6,700 contacts), so steps end at the cap (counted in the
# summary as unconverged) where a converged demo would take several minutes
model.run(duration=args.duration, step=args.step,
          solver=ps.GaussSeidel(tol=1e-4, max_iter=200),
          output="out/pour.h5", frames=0.05, progress=2.0)
