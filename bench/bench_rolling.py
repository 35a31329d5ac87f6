"""Rolling resistance (issue 36): the sweep with a rolling row beside every contact against
contacts alone, and the angle of repose of a collapsed column of spheres against mu_r.

    python bench/bench_rolling.py sweep [--spheres 20000] [--sweeps 50]
    python bench/bench_rolling.py repose [--spheres 300] [--rolling 0 0.1 0.3] [--duration 1.5]

sweep: one step of the dense HCP bed of bench_gs.py (pe's), assembled twice, once with every
contact's rolling row (rolling = 0.1 r, spinning = 0.05 r) and once without; the same fixed
number of body-coupled sweeps from R = 0 on each, alternately, best of three: seconds per
sweep, relaxations per core-second, their ratios; and the rolling rows relaxed under a
near-free law (the floor of a separate row's cost). Writes bench/results/rolling.json.

repose: spheres (r = 5 mm) rained onto a floor from a cylinder of radius 7 r; once at rest
(kinetic energy below 1e-7 J, or at the duration), the pile's angle (`angle`); the rolling
coefficients given as fractions of r. Writes bench/results/repose.json.
"""
import argparse
import copy
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


def one_step(spheres, rolling):
    """LocalDynamics of the HCP bed's first step, with rolling rows when rolling > 0."""
    r = 1e-3
    model = scenes.hcp_bed(spheres, r=r)
    if rolling:
        for b in ("grain", "wall"):
            model.surface("grain", b, friction=0.85, rolling=rolling * r,
                          spinning=0.5 * rolling * r)
    sim = Simulation(model, step=1e-5, solver=ps.GaussSeidel(sweeps=1), progress=0,
                     quiet=True, verify_every=0)
    box = {}
    sim.local_dynamics_hook = lambda s, ld: box.update(ld=ld)
    sim.step()
    return box["ld"]


def sweeps(ld, count):
    R, du = np.zeros((ld.n, 3)), np.zeros((ld.nbodies, 6))
    counts = np.zeros(laws.NCODES, np.int64)
    order = np.arange(ld.n, dtype=np.int64)
    t0 = time.perf_counter()
    for _ in range(count):
        kernels.body_gauss_seidel_sweep(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, ld.B,
                                        ld.kind, ld.param, R, du, order, 1.0, counts)
    return (time.perf_counter() - t0) / count


def sweep(args):
    """The three sweeps, alternately: contacts alone, with their rolling rows, and with those
    rows under a near-free law instead ("floor": the bilateral law on one component, a
    division; the rows' H, K and W unchanged): what a separate row costs whatever its local
    solve."""
    lds = {"contacts": one_step(args.spheres, 0.0), "rolling": one_step(args.spheres, 0.1)}
    floor = copy.copy(lds["rolling"])
    companion = floor.kind == laws.rolling.KIND
    floor.kind = np.where(companion, np.int8(laws.bilateral.KIND), floor.kind)
    floor.param = floor.param.copy()
    floor.param[companion, 0] = 1.0                     # one component: a division
    lds["floor"] = floor
    best = {name: np.inf for name in lds}
    for _ in range(3):                                  # alternate: the machine is shared
        for name, ld in lds.items():
            best[name] = min(best[name], sweeps(ld, args.sweeps))
    contacts = int((lds["contacts"].kind == laws.coulomb.KIND).sum())
    rows = {name: int(ld.n) for name, ld in lds.items()}
    rate = {name: rows[name] / best[name] for name in lds}
    common.write("rolling", common.metadata(
        problem="hcp-bed", bodies=args.spheres, contacts=contacts, rows=rows,
        sweeps=args.sweeps, seconds_per_sweep=best, relaxations_per_core_second=rate,
        ratio_sweep_seconds=best["rolling"] / best["contacts"],
        ratio_relaxation_rate=rate["rolling"] / rate["contacts"],
        ratio_floor_sweep_seconds=best["floor"] / best["contacts"]))


def heap(n, rolling, r=0.005, seed=3):
    """n spheres (radii 0.9 r to r) rained from a loose jittered lattice inside a cylinder of
    radius 7 r onto a floor, with rolling resistance rolling * r on every contact (spinning
    half of it), friction 0.5 (floor 0.8)."""
    rng = np.random.default_rng(seed)
    g = np.arange(-3, 4) * 2.4 * r
    ring = np.array([(x, y) for x in g for y in g if np.hypot(x, y) <= 7 * r])
    k = np.arange(n)
    x = np.column_stack([ring[k % len(ring)], r + 2.4 * r * (k // len(ring))])
    x += rng.uniform(-0.3, 0.3, x.shape) * r
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    for b in ("g", "floor"):
        model.surface("g", b, friction=0.5 if b == "g" else 0.8, restitution=0.0,
                      rolling=rolling * r, spinning=0.5 * rolling * r)
    model.half_space((0, 0, 0), (0, 0, 1), "floor")
    model.spheres(x, r * rng.uniform(0.9, 1.0, n), "g", density=2500.0)
    return model


def angle(x, r):
    """The pile's angle [deg]: the highest sphere centre per ring of radial distance (rings
    of one diameter), fitted by least squares over the rings from the second to the last
    whose top lies above 2.5 r (the heap, not the grains spread on the floor around it)."""
    rad = np.hypot(x[:, 0], x[:, 1])
    rings = np.floor(rad / (2 * r)).astype(int)
    top = np.array([(ring, x[rings == ring, 2].max()) for ring in np.unique(rings)])
    heap = top[(top[:, 0] >= 1) & (top[:, 1] > 2.5 * r)]
    if len(heap) < 2:
        return 0.0
    slope = np.polyfit(2 * r * (heap[:, 0] + 0.5), heap[:, 1], 1)[0]
    return float(np.degrees(np.arctan(-slope)))


def repose(args):
    r = 0.005
    out = {}
    for rolling in args.rolling:
        sim = Simulation(heap(args.spheres, rolling, r), step=5e-4,
                         solver=ps.GaussSeidel(tol=1e-5, max_iter=300), progress=0,
                         quiet=True, verify_every=0)
        t0 = time.perf_counter()
        while sim.time < args.duration:
            row = sim.step()
            if sim.time > args.settle and row["kinetic_energy"] < 1e-7:
                break
        out[rolling] = {"angle_deg": angle(sim.owned.x, r), "settled_at": sim.time,
                        "kinetic_energy": row["kinetic_energy"],
                        "seconds": time.perf_counter() - t0}
        print(f"rolling {rolling} r: angle {out[rolling]['angle_deg']:.1f} deg "
              f"(at t = {sim.time:.3g} s, {out[rolling]['seconds']:.0f} s)", flush=True)
    angles = [out[k]["angle_deg"] for k in args.rolling]
    common.write("repose", common.metadata(
        spheres=args.spheres, radius=r, rolling_over_r=args.rolling, results=out,
        monotone=bool(np.all(np.diff(angles) > 0))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", choices=("sweep", "repose"))
    ap.add_argument("--spheres", type=int, default=None)
    ap.add_argument("--sweeps", type=int, default=50)
    ap.add_argument("--rolling", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    ap.add_argument("--duration", type=float, default=1.5)
    ap.add_argument("--settle", type=float, default=0.5)
    args = ap.parse_args()
    if args.which == "sweep":
        args.spheres = args.spheres or 20000
        sweep(args)
    else:
        args.spheres = args.spheres or 300
        repose(args)


if __name__ == "__main__":
    main()
