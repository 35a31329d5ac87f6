"""The cost of the house: the sweep and the local solves of this tree against an earlier one,
in one run on one machine (issue 14: relaxations per second within 3 %).

    python bench/bench_house.py [--rev c53c2ce] [--repeat 3] [--spheres 20000] [--sweeps 100]

Checks out `--rev` (the last commit before laws became row kinds) in a temporary git worktree,
builds its kernels, and runs bench/bench_gs.py and bench/bench_local.py of each tree in turn,
`--repeat` times, alternating, so that both see the same machine; keeps each tree's best.
Writes one record to bench/results/house.json with both figures and their ratios.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.dirname(common.HERE)


def last_record(tree, name):
    with open(os.path.join(tree, "bench", "results", f"{name}.json")) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="c53c2ce")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spheres", type=int, default=20000)
    ap.add_argument("--sweeps", type=int, default=100)
    ap.add_argument("--problems", type=int, default=100000)
    args = ap.parse_args()
    with common.tree_of(args.rev) as old:
        best = {t: {"sweep": 0.0, "rows": 0.0, "local": {}} for t in ("old", "new")}
        for _ in range(args.repeat):
            for tag, tree in (("old", old), ("new", ROOT)):
                common.run_in(tree, os.path.join("bench", "bench_gs.py"), "--spheres",
                              str(args.spheres), "--sweeps", str(args.sweeps))
                rec = last_record(tree, "gs_sweep")
                b = best[tag]
                b["sweep"] = max(b["sweep"], rec["relaxations_per_core_second"])
                b["rows"] = max(b["rows"], rec["row_sweep_relaxations_per_core_second"])
                common.run_in(tree, os.path.join("bench", "bench_local.py"), "--problems",
                              str(args.problems))
                for name, r in last_record(tree, "local")["solvers"].items():
                    b["local"][name] = min(b["local"].get(name, 1e300), r["ns_per_solve"])
    o, n = best["old"], best["new"]
    rec = common.metadata(
        rev_old=args.rev, repeat=args.repeat, spheres=args.spheres, sweeps=args.sweeps,
        problems=args.problems, old=o, new=n,
        ratio_sweep=n["sweep"] / o["sweep"], ratio_row_sweep=n["rows"] / o["rows"],
        ratio_local_time={k: n["local"][k] / o["local"][k] for k in o["local"]})
    common.write("house", rec)


if __name__ == "__main__":
    main()
