"""The interior point's path on one FCLIB problem: the residual and the seconds at every
iteration, from R = 0 (issue 20's 10^4-bead pile: does it reach 1e-8 within 60 s on a core?).

    python bench/bench_ipm.py [--problem pile10k-mu0.3] [--max-iter 80] [--tol 1e-8]
                              [--newton-iter 0]

The problem comes from bench/fclib_problems.py (exported once into bench/problems/). Prints a
line per iteration (residual, mean gap x . y, infeasibility |M x + b - y|, step length: where
the iterations stall, the gap has gone to zero before the infeasibility and the steps to 0)
and writes one record (the path, the events, the final residual) to bench/results/ipm.json.
"""
import argparse
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import common  # noqa: E402
import fclib_problems  # noqa: E402

import numpy as np  # noqa: E402

from parsolve.io import fclib  # noqa: E402
from parsolve.solvers import Problem  # noqa: E402
from parsolve.solvers import interior  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="pile10k-mu0.3")
    ap.add_argument("--max-iter", type=int, default=80)
    ap.add_argument("--newton-iter", type=int, default=0)
    ap.add_argument("--tol", type=float, default=1e-8)
    a = ap.parse_args()
    path = fclib_problems.problems([a.problem])[a.problem]
    pr = fclib.read(path)
    problem = Problem.coulomb(pr.indptr, pr.indices, pr.blocks, pr.diag, pr.q, pr.mu)
    solver = interior.InteriorPoint(tol=a.tol, max_iter=a.max_iter, newton_iter=a.newton_iter)
    trace, t0 = [], time.perf_counter()

    def traced(point):              # each iterate: residual, gap, infeasibility, step, time
        trace.append({"seconds": round(time.perf_counter() - t0, 3), **point})
        more = "".join(f"  {k} {point[k]:.2e}" for k in ("gap", "infeasibility", "step")
                       if k in point)
        print(f"{point['iteration']:4d} {trace[-1]['seconds']:8.2f} s  residual "
              f"{point['residual']:.3e}{more}", flush=True)

    solver.trace = traced
    R = np.zeros((pr.n, 3))
    rep = solver.solve(problem, R)
    common.write("ipm", {**common.metadata(problem=a.problem, contacts=pr.n),
                         "tol": a.tol, "iterations": rep.iterations, "residual": rep.residual,
                         "converged": rep.converged, "seconds": time.perf_counter() - t0,
                         "events": rep.events, "path": trace}, echo=False)
    print(f"{a.problem}: {rep.iterations} iterations, residual {rep.residual:.3e}, "
          f"{time.perf_counter() - t0:.1f} s, events {rep.events}")


if __name__ == "__main__":
    main()
