"""Newton's linear algebra on rank 0 in the rows' canonical order (issue 38): a masonry wall
settling under the Hybrid and the interior point on P ranks, with W R and the linear solves
rank 0's (the default up to 30,000 unknowns) and with W and J left over the ranks (gather=0:
PETSc's MatMult and MUMPS over the ranks, as before), against the serial run: how many of the
bricks' final values (x, q, v, w) differ and the run's seconds. One record per (solver, mode)
in bench/results/canonical.json.

    [mpirun -n P] python bench/bench_canonical.py [--per 4 --courses 6] [--steps 100]
                                                  [--solvers hybrid ipm] [--rounds 2]

The default wall is 27 bricks (six courses of four and five) of 0.2 x 0.1 x 0.05 m in running
bond, 1e-4 m apart in height, on a fixed slab; --per 10 --courses 20 is the 210-brick wall of
tests/mpi/test_polyhedra.py. Both modes run alternately (rounds), so a shared machine's load
falls on both alike; a run's seconds are the slowest rank's, the fastest round kept. The serial
reference runs on rank 0 alone, before the rounds.
"""
import argparse
import os
import sys
import time

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve.parallel import Comm  # noqa: E402
from parsolve.run.simulation import Simulation  # noqa: E402

WORLD = MPI.COMM_WORLD
H = 1e-3
SOLVERS = {"hybrid": lambda **kw: ps.Hybrid(tol=1e-8, **kw),          # the README's masonry
           "ipm": lambda **kw: ps.InteriorPoint(tol=1e-8, **kw)}


def wall(per, courses):
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    x1 = 0.2 * per + 0.3
    slab = np.array([(x, y, z) for x in (-0.3, x1) for y in (-0.2, 0.3) for z in (-0.1, 0.0)])
    m.polyhedron(slab, "brick", fixed=True, name="base")
    m.wall(length=0.2 * per, height=0.05 * courses, brick=(0.2, 0.1, 0.05), material="brick",
           density=1800, gap=1e-4)
    return m


def run(comm, solver, a):
    sim = Simulation(wall(a.per, a.courses), step=H, solver=solver, progress=0, quiet=True,
                     comm=comm)
    comm.barrier()
    t0 = time.perf_counter()
    sim.run(a.steps * H)
    seconds = comm.max(time.perf_counter() - t0)
    o = sim.owned
    n = o.n_owned
    parts = comm.gather_rows({"gid": o.gid[:n], "s": np.hstack([o.x, o.q, o.v, o.w])[:n]})
    state = parts["s"][np.argsort(parts["gid"])] if comm.root else None
    history = [(r["iterations"], r["residual"]) for r in sim.history]
    return {"seconds": seconds, "state": state, "history": history,
            "contacts": int(sim.history[-1]["contacts"]),
            "converged": sum(bool(r["converged"]) for r in sim.history),
            "iterations": sum(int(r["iterations"]) for r in sim.history),
            "ksp_iterations": sum(int(r["ksp_iterations"]) for r in sim.history)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--per", type=int, default=4)
    p.add_argument("--courses", type=int, default=6)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    comm = Comm(WORLD)
    from parsolve.platform import petsc  # noqa: F401  PETSc starts on every rank at once
    for name in a.solvers:
        serial = run(Comm(MPI.COMM_SELF), SOLVERS[name](), a) if comm.root else None
        comm.barrier()
        modes = {"rank 0": {}, "distributed": {"gather": 0}} if comm.size > 1 else {"serial": {}}
        best = {}
        for _ in range(a.rounds):
            for mode, kw in modes.items():
                got = run(comm, SOLVERS[name](**kw), a)
                if mode not in best or got["seconds"] < best[mode]["seconds"]:
                    best[mode] = got
        if not comm.root:
            continue
        for mode, got in best.items():
            record = common.metadata(ranks=comm.size, bench="canonical", solver=name,
                                     mode=mode, bricks=int(len(serial["state"])),
                                     steps=a.steps, contacts=got["contacts"],
                                     seconds=got["seconds"], serial_seconds=serial["seconds"],
                                     values=int(serial["state"].size),
                                     differ=int((got["state"] != serial["state"]).sum()),
                                     history_equal=got["history"] == serial["history"],
                                     converged=got["converged"], iterations=got["iterations"],
                                     ksp_iterations=got["ksp_iterations"])
            common.write("canonical", record, echo=False)
            print(f"{name:7s} P={comm.size} {mode:12s} {record['bricks']} bricks "
                  f"{record['contacts']} contacts: {record['seconds']:.2f} s "
                  f"(serial {record['serial_seconds']:.2f} s), {record['differ']} of "
                  f"{record['values']} values differ, history equal: "
                  f"{record['history_equal']}", flush=True)


if __name__ == "__main__":
    main()
