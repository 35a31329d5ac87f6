"""Joint rows in the sweep: relaxations per core-second with 10 % of the rows bilateral against
contacts alone (issue 15: within 10 %), on one step of the dense HCP bed of bench_gs.py.

    python bench/bench_joints.py [--spheres 20000] [--sweeps 50] [--fraction 0.1]

The same W and B are swept twice from R = 0, best of three each, alternating: once with every
row a contact (Coulomb), once with every tenth row a bilateral row of 1, 2 or 3 equalities (a
fixed direction, a point on a line, a fixed point), as a model with joints has them. Writes
bench/results/joints.json.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import scenes  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve import laws  # noqa: E402
from parsolve.run import Simulation  # noqa: E402
from parsolve.solvers import kernels  # noqa: E402


def sweep_rate(ld, kind, param, sweeps):
    R, du = np.zeros((ld.n, 3)), np.zeros((ld.nbodies, 6))
    counts = np.zeros(laws.NCODES, np.int64)
    order = np.arange(ld.n, dtype=np.int64)
    t0 = time.perf_counter()
    for _ in range(sweeps):
        kernels.body_gauss_seidel_sweep(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, ld.B,
                                        kind, param, R, du, order, 1.0, counts)
    return ld.n * sweeps / (time.perf_counter() - t0), counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spheres", type=int, default=20000)
    ap.add_argument("--sweeps", type=int, default=50)
    ap.add_argument("--fraction", type=float, default=0.1)
    args = ap.parse_args()
    sim = Simulation(scenes.hcp_bed(args.spheres), step=1e-5,
                     solver=ps.GaussSeidel(tol=1e-6, max_iter=200), progress=0, quiet=True,
                     verify_every=0)
    box = {}
    sim.local_dynamics_hook = lambda s, ld: box.update(ld=ld)
    sim.run(5e-5)
    ld = box["ld"]
    kind, param = ld.kind.copy(), np.ascontiguousarray(np.zeros((ld.n, 1)) + ld.param[:, :1])
    step = max(1, int(round(1 / args.fraction)))
    joints = np.arange(0, ld.n, step)
    mixed_kind, mixed_param = kind.copy(), param.copy()
    mixed_kind[joints] = laws.bilateral.KIND
    mixed_param[joints, 0] = 1.0 + np.arange(len(joints)) % 3
    best = {"contacts": 0.0, "mixed": 0.0}
    for _ in range(3):
        for name, (k, p) in (("contacts", (kind, param)), ("mixed", (mixed_kind, mixed_param))):
            rate, counts = sweep_rate(ld, k, p, args.sweeps)
            best[name] = max(best[name], rate)
    common.write("joints", common.metadata(
        problem="hcp-bed", bodies=args.spheres, rows=int(ld.n), joint_rows=int(len(joints)),
        sweeps=args.sweeps, relaxations_per_core_second=best,
        ratio_mixed_to_contacts=best["mixed"] / best["contacts"]))


if __name__ == "__main__":
    main()
