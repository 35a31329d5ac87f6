"""The FCLIB problems of the solver benches, exported from parsolve scenes and cached in
bench/problems/ (git-ignored), each with mu = 0.3 and mu = 0.8:

  column50   a column of 50 spheres on a floor (step 3): W block tridiagonal, the load
             must travel 50 contacts (Gauss-Seidel's slowest case);
  pile200    a random pile of 200 beads poured into a box, settled (step 600, t = 0.3 s);
  pile10k    the same with 10,000 beads (step 500, t = 0.25 s);
  bed200     pe's dense hexagonal close packing of 200 spheres, every neighbour touching,
  bed10k     gravity tilted 30 degrees (step 3): a crystal, so W is very rank deficient
             (6 contacts per sphere); the hardest case for every solver.

    problems(names=None) -> {name: path}      (exports what is missing: pile10k takes minutes)
    python bench/fclib_problems.py [NAME ...] (lists them with their sizes)

Each entry also gives the sweep cap the Gauss-Seidel bench uses for it (CAPS).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parsolve as ps  # noqa: E402
import scenes  # noqa: E402
from parsolve.io import fclib  # noqa: E402
from parsolve.simulation import Simulation  # noqa: E402

CACHE = os.path.join(HERE, "problems")


def column(n, mu):
    m = ps.Model()
    m.surface("g", "g", friction=mu)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    m.spheres(np.array([[0.0, 0.0, 0.01 + 0.02 * k] for k in range(n)]), 0.01, "g",
              density=2500)
    return m, 1e-3


def bed(n, mu):
    return scenes.hcp_bed(n, mu=mu), 1e-5


# kind: (scene, size, step exported, solver of the steps before it, sweep cap of the bench)
KINDS = {"column50": (column, 50, 3, ps.GaussSeidel(tol=1e-8, max_iter=2000), 100_000),
         "pile200": (scenes.poured_pile, 200, 600, ps.GaussSeidel(tol=1e-6, max_iter=500),
                     100_000),
         "pile10k": (scenes.poured_pile, 10_000, 500, ps.GaussSeidel(tol=1e-4, max_iter=200),
                     20_000),
         "bed200": (bed, 200, 3, ps.GaussSeidel(tol=1e-8, max_iter=2000), 20_000),
         "bed10k": (bed, 10_000, 3, ps.GaussSeidel(tol=1e-8, max_iter=2000), 5_000)}
SCENES = {f"{kind}-mu{mu}": (kind, mu) for kind in KINDS for mu in (0.3, 0.8)}
CAPS = {name: KINDS[kind][4] for name, (kind, _) in SCENES.items()}


def problems(names=None):
    """{name: FCLIB file} for `names` (default: all), exported when not cached yet."""
    os.makedirs(CACHE, exist_ok=True)
    out = {}
    for name in names or SCENES:
        if name not in SCENES:
            raise SystemExit(f"unknown problem {name!r}: {', '.join(SCENES)}")
        path = os.path.join(CACHE, f"{name}.h5")
        if not os.path.exists(path):
            kind, mu = SCENES[name]
            make, size, step, solver, _ = KINDS[kind]
            model, h = make(size, mu)
            print(f"exporting {name}: step {step} of {size} bodies", flush=True)
            sim = Simulation(model, h, solver=solver, progress=0, quiet=True, verify_every=0)
            fclib.export_step(sim, path + ".tmp", step)
            for _ in range(step):
                sim.step()
            os.replace(path + ".tmp", path)
        out[name] = path
    return out


if __name__ == "__main__":
    for name, path in problems(sys.argv[1:] or None).items():
        p = fclib.read(path)
        print(f"{name:16s} {p.n:7d} contacts {len(p.blocks):9d} blocks  {path}")
