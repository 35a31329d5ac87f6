"""Polyhedra and masonry benches (issue 19), one record each in bench/results/polyhedra.json.

    python bench/bench_polyhedra.py narrow [--pairs 20000]         # vs coal if importable
    [mpirun -n P] python bench/bench_polyhedra.py wall [--courses 100 --per 100 --steps 3]
    [mpirun -n P] python bench/bench_polyhedra.py bridge [--rings 60 --blocks-ring 60 --steps 3]
    python bench/bench_polyhedra.py bed [--spheres 100000 --blocks 100 --repeats 5]

narrow: pairs of 20-face polyhedra (icosahedra, one stretched) at random orientations and
overlaps; pairs and contact points per second of the compiled kernel (and of its Python
twin on a few), against coal's collide + contact patches on the same pairs (coal's
`computeContactPatch`), with the largest difference of depth and normal where both touch.
wall: a running-bond wall of courses x per bricks on a fixed base, seconds per step by phase
(max and mean over ranks) with 50 Gauss-Seidel sweeps per step.
bridge: an arch bridge (model.bridge: a 10 m semicircular barrel vault 6 m wide of 60 rings of
60 voussoirs, spandrel walls of 2 leaves of 0.2 x 0.1 x 0.1 m bricks up to a deck at 6.6 m:
about 10,000 blocks), the same report.
bed: detection (broad and narrow phase, contacts with the floor) of a bed of spheres (two
layers) with large blocks standing on it side by side (pillars 1 x 1 x 5: a block's radius
about 100 times a sphere's at 10^5 spheres and 100 blocks), against the spheres alone, and
with --one-grid also on one grid of the largest body's cells (the broad phase before the
levels: all the spheres in a few cells, O(N^2), out of memory at 10^5 spheres here). The
scenes are built once and detected alternately (A, B, A, B, ...; one warm-up each), so that a
shared machine's drifting load falls on both alike: the median of the rounds' ratios and
their spread (min, max).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve import shapes  # noqa: E402
from parsolve.contact import polyhedra  # noqa: E402
from parsolve.dynamics.rotation import quat_to_matrix  # noqa: E402
from parsolve.shapes import polyhedron  # noqa: E402


def icosahedron(stretch=(1.0, 1.0, 1.0)):
    p = (1 + 5 ** 0.5) / 2
    v = []
    for a in (-1, 1):
        for b in (-p, p):
            v += [(0, a, b), (a, b, 0), (b, 0, a)]
    return np.array(v, float) / np.sqrt(1 + p * p) * stretch


def random_pairs(n, seed=1):
    rng = np.random.default_rng(seed)
    hs = [polyhedron.make("ico", icosahedron())[0],
          polyhedron.make("ico", icosahedron((1.4, 1.0, 0.7)))[0]]
    keys = np.array([shapes.LIBRARY.add(shapes.POLYHEDRON, h.params()) for h in hs])
    t = polyhedra.PACK.index(keys, polyhedron.hull)
    ta, tb = t[rng.integers(0, 2, n)], t[rng.integers(0, 2, n)]
    qa, qb = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
    qa /= np.linalg.norm(qa, axis=1)[:, None]
    qb /= np.linalg.norm(qb, axis=1)[:, None]
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    xa = d * rng.uniform(1.5, 2.0, n)[:, None]            # centres 1.5-2 apart: most touch
    return hs, t, ta, tb, xa, qa, qb


def narrow(args):
    hs, t, ta, tb, xa, qa, qb = random_pairs(args.pairs)
    n = args.pairs
    Ra, Rb, xb = quat_to_matrix(qa), quat_to_matrix(qb), np.zeros((n, 3))
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        c = polyhedra.contacts(ta, xa, Ra, tb, xb, Rb, 0.0)
        best = min(best, time.perf_counter() - t0)
    touching = np.unique(c["pair"])
    m = min(n, 500)
    t0 = time.perf_counter()
    polyhedra.contacts(ta[:m], xa[:m], Ra[:m], tb[:m], xb[:m], Rb[:m], 0.0,
                       kernel=polyhedra.poly_contacts)
    twin = (time.perf_counter() - t0) / m
    rec = dict(bench="narrow", pairs=n, faces=[len(h.faces) for h in hs],
               touching_pairs=int(len(touching)), points=int(len(c["pair"])),
               points_per_touching_pair=len(c["pair"]) / max(len(touching), 1),
               seconds=best, pairs_per_second=n / best, points_per_second=len(c["pair"]) / best,
               twin_pairs_per_second=1.0 / twin)
    rec.update(_coal(hs, t, ta, tb, xa, qa, qb, c))
    common.write("polyhedra", common.metadata(**rec))


def _coal(hs, t, ta, tb, xa, qa, qb, ours):
    """coal's collide with contact patches on the same pairs, and its agreement with ours."""
    try:
        import coal
    except ImportError:
        return {"coal": "not importable"}
    idx = {int(k): i for i, k in enumerate(t)}
    shapes_ = []
    for h in hs:
        pts = coal.StdVec_Vec3s()
        for p in h.vertices:
            pts.append(np.asarray(p, float))
        shapes_.append(coal.Convex.convexHull(pts, False, None))
    n = len(ta)
    tfa = [coal.Transform3s(quat_to_matrix(qa[k:k + 1])[0], xa[k]) for k in range(n)]
    tfb = [coal.Transform3s(quat_to_matrix(qb[k:k + 1])[0], np.zeros(3)) for k in range(n)]
    req = coal.CollisionRequest()
    preq = coal.ContactPatchRequest()
    t0 = time.perf_counter()
    depth, normal, npts = np.full(n, np.nan), np.zeros((n, 3)), 0
    for k in range(n):
        res = coal.CollisionResult()
        if coal.collide(shapes_[idx[int(ta[k])]], tfa[k], shapes_[idx[int(tb[k])]], tfb[k],
                        req, res):
            pres = coal.ContactPatchResult(preq)
            coal.computeContactPatch(shapes_[idx[int(ta[k])]], tfa[k],
                                     shapes_[idx[int(tb[k])]], tfb[k], res, preq, pres)
            for p in range(pres.numContactPatches()):
                npts += pres.getContactPatch(p).size()
            ct = res.getContact(0)
            depth[k], normal[k] = ct.penetration_depth, ct.normal
    sec = time.perf_counter() - t0
    # ours: the pair's deepest point; coal's normal points from the first shape to the second
    mine = np.full(n, np.nan)
    mine_n = np.zeros((n, 3))
    for k in np.unique(ours["pair"]):
        sel = np.flatnonzero(ours["pair"] == k)
        j = sel[np.argmin(ours["gap"][sel])]
        mine[k], mine_n[k] = ours["gap"][j], ours["normal"][j]
    both = np.isfinite(depth) & np.isfinite(mine)
    dd = np.abs(np.abs(depth[both]) - np.abs(mine[both]))
    dn = np.abs(np.abs(np.einsum("ij,ij->i", normal[both], mine_n[both])) - 1)
    return {"coal_seconds": sec, "coal_pairs_per_second": n / sec,
            "depth_difference_p50": float(np.median(dd)),
            "depth_difference_p95": float(np.quantile(dd, 0.95)),
            "same_normal_fraction": float(np.mean(dn < 1e-9)),
            "coal_points_per_second": npts / sec, "coal_touching_pairs": int(np.isfinite(depth).sum()),
            "both_touching": int(both.sum()),
            "depth_difference_max": float(np.abs(np.abs(depth[both]) - np.abs(mine[both])).max()),
            "normal_difference_max": float(np.abs(np.abs(np.einsum(
                "ij,ij->i", normal[both], mine_n[both])) - 1).max())}


