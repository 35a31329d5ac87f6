"""The peer bench's five models in parsolve, through its public API only (`import parsolve`).

    python bench/peers/parsolve_models.py MODEL [--solver gs|newton|springs|rigid] [--quick]
    mpirun -n 2 python bench/peers/parsolve_models.py pour20k

build(name, spec, contacts) -> Model; run(name, spec, solver) -> the runner's record
(bench/peers/models.py), printed as one JSON line by rank 0. The small models are stepped by
Simulation.step() with the state sampled after each step; the pours by
Simulation.run(duration), their spheres gathered at the end. A pour's "solver" names its
contacts: "springs" (the default: the DEM codes' glass as compliant contacts of the spec's
stiffness, laws/coulomb.py) or "rigid"; Gauss-Seidel solves both, ω backed off where it
stalls (adapt=20), its residual taken every spec["check"] sweeps.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import parsolve as ps  # noqa: E402
from peers import models as M  # noqa: E402

SMALL_TOL = 1e-8


def solver_of(name, spec, solver):
    if name in M.POURS:
        return ps.GaussSeidel(tol=spec["tol"], max_iter=spec["max_iter"], omega=spec["omega"],
                              adapt=20, check=spec["check"])
    if solver == "newton":
        return ps.SemismoothNewton(tol=SMALL_TOL)
    return ps.GaussSeidel(tol=SMALL_TOL, max_iter=100000)


def build(name, spec, contacts="springs"):
    """The model `name` (a key of models.MODELS) from its numbers `spec`; a pour's contacts
    "springs" (compliant, the spec's stiffness) or "rigid"."""
    if name == "ball":
        m = ps.Model(gravity=(0.0, 0.0, -M.G))
        m.surface("steel", "steel", friction=spec["friction"], restitution=spec["restitution"])
        m.half_space((0, 0, 0), (0, 0, 1), "steel")
        m.sphere((0, 0, spec["height"]), spec["radius"], "steel", mass=spec["mass"])
        return m
    if name == "spring":
        m = ps.Model(gravity=(0.0, 0.0, 0.0))
        m.surface("steel", "steel", friction=0.0)
        b = m.sphere((spec["x0"], 0, 0), spec["radius"], "steel", mass=spec["mass"])
        k, c, x0 = spec["stiffness"], spec["damping"], spec["x0"]
        # anchored `rest` behind the equilibrium: the spring's stretch d counts from the
        # initial distance, which is x0 longer than the rest length
        m.spring(b, (spec["x0"], 0, 0), None, (-spec["rest"], 0, 0),
                 force=lambda d, v: -k * (d + x0) - c * v, name="spring")
        return m
    if name == "chain":
        m = ps.Model(gravity=(0.0, 0.0, -M.G))
        m.surface("bead", "bead", friction=0.0)
        pivot, _, centres, joints = M.chain_state(spec)
        ids = m.spheres(centres, spec["radius"], "bead", mass=spec["mass"])
        m.fix_point(int(ids[0]), pivot, name="pivot")
        for i in range(1, len(ids)):
            m.fix_point(int(ids[i - 1]), joints[i], other=int(ids[i]), name=f"link {i}")
        return m
    if name in M.POURS:
        m = ps.Model(gravity=(0.0, 0.0, -M.G))
        m.surface("glass", "glass", friction=spec["friction"], restitution=spec["restitution"],
                  stiffness=spec["stiffness"] if contacts == "springs" else 0.0)
        side = spec["side"]
        m.box_walls((0, 0, 0), (side, side, 0.5), material="glass")
        centres, radii, velocities = M.pour_spheres(spec)
        m.spheres(centres, radii, "glass", density=spec["density"], velocities=velocities)
        return m
    raise KeyError(name)


def simulation(name, spec, solver="gs"):
    contacts = "rigid" if solver == "rigid" else "springs"
    return ps.Simulation(build(name, spec, contacts), step=spec["step"],
                         solver=solver_of(name, spec, solver), quiet=True, progress=1e9)


def _pivot_force(sim):
    c = sim.contacts
    rows = np.nonzero((c.k2 == -1) & (c.k1 == 0))[0]
    f = np.einsum("kji,kj->i", c.frame[rows], c.R[rows]) / sim.h
    return float(np.linalg.norm(f))


def run(name, spec, solver="gs"):
    sim = simulation(name, spec, solver)
    nsteps = int(round(spec["duration"] / spec["step"]))
    if name in M.POURS:
        t0, c0 = time.perf_counter(), time.process_time()
        summary = sim.run(spec["duration"])
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        b = sim.bodies
        own = slice(0, b.n_owned)
        rows = sim.comm.gather_rows({"gid": b.gid[own], "x": b.x[own], "r": b.radius[own]})
        out = {"seconds": seconds, "cpu_seconds": cpu, "steps": summary["steps"],
               "simulated": sim.time,
               "unconverged_steps": summary["unconverged_steps"],
               "iterations": summary["iterations"], "ranks": sim.comm.size}
        if rows is not None:                  # in gid order: the same sums at any rank count
            order = np.argsort(rows["gid"])
            out["physics"] = M.pour_physics(spec, rows["x"][order], rows["r"][order])
        return out
    t, sample, extra = [0.0], [], []
    b = sim.bodies
    sample.append(_state(name, b))
    unconverged = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(nsteps):
        row = sim.step()
        unconverged += not row["converged"]
        t.append(sim.time)
        sample.append(_state(name, sim.bodies))
        if name == "chain":
            extra.append(_pivot_force(sim))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": seconds, "cpu_seconds": cpu, "steps": nsteps, "simulated": sim.time,
           "unconverged_steps": unconverged, "ranks": sim.comm.size}
    if name == "ball":
        out["physics"] = M.ball_physics(spec, t, sample)
    elif name == "spring":
        out["physics"] = M.spring_physics(spec, t, sample)
    else:
        out["physics"] = M.chain_physics(spec, t, sample, [extra[0]] + extra)
    return out


def _state(name, b):
    """The sample of one step: the ball's height, the spring's displacement, the chain's
    centre of mass x (one rank: these models are not partitioned)."""
    if name == "ball":
        return float(b.x[0, 2])
    if name == "spring":
        return float(b.x[0, 0])
    return float(b.x[:b.n_owned, 0].mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(M.MODELS))
    ap.add_argument("--solver", default="gs", choices=("gs", "newton", "springs", "rigid"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    spec = M.MODELS[args.model]
    if args.quick:
        spec = M.quick(spec)
    out = run(args.model, spec, args.solver)
    if ps.rank() == 0:
        print(json.dumps(dict(out, version=ps.__version__)), flush=True)


if __name__ == "__main__":
    main()
