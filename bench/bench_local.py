"""Nanoseconds per local solve of one contact, for each local solver (compiled kernels).

    python bench/bench_local.py [--problems 100000]

Random problems with symmetric positive definite 3 x 3 blocks (condition number up to 1e3),
b_N < 0 (take-off is free), mu in [0, 1.2]: a mix of stick and slide, as in a dense bed. Each
solver solves all of them once through the `local_solve` entry point (so the figure includes
a Python call, ~100 ns; inside a sweep there is none), and the outcome counts say which solver
produced the reactions. One JSON record in bench/results/local.json.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import parsolve  # noqa: E402, F401
from parsolve.solvers import kernels  # noqa: E402
from parsolve.laws.codes import METHODS as LOCAL_SOLVERS, OUTCOMES as CODE_NAMES  # noqa: E402


def problems(n, seed=1):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, 3, 3)))
    eig = 10.0 ** rng.uniform(-3, 0, (n, 3))
    W = np.ascontiguousarray(np.einsum("nij,nj,nkj->nik", Q, eig, Q))
    b = rng.normal(size=(n, 3))
    b[:, 0] = -np.abs(b[:, 0])
    return W, b, rng.uniform(0.0, 1.2, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=100_000)
    args = ap.parse_args()
    W, b, mu = problems(args.problems)
    call = kernels.local_solve
    t0 = time.perf_counter()
    for k in range(args.problems):                      # the cost of the Python call alone
        kernels.natural_map(b[k], b[k], mu[k])
    overhead = (time.perf_counter() - t0) / args.problems
    result = {}
    for method, name in enumerate(LOCAL_SOLVERS):
        counts = np.zeros(len(CODE_NAMES), np.int64)
        t0 = time.perf_counter()
        for k in range(args.problems):
            counts[call(W[k], b[k], mu[k], None, method)[1]] += 1
        seconds = time.perf_counter() - t0
        result[name] = {"ns_per_solve": 1e9 * seconds / args.problems,
                        "ns_per_solve_less_call": 1e9 * (seconds / args.problems - overhead),
                        "outcomes": {c: int(v) for c, v in zip(CODE_NAMES, counts) if v}}
    common.write("local", common.metadata(problems=args.problems, compiled=kernels.COMPILED,
                                          python_call_ns=1e9 * overhead, solvers=result))


if __name__ == "__main__":
    main()
