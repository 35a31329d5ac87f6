"""A pour's slow Gauss-Seidel steps: what else was tried on them (issue 34, scope 2).

    python bench/bench_stalled.py step [--spheres 500] [--at 450[,500,...]] [--tol 1e-4]
        [--cap 5000] [--long 40000] [--methods gs,anderson,proximal,newton,hybrid]
    python bench/bench_stalled.py pour [--spheres 500] [--steps 600] [--warm copy,world,axis]

step: bench_sweeps' pour (the peer bench's "pour2k" spheres, fewer) run with Gauss-Seidel
at omega 1.5, tol 1e-4, 1,000 sweeps at most (the pour's own solver); the problems of the
steps `--at` are each solved again from their own warm start, to `--tol`, by

    gs         Gauss-Seidel in the colour schedule's order (every run's), omega 1 and 1.5;
    height     Gauss-Seidel in orders no colouring gives: every row by its point's height,
               top down ("down"), bottom up ("up"), the two in turn ("down/up"), and the
               schedule's order forwards and backwards in turn ("symmetric");
    slabs      orders a colouring could give: slabs of cells (side 2.2 or 4.4 mm) by height,
               top down or bottom up, four parity colours within each slab;
    anderson   Anderson acceleration (type II, memory 5 or 10) of the Gauss-Seidel map
               R -> sweep(R) at omega 1;
    proximal   Gauss-Seidel on W + eps I with B - eps C, its centre C moved to R every 10 or
               50 sweeps (eps 1, 0.1 or 0.01 times the mean of W's diagonal), omega 1;
    newton     the semismooth Newton, and the Hybrid with Newton or interior-point stages;
    long       Gauss-Seidel at omega 1 in the schedule's order for `--long` sweeps, whatever
               the residual: the residual and the largest change of a reaction since the
               last mark, at marks 10, 100, 500, 1,000, 2,000, 5,000, 10,000, 20,000, ...

pour: the whole pour with three warm starts of the contacts that persist: "copy" (each
reaction as it was, in the row's local frame: what parsolve does), "world" (carried through
the world frame into the new frame, E_new E_old^T R) and "axis" (frames whose first tangent
comes from one fixed generic axis instead of the world axis least aligned with the normal:
a frame then turns only as its normal does). Both others are patches of this script, not
options of parsolve.

One JSON record per run in bench/results/stalled.json.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parsolve as ps  # noqa: E402
from common import metadata, write  # noqa: E402
from parsolve.solvers.gauss_seidel import NCODES  # noqa: E402
from parsolve.solvers.problem import Problem  # noqa: E402
from peers import models as M  # noqa: E402
from peers.parsolve_models import build  # noqa: E402


def pour(spheres, solver):
    spec = dict(M.MODELS["pour2k"], spheres=spheres)
    return spec, ps.Simulation(build("pour2k", spec, "rigid"), step=spec["step"], solver=solver,
                               quiet=True, progress=1e9, verify_every=0)


def capture(spheres, at):
    """{step: the pour's problem there} for the steps `at`: block-CSR rows, the warm start,
    the rows' points and keys, and what the run's own solve made of it."""
    solver = ps.GaussSeidel(tol=1e-4, max_iter=1000, omega=1.5)
    spec, sim = pour(spheres, solver)
    got, solve = {}, solver.solve

    def keep(problem, R):
        mine = {"R0": R.copy(), "ld": problem.ld, "B": problem.B.copy(),
                "kind": problem.kind.copy(), "param": problem.param.copy()}
        report = solve(problem, R)
        if sim.step_count + 1 in at:
            got[sim.step_count + 1] = dict(mine, sweeps=report.iterations,
                                           residual=report.residual)
        return report

    solver.solve = keep
    for _ in range(max(at)):
        sim.step()
        mine = got.get(sim.step_count)
        if mine is not None:
            c = sim.contacts
            mine.update(rows=mine.pop("ld").rows, point=c.point.copy(), k1=c.k1.copy(),
                        k2=c.k2.copy())
    return got


def orders(got):
    """{name: a function of the sweep's number -> the order of its rows}."""
    n, point, k1, k2 = len(got["B"]), got["point"], got["k1"], got["k2"]
    forward = np.arange(n, dtype=np.int64)
    up = np.argsort(point[:, 2], kind="stable").astype(np.int64)
    down = up[::-1].copy()
    made = {"schedule": lambda k: forward, "down": lambda k: down, "up": lambda k: up,
            "down/up": lambda k: down if k % 2 == 0 else up,
            "symmetric": lambda k: forward if k % 2 == 0 else forward[::-1].copy()}
    for side in (0.0022, 0.0044):
        cell = np.floor(point / side).astype(np.int64)
        parity = (cell[:, 0] & 1) + 2 * (cell[:, 1] & 1)
        for name, z in (("down", -cell[:, 2]), ("up", cell[:, 2])):
            o = np.lexsort((k2, k1, parity, z)).astype(np.int64)
            made[f"slabs {side * 1e3:.1f} mm {name}"] = (lambda o: lambda k: o)(o)
    return made


def problem_of(got, order=None):
    return Problem.rows(*got["rows"], got["B"], got["kind"], got["param"], order)


def gauss_seidel(got, order, omega, tol, cap):
    """Sweeps of the rows in order(k) until the residual reaches tol: (sweeps, residual)."""
    p, R = problem_of(got), got["R0"].copy()
    counts = np.zeros(NCODES, np.int64)
    err, k = p.residual(R), 0
    while err > tol and k < cap:
        p.order = order(k)
        p.sweep(R, counts, omega)
        k += 1
        err = p.residual(R)
    return k, err


def anderson(got, memory, tol, cap):
    """Anderson acceleration (type II) of R -> one sweep at omega 1: (sweeps, residual)."""
    p, x = problem_of(got), got["R0"].copy().ravel()
    counts = np.zeros(NCODES, np.int64)
    G, F = [], []
    for k in range(1, cap + 1):
        g = x.reshape(-1, 3).copy()
        p.sweep(g, counts, 1.0)
        err = p.residual(g)
        if err <= tol:
            return k, err
        g = g.ravel()
        G.append(g)
        F.append(g - x)
        del G[:-memory - 1], F[:-memory - 1]
        if len(F) > 1:
            dF, dG = np.diff(np.array(F), axis=0).T, np.diff(np.array(G), axis=0).T
            A = dF.T @ dF
            A += 1e-12 * np.trace(A) * np.eye(len(A))
            x = g - dG @ np.linalg.solve(A, dF.T @ F[-1])
        else:
            x = g
    return cap, err


def long_run(got, sweeps):
    """[(sweep, residual, largest change of a reaction since the last mark)] of Gauss-Seidel
    at omega 1 in the schedule's order, run for `sweeps` sweeps."""
    p, R = problem_of(got), got["R0"].copy()
    counts = np.zeros(NCODES, np.int64)
    marks = sorted({10, 100, 500, 1000, 2000, 5000, sweeps} | {10000 * 2 ** k for k in range(8)
                                                                 if 10000 * 2 ** k < sweeps})
    out, last = [], R.copy()
    for k in range(1, sweeps + 1):
        p.sweep(R, counts, 1.0)
        if k in marks:
            out.append((k, float(p.residual(R)), float(np.abs(R - last).max())))
            last = R.copy()
    return out


def proximal(got, scale, inner, tol, cap):
    """Gauss-Seidel on the proximal problem U + eps (R - C) (W + eps I, B - eps C, eps =
    scale times the mean of W's diagonal), its centre C moved to R every `inner` sweeps:
    (sweeps, the true residual)."""
    indptr, indices, blocks, diag = got["rows"]
    eps = scale * float(np.mean(np.trace(blocks[diag], axis1=1, axis2=2))) / 3
    shifted = blocks.copy()
    shifted[diag] += eps * np.eye(3)
    p, R = problem_of(got), got["R0"].copy()
    counts = np.zeros(NCODES, np.int64)
    k, err = 0, p.residual(R)
    while err > tol and k < cap:
        near = Problem.rows(indptr, indices, shifted, diag, got["B"] - eps * R, got["kind"],
                            got["param"])
        for _ in range(min(inner, cap - k)):
            near.sweep(R, counts, 1.0)
            k += 1
        err = p.residual(R)
    return k, err


def step(args):
    for at, got in sorted(capture(args.spheres, set(args.at)).items()):
        print(f"step {at}: {len(got['B'])} rows; the run's own solve {got['sweeps']} sweeps "
              f"to {got['residual']:.2e}")
        solve_again(args, at, got)


def solve_again(args, at, got):
    """The methods of the module's docstring on one captured step, one record each."""
    base = {"bench": "stalled", "mode": "step", "spheres": args.spheres, "at": at,
            "rows": len(got["B"]), "tol": args.tol, "cap": args.cap,
            "run_sweeps": got["sweeps"], "run_residual": got["residual"],
            "warm_residual": problem_of(got).residual(got["R0"]), **metadata()}
    methods = []
    for scale, inner in ((1.0, 10), (0.1, 10), (0.01, 10), (0.01, 50)):
        methods.append(("proximal", dict(eps=scale, inner=inner),
                        lambda scale=scale, inner=inner: proximal(got, scale, inner, args.tol,
                                                                  args.cap)))
    for name, order in orders(got).items():
        for omega in (1.0, 1.5):
            methods.append((f"gs {name}", dict(omega=omega),
                            lambda order=order, omega=omega: gauss_seidel(
                                got, order, omega, args.tol, args.cap)))
    for memory in (5, 10):
        methods.append(("anderson", dict(memory=memory),
                        lambda memory=memory: anderson(got, memory, args.tol, args.cap)))
    for name, make in (("newton", lambda: ps.SemismoothNewton(tol=args.tol, max_iter=200)),
                       ("hybrid-newton", lambda: ps.Hybrid(tol=args.tol, max_iter=args.cap)),
                       ("hybrid-ipm", lambda: ps.Hybrid(tol=args.tol, max_iter=args.cap,
                                                        stage="ipm"))):
        def run(make=make):
            R = got["R0"].copy()
            report = make().solve(problem_of(got), R)
            return report.iterations, report.residual
        methods.append((name, {}, run))
    for name, options, run in methods:
        if name.split()[0].split("-")[0] not in args.methods:
            continue
        t0 = time.perf_counter()
        iterations, residual = run()
        seconds = time.perf_counter() - t0
        write("stalled", {**base, "method": name, **options, "iterations": int(iterations),
                          "residual": float(residual), "converged": bool(residual <= args.tol),
                          "seconds": seconds}, echo=False)
        print(f"  {name:26s} {options!s:16s} {iterations:6d} {residual:.2e} {seconds:7.2f} s",
              flush=True)
    if args.long:
        marks = long_run(got, args.long)
        write("stalled", {**base, "method": "long", "marks": marks}, echo=False)
        print("  long: sweeps, residual, largest change of a reaction since the last mark "
              f"(the largest reaction {np.abs(got['R0']).max():.2e})")
        for k, residual, change in marks:
            print(f"  {k:7d} {residual:.3e} {change:.2e}")


def carried(plain):
    """Interactions.warm_start (`plain`) with each reaction carried through the world frame
    into its row's new frame."""
    def warm_start(self, previous):
        if previous is None or not len(previous) or not len(self):
            return plain(self, previous)
        old, new = self.persisting(previous)
        world = np.einsum("kji,kj->ki", previous.frame[old], previous.R[old])
        self.R[new] = np.einsum("kij,kj->ki", self.frame[new], world)
        self.state[new] = previous.state[old]
        return len(new)
    return warm_start


def axis_frames(n):
    """Frames (n, t1, t2) with t1 = n x a / |n x a|, a one fixed generic unit axis."""
    a = np.array([1.0, 1.618033988749895, 2.618033988749895])
    a /= np.linalg.norm(a)
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([n, t1, np.cross(n, t1)], axis=1)


def whole_pour(args):
    from parsolve.tables.interactions import Interactions
    import parsolve.contact  # noqa: F401  (the submodule below, not the function)
    detect = sys.modules["parsolve.contact.detect"]
    plain_warm, plain_frames = Interactions.warm_start, detect.frames_from_normals
    for warm in args.warm.split(","):
        Interactions.warm_start = carried(plain_warm) if warm == "world" else plain_warm
        detect.frames_from_normals = axis_frames if warm == "axis" else plain_frames
        solver = ps.GaussSeidel(tol=1e-4, max_iter=1000, omega=1.5)
        spec, sim = pour(args.spheres, solver)
        sweeps, converged = [], []
        solve = solver.solve

        def count(problem, R):
            report = solve(problem, R)
            sweeps.append(report.iterations)
            converged.append(report.converged)
            return report

        solver.solve = count
        t0 = time.perf_counter()
        for _ in range(args.steps):
            sim.step()
        seconds = time.perf_counter() - t0
        own = slice(0, sim.bodies.n_owned)
        record = {"bench": "stalled", "mode": "pour", "warm": warm, "spheres": args.spheres,
                  "steps": args.steps, "mean_sweeps": float(np.mean(sweeps)),
                  "capped": int(np.sum(~np.array(converged))), "seconds": seconds,
                  "physics": M.pour_physics(spec, sim.bodies.x[own], sim.bodies.radius[own]),
                  **metadata()}
        write("stalled", record, echo=False)
        print(f"{warm:6s} mean sweeps {record['mean_sweeps']:.1f}, capped {record['capped']}"
              f" of {args.steps}, {seconds:.0f} s", flush=True)
    Interactions.warm_start, detect.frames_from_normals = plain_warm, plain_frames


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("step", "pour"))
    ap.add_argument("--spheres", type=int, default=500)
    ap.add_argument("--at", type=lambda a: [int(k) for k in a.split(",")], default=[450])
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--cap", type=int, default=5000)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--long", type=int, default=40000)
    ap.add_argument("--methods", type=lambda a: a.split(","),
                    default=["gs", "anderson", "proximal", "newton", "hybrid"])
    ap.add_argument("--warm", default="copy,world,axis")
    args = ap.parse_args()
    (step if args.mode == "step" else whole_pour)(args)


if __name__ == "__main__":
    main()
