"""Strong and weak scaling of a step on pe's dense bed, with a fixed number of sweeps.

    mpirun -n P python bench/bench_scaling.py --spheres 100000 --steps 3 --sweeps 100

Runs `--settle` unmeasured steps (a repartition by measured load happens at the start of the
second step, if max/avg exceeds `--balance-tolerance`), then `--steps` measured steps of `--sweeps` Gauss-Seidel
sweeps each; rank 0 appends one record to bench/results/scaling.json with the time per step,
the phase split (max over ranks), per-rank min/avg/max of bodies, ghosts, contacts and work
seconds per step (compute, waits excluded: the balance), the
bytes sent per sweep, particle updates per second and contact relaxations per second, and
per-rank min/avg/max of the memory the Domain reports (Domain.memory: bytes of bodies and
ghosts, contacts, exchange lists, the cut tree, and the peak resident size).
"""
import argparse
import os
import sys
import time

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import scenes  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve.run import Simulation  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=100000)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--settle", type=int, default=1)
    ap.add_argument("--sweeps", type=int, default=100)
    ap.add_argument("--kind", default="strong", help="label of the record (strong or weak)")
    ap.add_argument("--balance", default="time", choices=("time", "contacts", "bodies"),
                    help="the load the cuts are balanced by (Simulation's balance)")
    ap.add_argument("--balance-tolerance", type=float, default=1.1,
                    help="repartition when max/avg load exceeds it")
    ap.add_argument("--boulders", type=float, default=0.0,
                    help="this fraction of the bodies `--ratio` times larger (on the bed)")
    ap.add_argument("--ratio", type=float, default=20.0)
    ap.add_argument("--digest", action="store_true",
                    help="record a hash of the final state (gathered on rank 0: O(N), for "
                    "checking that runs on different rank counts agree bit for bit)")
    ap.add_argument("--periodic", action="store_true",
                    help="periodic in x and y over a floor (pe's set-up) instead of walls")
    args = ap.parse_args()
    world = MPI.COMM_WORLD
    model = scenes.hcp_bed(args.spheres, boulders=args.boulders, ratio=args.ratio,
                           periodic=args.periodic)
    sim = Simulation(model, step=1e-5, solver=ps.GaussSeidel(sweeps=args.sweeps),
                     progress=0, quiet=True, verify_every=0, balance=args.balance,
                     balance_tolerance=args.balance_tolerance)
    for _ in range(args.settle):
        sim.step()
    dom = sim.domain
    sent0 = _bytes(dom)
    post0 = dom.post_seconds
    phase0 = dict(sim.phase)
    work0 = dom.work_seconds
    world.Barrier()
    t0 = time.perf_counter()
    rows = [sim.step() for _ in range(args.steps)]
    world.Barrier()
    wall = time.perf_counter() - t0
    phases = {k: world.allreduce(v - phase0[k], op=MPI.MAX) / args.steps
              for k, v in sim.phase.items()}
    memory = dom.memory()
    local = np.array([sim.owned.n_owned, memory["ghosts"], len(sim.contacts),
                      (dom.work_seconds - work0) / args.steps]
                     + [memory[k] for k in MEMORY], float)
    lo, hi, tot = (np.empty(len(local)) for _ in range(3))
    world.Allreduce(local, lo, op=MPI.MIN)
    world.Allreduce(local, hi, op=MPI.MAX)
    world.Allreduce(local, tot, op=MPI.SUM)
    sent = world.allreduce(_bytes(dom) - sent0, op=MPI.SUM) / args.steps / args.sweeps
    # the exchanges' time not spent waiting, per colour exchange (max over ranks; the last
    # step's halo is counted when it is freed)
    dom._complete_sends(free=True)
    post = world.allreduce(dom.post_seconds - post0, op=MPI.MAX) / (
        args.steps * args.sweeps * sim.levels.ncolours)
    digest = _digest(sim, world) if args.digest else None
    if world.rank == 0:
        n, P = args.spheres, world.size
        contacts = rows[-1]["contacts"]
        rec = common.metadata(
            ranks=P, problem="hcp-bed", kind=args.kind, boulders=args.boulders,
            ratio=args.ratio, periodic=args.periodic, bodies=n, contacts=int(contacts),
            bodies_per_rank=n / P, steps=args.steps, sweeps_per_step=args.sweeps,
            seconds_per_step=wall / args.steps,
            seconds_per_step_per_1000_particles_per_process=wall / args.steps / (n / P / 1000),
            particle_updates_per_second=n * args.steps / wall,
            relaxations_per_second=contacts * args.sweeps * args.steps / wall,
            phase_seconds_per_step=phases,
            per_rank={k: {"min": lo[i], "avg": tot[i] / P, "max": hi[i]}
                      for i, k in enumerate(("bodies", "ghosts", "contacts",
                                             "work_seconds_per_step") + MEMORY)},
            bytes_exchanged_per_sweep=sent, repartitions=dom.repartitions,
            partition="rcb", cuts=dom.part.cuts().tolist(),
            balance=args.balance, balance_tolerance=args.balance_tolerance, settle=args.settle,
            colour_loop="python" if os.environ.get("PARSOLVE_COMPILED_HALO") == "0"
            else "compiled", colours=sim.levels.ncolours, state_digest=digest,
            post_seconds_per_colour_exchange=post)
        common.write("scaling", rec)


MEMORY = ("body_bytes", "ghost_bytes", "contact_bytes", "exchange_bytes", "partition_bytes",
          "peak_rss_bytes")


def _digest(sim, world):
    """sha256 of the bodies' (gid, x, q, v, w), sorted by gid, over all ranks."""
    import hashlib

    o = sim.owned
    n = o.n_owned
    parts = world.gather(np.hstack([o.gid[:n, None].astype(float), o.x[:n], o.q[:n],
                                    o.v[:n], o.w[:n]]))
    if world.rank:
        return None
    a = np.concatenate(parts)
    return hashlib.sha256(np.ascontiguousarray(a[np.argsort(a[:, 0])]).tobytes()).hexdigest()


def _bytes(dom):
    return getattr(dom, "bytes_sent", 0)


if __name__ == "__main__":
    main()
