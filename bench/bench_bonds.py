"""Cohesive bonds (issue 36): a bonded masonry wall of about 10^4 bricks under a lateral load,
seconds per step by phase, against the same wall with contacts alone.

    [mpirun -n P] python bench/bench_bonds.py [--courses 100 --per 100 --steps 3 --sweeps 50]

A running-bond wall (model.wall: courses x per bricks of 0.2 x 0.1 x 0.05 m, the courses
touching) on a fixed base slab, the lateral load a horizontal acceleration of 0.3 g on every
brick (gravity tilted); model.bonds(tension=200 N, cohesion=300 N, friction 0.6) at every
contact point touching at the start. Gauss-Seidel with a fixed number of sweeps (the figures
are per step; with an unconverged solve no bond breaks, and the bonded wall is a rigid
hyperstatic set on which a converged solve needs far more: README "Cohesive bonds"). After one
step not counted, `--steps` steps: wall seconds per step, the Simulation's phase timers (max
over ranks), rows, bonds, set-up seconds (detection of the touching contacts included); the
two models alternate. Writes bench/results/bonds.json.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import parsolve as ps  # noqa: E402


def wall(courses, per, bonded):
    lx, ly, lz = 0.2, 0.1, 0.05
    m = ps.Model(gravity=(0.3 * 9.81, 0.0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    m.box((per * lx / 2, ly / 2, -0.05), (per * lx / 2 + 0.2, ly, 0.05), "brick", fixed=True,
          name="base")
    m.wall(length=per * lx, height=courses * lz, brick=(lx, ly, lz), material="brick",
           density=1800)
    if bonded:
        m.bonds(tension=200.0, cohesion=300.0, friction=0.6)
    return m


def measure(args, bonded):
    from mpi4py import MPI

    from parsolve.run import Simulation
    from parsolve.tables.keys import BOND

    world = MPI.COMM_WORLD
    t0 = time.perf_counter()
    sim = Simulation(wall(args.courses, args.per, bonded), step=1e-3,
                     solver=ps.GaussSeidel(sweeps=args.sweeps), progress=0, quiet=True,
                     verify_every=0)
    setup = time.perf_counter() - t0
    sim.step()
    phase0 = dict(sim.phase)
    world.Barrier()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        sim.step()
    world.Barrier()
    seconds = (time.perf_counter() - t0) / args.steps
    mine = {k: (v - phase0[k]) / args.steps for k, v in sim.phase.items()}
    return {"seconds_per_step": seconds, "setup_seconds": world.allreduce(setup, op=MPI.MAX),
            "phase_seconds_per_step": {k: world.allreduce(v, op=MPI.MAX)
                                       for k, v in mine.items()},
            "rows": world.allreduce(len(sim.contacts)),
            "bond_rows": world.allreduce(int(np.sum(sim.contacts.origin == BOND))),
            "bodies": sim.n_bodies}


def main():
    from mpi4py import MPI

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--courses", type=int, default=100)
    ap.add_argument("--per", type=int, default=100)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--sweeps", type=int, default=50)
    args = ap.parse_args()
    out = {}
    for bonded in (True, False):
        name = "bonded" if bonded else "contacts"
        out[name] = measure(args, bonded)
        if MPI.COMM_WORLD.rank == 0:
            print(name, {k: v for k, v in out[name].items() if k != "phase_seconds_per_step"},
                  flush=True)
    if MPI.COMM_WORLD.rank == 0:
        common.write("bonds", common.metadata(
            ranks=MPI.COMM_WORLD.size, courses=args.courses, per=args.per, steps=args.steps,
            sweeps=args.sweeps, results=out,
            ratio_step_seconds=out["bonded"]["seconds_per_step"]
            / out["contacts"]["seconds_per_step"]))


if __name__ == "__main__":
    main()
