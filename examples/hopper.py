"""A conical hopper read from an STL file discharges glass beads (and clumps of two) onto a
floor, through an outlet a gate closes until `--open` seconds; the mass that has left is
recorded and set against Beverloo's correlation at the end.

    parsolve run examples/hopper.py --output out/hopper.h5
    mpirun -n 2 parsolve run examples/hopper.py -- --beads 3000 --duration 1.5

The hopper is written first as a binary STL in millimetres (out/hopper.stl, as a CAD program
writes one) and read back with model.mesh(..., units="mm"): a 24-sided cone, 60 degrees from
the horizontal, from a 40 mm outlet to 160 mm across, under a bin. The gate is a fixed box
that model.move slides away at --open; ParaView draws the hopper (its triangles), the gate at
its place in each frame, the beads and the clumps' spheres (hopper.xdmf).
"""
import argparse
import math
import os

import numpy as np

import parsolve as ps
from parsolve.io.meshfile import write_stl
from parsolve.shapes import compound
from parsolve.shapes.mesh import hopper_surface

R = 0.004                                  # bead radius [m]
OUTLET, WIDTH, RISE, BIN = 0.040, 0.160, 0.104, 0.12     # [m]
RHO, MU = 2500.0, 0.4


def build(beads, clumps, stl, seed=35):
    """The model: the hopper from `stl`, a floor 0.1 m below the outlet, the gate, beads and
    clumps on a jittered lattice in the bin; returns (model, ids of all grains)."""
    m = ps.Model()
    m.surface("glass", "glass", friction=MU, restitution=0.3)
    m.surface("glass", "steel", friction=0.3, restitution=0.3)
    m.mesh(stl, "steel", units="mm", name="hopper")
    m.half_space((0, 0, -0.1), (0, 0, 1), "steel", name="floor")
    m.box((0, 0, -0.005), (0.04, 0.04, 0.005), "steel", fixed=True, name="gate")
    spacing = 2.4 * R
    g = np.arange(-0.07 + spacing, 0.07 - spacing, spacing)
    sites = np.stack(np.meshgrid(g, g, np.arange(RISE * 0.6, 1.0, spacing), indexing="ij"),
                     -1).reshape(-1, 3)
    half = 0.5 * OUTLET + (0.5 * WIDTH - 0.5 * OUTLET) * np.minimum(sites[:, 2] / RISE, 1)
    sites = sites[np.hypot(sites[:, 0], sites[:, 1]) < half - 2 * R]
    sites = sites[np.lexsort((sites[:, 1], sites[:, 0], sites[:, 2]))][:beads + clumps]
    rng = np.random.default_rng(seed)
    sites += rng.uniform(-0.1, 0.1, sites.shape) * R
    two = [compound.sphere((-0.45 * R, 0, 0), 0.8 * R), compound.sphere((0.45 * R, 0, 0),
                                                                        0.8 * R)]
    ids = list(m.spheres(sites[:beads], R, "glass", density=RHO))
    if clumps:
        turns = [((0, 0, 1), a) for a in rng.uniform(0, math.pi, clumps)]
        ids += list(m.compounds(two, sites[beads:], "glass", orientations=turns,
                                density=RHO))
    return m, np.array(ids)


def beverloo(rho_bulk, d, C=0.58, k=1.5, D=OUTLET):
    """Beverloo's mass flow rate [kg/s] through a round outlet D of grains of diameter d."""
    return C * rho_bulk * math.sqrt(9.81) * (D - k * d) ** 2.5


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--beads", type=int, default=1200)
    ap.add_argument("--clumps", type=int, default=200)
    ap.add_argument("--duration", type=float, default=0.8)
    ap.add_argument("--open", type=float, default=0.3)
    ap.add_argument("--step", type=float, default=4e-4)
    ap.add_argument("--output", default="out/hopper.h5")
    args = ap.parse_args()

    os.makedirs("out", exist_ok=True)
    stl = "out/hopper.stl"                                   # millimetres, as from CAD
    V, T = hopper_surface(1e3 * OUTLET, 1e3 * WIDTH, 1e3 * RISE, 1e3 * BIN, n=3, sides=24)
    write_stl(f"{stl}.{ps.rank()}.tmp", V, T)                # every rank the same file,
    os.replace(f"{stl}.{ps.rank()}.tmp", stl)                # each complete when renamed
    model, ids = build(args.beads, args.clumps, stl)
    model.move("gate", ([args.open, args.open + 0.02], [[0, 0, 0], [0.1, 0, 0]]))
    model.sensor("out", bodies=ids, quantities={"below": lambda s: s["x"][:, 2] < -0.01},
                 every=10)
    sim = ps.Simulation(model, step=args.step, solver=ps.GaussSeidel(tol=1e-4, max_iter=500),
                        output=args.output, frames=0.05, progress=5.0)
    sim.run(args.duration)
    if ps.rank() == 0 and sim.results:
        from parsolve.io.hdf5 import h5py_module

        with h5py_module().File(sim.results, "r") as f:
            t = f["sensors/out/time"][()]
            out = f["sensors/out/below"][()][:, :, 0].sum(axis=1)
        grain = RHO * 4 / 3 * math.pi * R ** 3
        flowing = t > args.open + 0.15
        if flowing.sum() > 2:
            rate = np.polyfit(t[flowing], out[flowing] * grain, 1)[0]
            print(f"[hopper] mass flow {rate:.4g} kg/s; Beverloo (C 0.58, k 1.5, bulk "
                  f"density 0.6 x {RHO:g}) {beverloo(0.6 * RHO, 2 * R):.4g} kg/s")
