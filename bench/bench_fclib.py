"""parsolve's Gauss-Seidel against Siconos' fc3d_nsgs on the FCLIB problems of
bench/fclib_problems.py: seconds and iterations to a residual of 1e-8 (DESIGN.md section 2,
recomputed for both from their r), from R = 0, same tolerance, same iteration cap.

    python bench/bench_fclib.py [--problems NAME ...] [--tol 1e-8] [--max-iter N]
                                [--locals auto quartic newton projection]

Both run to the tolerance or to the same sweep cap (by default the problem's entry in
fclib_problems.CAPS: 100,000 sweeps for column50 and pile200, fewer for the big ones). The two
sweeps are the same algorithm in the same order, so at equal sweeps their residuals agree and
the ratio of seconds compares the implementations even where neither reaches the tolerance.
The other local solvers run on problems below 5,000 contacts only (they change only the rare
contacts where the default enumeration needs a fallback). One JSON record per (problem,
solver) in bench/results/fclib.json, and a table.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
import fclib_problems  # noqa: E402

from parsolve.io import fclib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*", default=None)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=None, help="sweep cap (default: CAPS)")
    ap.add_argument("--locals", nargs="*", default=["auto", "quartic", "newton", "projection"])
    args = ap.parse_args()
    try:
        import siconos_peer
    except ImportError:
        siconos_peer = None
        print("Siconos not found (apt-get install python3-siconos): parsolve only")
    rows = []
    for name, path in fclib_problems.problems(args.problems or
                                              fclib_problems.KERNEL_BENCH).items():
        problem = fclib.read(path)
        cap = args.max_iter or fclib_problems.CAPS[name]
        runs = []
        for local in args.locals:
            if local != "auto" and problem.n > 5000:
                continue
            _, _, rep = fclib.solve(problem, "gs", local, args.tol, cap)
            runs.append((f"parsolve-gs-{local}", rep.iterations, rep.seconds, rep.residual,
                         rep.converged, ""))
        if siconos_peer is not None:
            out = siconos_peer.solve_siconos(problem, "nsgs", args.tol, cap)
            runs.append(("siconos-nsgs", out["iterations"], out["seconds"], out["residual"],
                         out["converged"], out.get("failed", "")))
        for solver, its, seconds, residual, converged, failed in runs:
            record = common.metadata(problem=name, contacts=problem.n, solver=solver,
                                     tol=args.tol, max_iter=cap, iterations=int(its),
                                     seconds=seconds, residual=residual,
                                     converged=bool(converged), failed=failed)
            common.write("fclib", record)
            rows.append(record)
    print(f"\n| problem | contacts | solver | iterations | seconds | residual | "
          f"seconds / Siconos |\n|---|---|---|---|---|---|---|")
    ref = {r["problem"]: r["seconds"] for r in rows if r["solver"] == "siconos-nsgs"}
    for r in rows:
        ratio = r["seconds"] / ref[r["problem"]] if r["problem"] in ref else float("nan")
        print(f"| {r['problem']} | {r['contacts']} | {r['solver']} | {r['iterations']} | "
              f"{r['seconds']:.4f} | {r['residual']:.1e}{'' if r['converged'] else ' (cap)'}"
              f"{' ' + r['failed'] if r['failed'] else ''}"
              f" | {ratio:.2f} |")


if __name__ == "__main__":
    main()
