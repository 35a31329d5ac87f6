"""How many FCLIB problems each solver brings to 1e-8 from R = 0 within 60 s: parsolve's
Gauss-Seidel, Newton and Hybrid beside Siconos' fc3d_nsgs and fc3d_nonsmooth_Newton_AlartCurnier
on the same files in the same run (bench/fclib_problems.SUITE: columns, poured piles of 200,
10^3 and 10^4 beads, crystal beds, stacks and columns of boxes, brick walls, Kapla towers, box
piles, spheres and boxes mixed, unsymmetric W from the gyroscopic term; mu 0.3-0.8), and
the public problems of bench/problems/public/ (fclib_problems.PUBLIC: Siconos' own test
problems, written by others) when their files are there.

    python bench/bench_suite.py [--problems NAME ...] [--solvers NAME ...] [--tol 1e-8]
                                [--seconds 60] [--table-only]

Every solve runs in its own process with a wall-clock limit of --seconds (parsolve's in a fresh
interpreter, Siconos' in a forked child with a memory cap, bench/siconos_peer.py), with
iteration caps high enough that the time limit is what stops a solver; a solve that does not
report within the limit counts as not reached. Seconds time the solver call alone (one under
10 ms: the fastest of five, both peers alike, common.best_of), and every
residual is DESIGN.md's, recomputed from the returned r. One JSON record per (problem, solver)
in bench/results/suite.json; the table (markdown, for bench/README.md) takes the newest record
of each pair.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

# name: (parsolve solver and options) or (siconos method, iteration cap)
PARSOLVE = {"parsolve-gs": ("gs", {"max_iter": 10 ** 8}),
            "parsolve-newton": ("newton", {"max_iter": 10 ** 6}),
            "parsolve-hybrid": ("hybrid", {"max_iter": 10 ** 8}),
            # the interior point, then Newton from its best iterate (issue 20)
            "parsolve-ipm": ("ipm", {"max_iter": 500, "newton_iter": 10 ** 6}),
            "parsolve-hybrid-ipm": ("hybrid", {"max_iter": 10 ** 8, "stage": "ipm"}),
            # Newton's line search non-monotone over the anchor's last 5 merits
            "parsolve-newton-gll": ("newton", {"max_iter": 10 ** 6, "memory": 5}),
            # and on Fischer-Burmeister's merit
            "parsolve-newton-fb": ("newton", {"max_iter": 10 ** 6, "memory": 5, "merit": "fb"}),
            # Gauss-Seidel's options (issue 20, scope 4): over-relaxed, shuffled every sweep
            "parsolve-gs-w1.5": ("gs", {"max_iter": 10 ** 8, "omega": 1.5}),
            "parsolve-gs-shuffle": ("gs", {"max_iter": 10 ** 8, "shuffle": "sweep", "seed": 1})}
SICONOS = {"siconos-nsgs": ("nsgs", 10 ** 8), "siconos-nsn-ac": ("newton_ac", 10 ** 6)}
SOLVERS = tuple(PARSOLVE) + tuple(SICONOS)
DEFAULT_SOLVERS = ("parsolve-gs", "parsolve-newton", "parsolve-hybrid", "parsolve-ipm") + tuple(SICONOS)


def worker(path, solver, tol):
    """Solve one problem in this process; print the record's fields as one JSON line."""
    import numpy as np

    from parsolve.io import fclib
    from parsolve.solvers import make_solver
    from parsolve.solvers import Problem
    from parsolve.solvers.residual import residual_from_velocity

    problem = fclib.read(path)
    name, options = PARSOLVE[solver]

    def once():
        # as Siconos' side: the problem built, then the solver call alone timed from R = 0
        s = make_solver(name, tol=tol, **options)
        R = np.zeros((problem.n, 3))
        P = Problem.coulomb(problem.indptr, problem.indices, problem.blocks, problem.diag,
                            problem.q, problem.mu)
        t0 = time.perf_counter()
        rep = s.solve(P, R)
        seconds = time.perf_counter() - t0
        res = residual_from_velocity(R, problem.matvec(R) + problem.q, problem.q, problem.mu)
        return {"iterations": int(rep.iterations), "seconds": seconds, "residual": res,
                "converged": bool(res <= tol), "events": rep.events,
                "ksp_iterations": int(getattr(rep, "ksp_iterations", 0)),
                "stages": [list(x) for x in getattr(rep, "stages", [])][:50]}

    print(json.dumps(common.best_of(once)))


