"""The FCLIB problems of the solver benches, exported from parsolve scenes and cached in
bench/problems/ (git-ignored): a column of 50 spheres on a floor, a packed bed of about 200
spheres and one of at least 10,000 (pe's dense HCP bed, gravity tilted 30 degrees), each with
mu = 0.3 and mu = 0.8. Each is the contact problem of the third step of its scene.

    problems(names=None) -> {name: path}      (generates what is missing)
    python bench/fclib_problems.py            (lists them with their sizes)
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
STEP = 3


def column(n, mu):
    m = ps.Model()
    m.surface("g", "g", friction=mu)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    m.spheres(np.array([[0.0, 0.0, 0.01 + 0.02 * k] for k in range(n)]), 0.01, "g",
              density=2500)
    return m, 1e-3


def bed(n, mu):
    return scenes.hcp_bed(n, mu=mu), 1e-5


SCENES = {f"{kind}-mu{mu}": (make, size, mu)
          for kind, make, size in (("column50", column, 50), ("pile200", bed, 200),
                                   ("pile10k", bed, 10_000))
          for mu in (0.3, 0.8)}


def problems(names=None):
    """{name: FCLIB file} for `names` (default: all), exported when not cached yet."""
    os.makedirs(CACHE, exist_ok=True)
    out = {}
    for name in names or SCENES:
        if name not in SCENES:
            raise SystemExit(f"unknown problem {name!r}: {', '.join(SCENES)}")
        path = os.path.join(CACHE, f"{name}.h5")
        if not os.path.exists(path):
            make, size, mu = SCENES[name]
            model, h = make(size, mu)
            sim = Simulation(model, h, solver=ps.GaussSeidel(tol=1e-8, max_iter=2000),
                             progress=0, quiet=True, verify_every=0)
            fclib.export_step(sim, path, STEP)
            for _ in range(STEP):
                sim.step()
        out[name] = path
    return out


if __name__ == "__main__":
    for name, path in problems(sys.argv[1:] or None).items():
        p = fclib.read(path)
        print(f"{name:16s} {p.n:7d} contacts {len(p.blocks):9d} blocks  {path}")
