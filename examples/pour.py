"""Demo: pour 400 glass beads into a box and let them settle, every step solved to 1e-3.

    parsolve run examples/pour.py --output out/pour.h5
    parsolve run examples/pour.py -- --spheres 3000 --tol 1e-4   (larger, tighter: see below)
"""
import argparse

import numpy as np

import parsolve as ps

def pour(spheres, seed=7):
    """The demo's scene: `spheres` glass beads on a loose jittered lattice above the floor of
    a steel box (so that the pile is not a crystal and the beads rain down rather than land
    as one block)."""
    r = 0.005                                    # bead radius [m]
    box = np.array([0.12, 0.12, 0.5])            # container [m]
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    model.surface("glass", "glass", friction=0.4, restitution=0.2)
    model.surface("glass", "steel", friction=0.3, restitution=0.2)
    model.box_walls((0, 0, 0), box, material="steel")
    spacing = 2.5 * r
    nx = int((box[0] - 2 * r) // spacing)
    rng = np.random.default_rng(seed)
    k = np.arange(spheres)
    centres = np.stack([r + spacing * (0.5 + k % nx), r + spacing * (0.5 + (k // nx) % nx),
                        2 * r + spacing * (k // (nx * nx))], axis=1)
    centres += rng.uniform(-0.2, 0.2, (spheres, 3)) * r
    velocities = rng.normal(0.0, 0.05, (spheres, 3))
    model.spheres(centres, radii=r * rng.uniform(0.9, 1.0, spheres), density=2500,
                  material="glass", velocities=velocities)
    return model


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=400)
    ap.add_argument("--duration", type=float, default=0.5)
    ap.add_argument("--step", type=float, default=5e-4)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--omega", type=float, default=1.5)
    ap.add_argument("--max-iter", type=int, default=3000)
    args = ap.parse_args()

    model = pour(args.spheres)

    # Gauss-Seidel over-relaxed (omega 1.5 needs a third to a half of the sweeps of omega 1
    # on piles), each step to 1e-3 within 3000 sweeps: all 1000 steps converge in about a
    # minute. Not 1e-4, nor 3000 beads, in under 2 minutes: on a formed pile Gauss-Seidel
    # converges as about 1/sweeps (from 1e-3 to 1e-4 takes thousands of sweeps, whatever
    # omega or a shuffled order), and Newton or the Hybrid take 15 s a step there
    # (bench/README.md, "Solvers, continued")
    model.run(duration=args.duration, step=args.step,
              solver=ps.GaussSeidel(tol=args.tol, max_iter=args.max_iter, omega=args.omega),
              output="out/pour.h5", frames=0.05, progress=2.0)
