"""The fixed cost of a step on small models: the peer bench's ball, spring and 10-link chain
(bench/peers/models.py; the chain with Gauss-Seidel and with Newton) in this tree and in an
earlier commit's, checked out in a temporary worktree and built, run alternately in their own
processes, so that both see the same machine; CPU microseconds per step, each tree's best,
and the median over repeats of the ratio new / old of the runs made back to back.

    python bench/bench_small.py [--rev 15d3b16] [--repeat 3] [--steps 300]

Writes one record to bench/results/small.json (both trees' figures and their ratios).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.dirname(common.HERE)
CASES = (("ball", "gs"), ("spring", "gs"), ("chain", "gs"), ("chain", "newton"))
# one process's measurement: the model stepped `warm` steps, then `steps` steps timed by CPU
# time, best of 3 (the bench's models and solvers as bench_peers runs them)
PROBE = """
import json, sys, time
sys.path.insert(0, "{bench}")
from peers import models as M, parsolve_models as P
name, solver, steps = "{name}", "{solver}", {steps}
sim = P.simulation(name, M.MODELS[name], solver)
for _ in range(20):
    sim.step()
best = 1e9
for _ in range(3):
    t = time.process_time()
    for _ in range(steps):
        sim.step()
    best = min(best, (time.process_time() - t) / steps)
print(json.dumps(best * 1e6))
"""


def measure(tree, name, solver, steps):
    code = PROBE.format(bench=common.HERE, name=name, solver=solver, steps=steps)
    return json.loads(common.run_in(tree, "-c", code, capture=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="15d3b16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    runs = {t: {f"{n}-{s}": [] for n, s in CASES} for t in ("old", "new")}
    with common.tree_of(args.rev) as old:
        for _ in range(args.repeat):
            for name, solver in CASES:
                for tag, tree in (("old", old), ("new", ROOT)):
                    us = measure(tree, name, solver, args.steps // (10 if name == "chain"
                                                                    and solver == "gs" else 1))
                    runs[tag][f"{name}-{solver}"].append(us)
    best = {t: {k: min(v) for k, v in runs[t].items()} for t in runs}
    # each repeat's old and new ran back to back: the median of their ratios is the
    # figure least moved by a machine that speeds up or slows down between repeats
    paired = {k: float(np.median(np.divide(runs["new"][k], runs["old"][k]))) for k in best["new"]}
    rec = common.metadata(rev_old=args.rev, repeat=args.repeat, unit="CPU us per step",
                          old=best["old"], new=best["new"],
                          ratio={k: best["new"][k] / best["old"][k] for k in best["new"]},
                          median_paired_ratio=paired)
    common.write("small", rec)


if __name__ == "__main__":
    main()
