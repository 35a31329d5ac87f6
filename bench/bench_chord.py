"""Newton's LU factors reused over the next steps (GMRES on the factors of an earlier J, to a
relative residual of at most 1e-4, refactored when that takes more than 10 iterations: the
linear chain's default since commit ff6f2f5) against a fresh factorisation at every step (the
chain before it: a direction exact to round-off), issue 38.

    python bench/bench_chord.py [--problems NAME ...] [--tol 1e-8] [--seconds 60]
                                [--max-iter 1000000] [--results chord]

Each problem is solved from R = 0 by SemismoothNewton (defaults) both ways, one after the
other, each in its own process with the suite's wall-clock limit (bench_suite.py's rules);
one JSON record per (problem, way) in bench/results/<results>.json and a table. With
--max-iter 500 --tol 1e-300 it gives the residual after 500 steps instead (the poured piles
on which the two ways end apart).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

WAYS = ("reuse", "fresh")


def worker(path, way, tol, max_iter):
    import numpy as np

    from parsolve.io import fclib
    from parsolve.solvers import Problem, SemismoothNewton, linear
    from parsolve.solvers.residual import residual_from_velocity

    if way == "fresh":                       # every LU solve factors the current J
        factored = linear.LinearChain._factored

        def fresh(self, ksp, rhs, x, rtol):
            self.factored = False
            ksp.getPC().setReusePreconditioner(False)
            return factored(self, ksp, rhs, x, rtol)

        linear.LinearChain._factored = fresh
    problem = fclib.read(path)
    P = Problem.coulomb(problem.indptr, problem.indices, problem.blocks, problem.diag,
                        problem.q, problem.mu)
    R = np.zeros((problem.n, 3))
    t0 = time.perf_counter()
    rep = SemismoothNewton(tol=tol, max_iter=max_iter).solve(P, R)
    seconds = time.perf_counter() - t0
    res = residual_from_velocity(R, problem.matvec(R) + problem.q, problem.q, problem.mu)
    print(json.dumps({"iterations": int(rep.iterations), "seconds": seconds, "residual": res,
                      "converged": bool(res <= tol), "contacts": int(problem.n),
                      "lu_factorisations": int(rep.events["lu_factorisations"]),
                      "ksp_iterations": int(rep.ksp_iterations)}))


def run(path, way, tol, max_iter, seconds):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", path, way, repr(tol),
           str(max_iter)]
    return common.worker_record(cmd, seconds)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
    import fclib_problems

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*", default=fclib_problems.SUITE)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--max-iter", type=int, default=10 ** 6)
    ap.add_argument("--results", default="chord")
    a = ap.parse_args()
    count = dict.fromkeys(WAYS, 0)
    lines = ["| problem | contacts | " + " | ".join(WAYS) + " |", "|---|---:|---|---|"]
    for name, path in fclib_problems.problems(a.problems).items():
        cells, contacts = [], ""
        for way in WAYS:
            r = run(path, way, a.tol, a.max_iter, a.seconds)
            record = common.metadata(problem=name, way=way, tol=a.tol, limit=a.seconds,
                                     max_iter=a.max_iter, **r)
            common.write(a.results, record, echo=False)
            contacts = r.get("contacts", contacts)
            if r.get("converged"):
                count[way] += 1
                cells.append(f"**{r['seconds']:.3g} s** ({r['iterations']}, "
                             f"{r['lu_factorisations']} LU)")
            elif "failed" in r:
                cells.append("✗ timeout" if "timeout" in r["failed"] else "✗ failed")
            else:
                cells.append(f"✗ {r['residual']:.1e} ({r['iterations']}, "
                             f"{r['seconds']:.3g} s)")
        lines.append(f"| {name} | {contacts} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines.append(f"| **reached {a.tol:g} within {a.seconds:g} s** | | "
                 + " | ".join(f"**{count[w]} / {len(a.problems)}**" for w in WAYS) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