def wall(args):
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    lx, ly, lz = 0.2, 0.1, 0.05
    m.half_space((0, 0, 0), (0, 0, 1), "brick")
    m.wall(length=args.per * lx, height=args.courses * lz, brick=(lx, ly, lz),
           material="brick", density=1800, gap=1e-5)
    _phases(args, m, "wall", dict(courses=args.courses, per=args.per))


def bridge(args):
    """An arch bridge (model.bridge): a barrel vault of rings x blocks voussoirs, spandrel
    walls of 2 leaves on both faces; seconds per step by phase like wall."""
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("stone", "stone", friction=0.6, restitution=0.0)
    m.bridge(span=args.span, thickness=0.5, width=args.width, blocks=args.blocks_ring,
             rings=args.rings, deck=args.deck, brick=(0.2, 0.1, 0.1), material="stone",
             density=2000, leaves=2)
    _phases(args, m, "bridge", dict(span=args.span, width=args.width, rings=args.rings,
                                    voussoirs_per_ring=args.blocks_ring, deck=args.deck))


def _phases(args, m, name, extra):
    """Steps of model m: seconds per step, by phase (the Simulation's timers, max over
    ranks and mean over ranks), after one step not counted."""
    from mpi4py import MPI

    from parsolve.run import Simulation

    world = MPI.COMM_WORLD
    t0 = time.perf_counter()
    sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(sweeps=50), progress=0, quiet=True,
                     verify_every=0)
    sim.step()
    first = time.perf_counter() - t0
    phase0 = dict(sim.phase)
    world.Barrier()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        sim.step()
    world.Barrier()
    wall_s = (time.perf_counter() - t0) / args.steps
    mine = {k: (v - phase0[k]) / args.steps for k, v in sim.phase.items()}
    phases = {k: world.allreduce(v, op=MPI.MAX) for k, v in mine.items()}
    mean = {k: world.allreduce(v, op=MPI.SUM) / world.size for k, v in mine.items()}
    contacts = world.allreduce(len(sim.contacts))
    bodies = world.allreduce(int(sim.owned.n_owned))
    owned = world.gather(int(sim.owned.n_owned))
    if world.rank == 0:
        common.write("polyhedra", common.metadata(
            ranks=world.size, bench=name, bodies=bodies, contacts=contacts, steps=args.steps,
            sweeps=50, seconds_per_step=wall_s, phase_seconds_per_step=phases,
            phase_seconds_per_step_mean=mean, bodies_per_rank=owned,
            setup_and_first_step_seconds=first, **extra))


