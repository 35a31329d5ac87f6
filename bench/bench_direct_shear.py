"""The direct shear test of examples/direct_shear.py at bench size: the shear/normal force
ratio and the dilation over the travel, and the cost per phase.

    python bench/bench_direct_shear.py --spheres 2000 --travel 0.008 [--ranks 1]
    python bench/bench_direct_shear.py --results out.h5 --spheres 2000 --travel 0.008

Runs the example through `parsolve run` (or reads the results of such a run) and writes
bench/results/direct_shear.json: the ratio's mean and spread per window of travel, the cap's
rise, and the run's seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from direct_shear import build, shear_ratio  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=2000)
    ap.add_argument("--travel", type=float, default=0.008)
    ap.add_argument("--step", type=float, default=5e-4)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--results", help="read this results file instead of running")
    args = ap.parse_args()
    out, seconds = args.results, None
    if out is None:
        out = "/tmp/bench_direct_shear.h5"
        cmd = [sys.executable, "-m", "parsolve.cli", "run",
               os.path.join(ROOT, "examples", "direct_shear.py"), "--output", out, "--",
               "--spheres", str(args.spheres), "--travel", str(args.travel),
               "--step", str(args.step)]
        if args.ranks > 1:
            cmd = ["mpirun", "-n", str(args.ranks)] + cmd
        t0 = time.time()
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=ROOT))
        seconds = time.time() - t0
    import h5py

    info = build(args.spheres, travel=args.travel)[1]
    with h5py.File(out, "r") as f:
        t = f["sensors/shear/time"][()]
        ratio = shear_ratio(f["sensors/shear/force"][()], info["load"])
        z = f["sensors/cap/x"][()][:, 0, 2]
    start, v = info["settle"], args.travel / info["shear"]
    z0 = z[t <= start][-1]
    windows = []
    edges = np.linspace(0.0, args.travel, 6)
    for a, b in zip(edges[:-1], edges[1:]):
        s = (t > start + a / v) & (t <= start + b / v)
        windows.append({"travel_mm": [1e3 * a, 1e3 * b], "ratio_mean": float(ratio[s].mean()),
                        "ratio_std": float(ratio[s].std()),
                        "cap_rise_mm": float(1e3 * (z[s].mean() - z0))})
    record = {"spheres": info["spheres"], "travel_m": args.travel, "step": args.step,
              "ranks": args.ranks, "load_N": info["load"], "seconds": seconds,
              "windows": windows}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "direct_shear.json"), "w") as f:
        json.dump(record, f, indent=1)
    print("| travel [mm] | shear / normal | spread | cap rise [mm] |")
    print("|---|---|---|---|")
    for w in windows:
        print(f"| {w['travel_mm'][0]:.1f}-{w['travel_mm'][1]:.1f} | {w['ratio_mean']:.3f} | "
              f"{w['ratio_std']:.3f} | {w['cap_rise_mm']:+.3f} |")


if __name__ == "__main__":
    main()