def run_parsolve(path, solver, tol, seconds):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", path, solver, repr(tol)]
    return common.worker_record(cmd, seconds)


def run_siconos(path, solver, tol, seconds):
    import siconos_peer

    method, cap = SICONOS[solver]
    return siconos_peer.solve_siconos(path, method, tol, cap, timeout=seconds)


def table(records, problems, solvers, limit, tol=1e-8):
    """The markdown table: per problem and solver seconds (iterations) where reached within
    `limit`, else the residual at the end (or why none), and the count per solver."""
    head = "| problem | contacts | " + " | ".join(solvers) + " |"
    lines = [head, "|---|---:|" + "---|" * len(solvers)]
    count = dict.fromkeys(solvers, 0)
    for p in problems:
        cells = []
        for s in solvers:
            r = records.get((p, s))
            if r is None:
                cells.append("–")
            elif r["converged"] and r["seconds"] <= limit:
                count[s] += 1
                cells.append(f"**{r['seconds']:.3g} s** ({r['iterations']})")
            elif r.get("failed"):
                cells.append("✗ " + ("timeout" if "timeout" in r["failed"] else "failed"))
            else:
                cells.append(f"✗ {r['residual']:.1e}")
        contacts = next((r["contacts"] for (q, _), r in records.items() if q == p), "")
        lines.append(f"| {p} | {contacts} | " + " | ".join(cells) + " |")
    lines.append(f"| **reached {tol:g} within {limit:g} s** | | "
                 + " | ".join(f"**{count[s]} / {len(problems)}**" for s in solvers) + " |")
    return "\n".join(lines)


def newest(path):
    records = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                records[(r["problem"], r["solver"])] = r
    return records


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    import fclib_problems

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*",
                    default=fclib_problems.SUITE + fclib_problems.available_public())
    ap.add_argument("--solvers", nargs="*", default=list(DEFAULT_SOLVERS), choices=SOLVERS)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--results", default="suite",
                    help="bench/results/NAME.json (another name for another tolerance)")
    args = ap.parse_args()
    out = os.path.join(HERE, "results", args.results + ".json")
    if not args.table_only:
        from parsolve.io import fclib

        try:
            import siconos_peer  # noqa: F401
        except ImportError:
            print("Siconos not found (apt-get install python3-siconos): parsolve only")
            args.solvers = [s for s in args.solvers if s in PARSOLVE]
        for name, path in fclib_problems.problems(args.problems).items():
            n = fclib.read(path).n
            for solver in args.solvers:
                run = run_parsolve if solver in PARSOLVE else run_siconos
                r = run(path, solver, args.tol, args.seconds)
                record = common.metadata(problem=name, contacts=n, solver=solver, tol=args.tol,
                                         limit=args.seconds, **{
                                             "iterations": 0, "seconds": args.seconds,
                                             "residual": float("nan"), "converged": False,
                                             **{k: v for k, v in r.items() if k != "info"}})
                common.write(args.results, record, echo=False)
                print(f"{name:22s} {solver:16s} {'ok' if record['converged'] else '--'} "
                      f"{record['seconds']:8.3f} s {record['iterations']:8d} its "
                      f"{record['residual']:.1e} {record.get('failed', '')}", flush=True)
    print(table(newest(out), args.problems, args.solvers, args.seconds, args.tol))


if __name__ == "__main__":
    main()
