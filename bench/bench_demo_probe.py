"""Why the demo's steps hit their sweep cap: examples/pour.py's scene run with Gauss-Seidel
(tol, 200 sweeps, as the demo had it); at the steps --at, a copy of the step's problem (with
the run's warm start) is solved by each candidate (Gauss-Seidel omega 0.8-1.6, shuffled, the
Hybrid, Newton) before the run goes on. One JSON record per (step, candidate) in
bench/results/demo_probe.json.

    parsolve run bench/bench_demo_probe.py -- [--spheres 3000] [--at 400,700] [--tol 1e-4]
"""
import argparse
import os
import sys
import time

import parsolve as ps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import common  # noqa: E402
from pour import pour  # noqa: E402  (the demo's scene)

ap = argparse.ArgumentParser()
ap.add_argument("--spheres", type=int, default=3000)
ap.add_argument("--duration", type=float, default=0.5)
ap.add_argument("--step", type=float, default=5e-4)
ap.add_argument("--at", default="300,500,700,900")
ap.add_argument("--tol", type=float, default=1e-4)
ap.add_argument("--base", default="gs")
args = ap.parse_args()
at = {int(s) for s in args.at.split(",")}

model = pour(args.spheres)


def candidates():
    from parsolve.solvers import Hybrid, SemismoothNewton
    t = args.tol
    c = {"gs": ps.GaussSeidel(tol=t, max_iter=3000)}
    for w in (0.8, 1.2, 1.4, 1.6):
        c[f"gs-w{w}"] = ps.GaussSeidel(tol=t, max_iter=3000, omega=w)
    try:
        c["gs-shuffle"] = ps.GaussSeidel(tol=t, max_iter=3000, shuffle="sweep", seed=1)
        c["gs-shuffle-w1.4"] = ps.GaussSeidel(tol=t, max_iter=3000, shuffle="sweep", seed=1,
                                              omega=1.4)
    except TypeError:
        pass
    c["hybrid"] = Hybrid(tol=t, max_iter=3000)
    c["newton"] = SemismoothNewton(tol=t, max_iter=100)
    return c

class Probe:
    def __init__(self, base):
        self.base = base; self.name = base.name; self.event_names = base.event_names; self.k = 0
    def solve(self, problem, R):
        self.k += 1
        if self.k in at:
            R0 = R.copy()
            for name, s in candidates().items():
                Rc = R0.copy(); t0 = time.perf_counter(); rep = s.solve(problem, Rc)
                common.write("demo_probe", common.metadata(
                    spheres=args.spheres, step=self.k, contacts=problem.n, candidate=name,
                    tol=args.tol, iterations=rep.iterations, newton=rep.newton_iterations,
                    residual=rep.residual, converged=rep.converged,
                    seconds=time.perf_counter() - t0), echo=False)
                print(f"PROBE step {self.k} n={problem.n} {name:16s} its={rep.iterations:5d} "
                      f"newton={rep.newton_iterations} res={rep.residual:.2e} conv={rep.converged} "
                      f"{time.perf_counter()-t0:.2f}s", flush=True)
        return self.base.solve(problem, R)

from parsolve.solvers import Hybrid
base = ps.GaussSeidel(tol=args.tol, max_iter=200) if args.base == "gs" else Hybrid(tol=args.tol)
model.run(duration=args.duration, step=args.step, solver=Probe(base),
          output="out/demo_probe.h5", frames=0.05, progress=10.0)