def bed(args):
    from parsolve.contact.detect import detect

    r = 1e-3
    layers = 2
    side = int(np.ceil((args.spheres / layers) ** 0.5))
    k = np.arange(args.spheres)
    x = np.stack([(k % side) * 2.02 * r, ((k // side) % side) * 2.02 * r,
                  (k // side ** 2) * 2.02 * r + r], axis=1)
    top = x[:, 2].max() + r
    span = side * 2.02 * r
    nb = int(np.ceil(args.blocks ** 0.5))
    half = 0.45 * span / nb                                  # pillars side by side, apart
    blocks = [((i + 0.5) * span / nb, (j + 0.5) * span / nb, top + 5 * half - 0.2 * r)
              for i in range(nb) for j in range(nb)][:args.blocks]
    brick = np.array([(a, b, c) for a in (-half, half) for b in (-half, half)
                      for c in (-5 * half, 5 * half)])
    from parsolve.contact import broadphase

    runs = [("spheres_alone", False, 4.0), ("with_blocks", True, 4.0)]
    if args.one_grid:                    # O(N^2) in the big cells: 10^5 spheres fill memory
        runs.append(("with_blocks_one_grid", True, np.inf))
    scenes = {}
    for name, with_blocks, ratio in runs:
        m = ps.Model(gravity=(0, 0, -9.81))
        m.surface("g", "g", friction=0.5)
        m.half_space((0, 0, 0), (0, 0, 1), "g")
        m.spheres(x, r, "g", density=2500)
        if with_blocks:
            m.polyhedra(brick, blocks, "g", density=2500)
        scenes[name] = (m.build(), m.obstacles, ratio)
    mu, e = np.full((1, 1), 0.5), np.zeros((1, 1))

    def once(name):
        bodies, obstacles, ratio = scenes[name]
        broadphase.LEVEL_RATIO = ratio
        t0 = time.perf_counter()
        c = detect(bodies, obstacles, mu, e, 1e-4)
        return time.perf_counter() - t0, len(c)

    for name in scenes:                  # the same warm-up for each
        once(name)
    # interleaved (A, B, A, B, ...): the shared machine's load drifts over both alike
    seconds = {name: [] for name in scenes}
    contacts = {}
    for _ in range(args.repeats):
        for name in scenes:
            s, contacts[name] = once(name)
            seconds[name].append(s)
    broadphase.LEVEL_RATIO = 4.0
    out = {name: {"seconds": seconds[name], "median": float(np.median(seconds[name])),
                  "contacts": contacts[name], "bodies": len(scenes[name][0]),
                  "radius_ratio": float(scenes[name][0].radius.max() /
                                        scenes[name][0].radius.min())} for name in scenes}
    ratios = np.array(seconds["with_blocks"]) / np.array(seconds["spheres_alone"])
    common.write("polyhedra", common.metadata(
        bench="bed", spheres=args.spheres, blocks=args.blocks, repeats=args.repeats, **out,
        ratios=ratios.tolist(), ratio=float(np.median(ratios)),
        ratio_spread=[float(ratios.min()), float(ratios.max())],
        ratio_of_medians=out["with_blocks"]["median"] / out["spheres_alone"]["median"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=("narrow", "wall", "bridge", "bed"))
    ap.add_argument("--span", type=float, default=10.0)
    ap.add_argument("--width", type=float, default=6.0)
    ap.add_argument("--rings", type=int, default=60)
    ap.add_argument("--blocks-ring", type=int, default=60)
    ap.add_argument("--deck", type=float, default=6.6)
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--courses", type=int, default=100)
    ap.add_argument("--per", type=int, default=100)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--spheres", type=int, default=100000)
    ap.add_argument("--blocks", type=int, default=100)
    ap.add_argument("--one-grid", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    {"narrow": narrow, "wall": wall, "bridge": bridge, "bed": bed}[args.which](args)


if __name__ == "__main__":
    main()
