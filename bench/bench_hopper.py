"""Mesh walls and turning obstacles in full runs (issue 35), one record each in
bench/results/hopper.json.

    python bench/bench_hopper.py [all]                  # each of the below, in turn
    python bench/bench_hopper.py detect [--spheres 100000 --triangles 10000 --rounds 3]
    python bench/bench_hopper.py silo [--grains 3000 --outlets 0.020 0.028]
    python bench/bench_hopper.py drum [--beads 1000 --omegas 1 3 --duration 1.5]

detect: a bed of `spheres` spheres on a lattice inside a square hopper (bench_mesh.py's: a
frustum under a bin, closed by a floor), its walls cut into about `triangles` triangles,
written to a binary STL and read back by model.mesh; the same bed between the hopper's nine
half-spaces. Both runs step in turn (a few steps of each, `rounds` times: a shared machine's
load falls on both alike) and the detection phase of each step (the history's t_detect: the
broad phase, the pair functions, the mesh's or the planes', the rows' ownership and warm
start) is compared: the median ratio mesh / half-spaces and its spread.
silo: a flat-bottomed silo (an STL: a 32-sided bin on a floor with a round outlet in it)
filled with `grains` glass beads behind a gate, which slides away once they have settled;
the mass that has left against time, its steady slope against Beverloo's correlation
W = C rho_b sqrt(g) (D - k d)^(5/2), C = 0.58 and k = 1.5 (Beverloo, Leniger and van de
Velde 1961; Nedderman's Statics and Kinematics of Granular Materials, ch. 10: C 0.55-0.65,
k 1.3-1.5 for spheres), rho_b the bed's bulk density measured before the gate opens.
drum: examples/drum.py's drum (r = 80 mm, 30 mm long) with `beads` beads at each speed:
the free surface's angle after `duration` seconds, and seconds per step; at the last speed
also the drum built as a kinematic compound body of 50 blocks instead of a turning mesh.
"""
import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import common  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve.io import meshfile  # noqa: E402
from parsolve.run import Simulation  # noqa: E402


def detect(args):
    from bench_mesh import hopper_surface as square_hopper

    V, T, planes = square_hopper(args.triangles)
    n = args.spheres
    r = 0.5 * (0.3 / n) ** (1 / 3)                      # a lattice of n in the lower part
    P = np.array([p for p, _ in planes], float)
    Nn = np.array([q for _, q in planes], float)
    g = np.arange(-0.5 + 1.2 * r, 0.5, 2.2 * r)
    x = np.stack(np.meshgrid(g, g, np.arange(1.2 * r, 1.0, 2.2 * r), indexing="ij"),
                 -1).reshape(-1, 3)
    h = np.einsum("kj,nj->nk", Nn, x) - np.einsum("kj,kj->k", Nn, P)
    x = x[(h >= 1.05 * r).all(axis=1)]
    x = x[np.argsort(x[:, 2], kind="stable")][:n]
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "hopper.stl")
        meshfile.write_stl(path, V, T)

        def model(walls):
            m = ps.Model()
            m.surface("g", "g", friction=0.5)
            if walls == "mesh":
                from parsolve.shapes.mesh import TriangleMesh

                mesh = TriangleMesh.read(path, repair="orientation", sides=1)
                if np.einsum("ij,ij->", mesh.normals, (0.0, 0.0, 0.5) - mesh.centroids) < 0:
                    mesh = TriangleMesh(mesh.vertices, mesh.triangles[:, ::-1], sides=1)
                m.mesh(mesh, "g", name="hopper")
            else:
                for k, (p, q) in enumerate(planes):
                    m.half_space(p, q, "g", name=f"wall {k}")
            m.spheres(x, r, "g", density=2500, velocities=rng.normal(0, 0.05, (len(x), 3)))
            return m

        sims, built = {}, {}
        for walls in ("mesh", "planes"):
            t = time.perf_counter()
            sims[walls] = Simulation(model(walls), step=1e-4, solver=ps.GaussSeidel(sweeps=5),
                                     progress=0, quiet=True, verify_every=0, guards="off")
            built[walls] = time.perf_counter() - t
    times = {"mesh": [], "planes": []}
    rows = {}
    for _ in range(args.rounds):
        for walls in ("mesh", "planes"):
            for _ in range(args.steps):
                rows[walls] = sims[walls].step()
                times[walls].append(rows[walls]["t_detect"])
    ratio = np.array(times["mesh"]) / np.array(times["planes"])
    walls_mesh = int((sims["mesh"].contacts.b < 0).sum())
    walls_planes = int((sims["planes"].contacts.b < 0).sum())
    common.write("hopper", {
        "bench": "detect", "spheres": len(x), "triangles": len(T), "steps": args.steps,
        "rounds": args.rounds, "contacts_mesh": rows["mesh"]["contacts"],
        "contacts_planes": rows["planes"]["contacts"], "wall_contacts_mesh": walls_mesh,
        "wall_contacts_planes": walls_planes,
        "t_detect_mesh": float(np.median(times["mesh"])),
        "t_detect_planes": float(np.median(times["planes"])),
        "ratio_median": float(np.median(ratio)), "ratio_min": float(ratio.min()),
        "ratio_max": float(ratio.max()), "setup_mesh_s": built["mesh"],
        "setup_planes_s": built["planes"], **common.metadata()})


def silo(args):
    from parsolve.shapes.mesh import hopper_surface

    r, width, rho, h = 0.002, 0.07, 2500.0, 3e-4
    grain = rho * 4 / 3 * math.pi * r ** 3
    for D in args.outlets:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "silo.stl")
            V, T = hopper_surface(1e3 * D, 1e3 * width, 0.0, 250.0, n=3, sides=32)
            meshfile.write_stl(path, V, T)                  # millimetres
            m = ps.Model()
            m.surface("g", "g", friction=0.5, restitution=0.1)
            m.surface("g", "steel", friction=0.5, restitution=0.1)
            m.mesh(path, "steel", units="mm", name="silo")
        m.box((0, 0, -0.003), (0.5 * D + 0.01, 0.5 * D + 0.01, 0.003), "steel", fixed=True,
              name="gate")
        spacing = 2.25 * r
        g = np.arange(-0.5 * width + 1.2 * r, 0.5 * width, spacing)
        x = np.stack(np.meshgrid(g, g, np.arange(1.2 * r, 0.3, spacing), indexing="ij"),
                     -1).reshape(-1, 3)
        x = x[np.hypot(x[:, 0], x[:, 1]) < 0.5 * width * math.cos(math.pi / 32) - 1.1 * r]
        x = x[np.lexsort((x[:, 1], x[:, 0], x[:, 2]))][:args.grains]
        rng = np.random.default_rng(7)
        x += rng.uniform(-0.05, 0.05, x.shape) * r
        ids = m.spheres(x, r * rng.uniform(0.95, 1.0, len(x)), "g", density=rho)
        settle = args.settle
        m.move("gate", ([settle, settle + 0.01], [[0, 0, 0], [0.06, 0, 0]]))
        sim = Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-3, max_iter=200),
                         progress=0, quiet=True, verify_every=0)
        t0 = time.perf_counter()
        while sim.time < settle - 1e-9:
            sim.step()
        z = sim.owned.x[:, 2]
        top = np.quantile(z, 0.98) + r                           # the bed's level
        area = math.pi * (0.5 * width) ** 2 * (32 / math.pi) * math.tan(math.pi / 32)
        rho_b = grain * len(ids) / (area * top)
        out_t, out_m = [], []
        while sim.time < settle + args.flow - 1e-9:
            sim.step()
            out_t.append(sim.time)
            out_m.append(grain * int((sim.owned.x[:, 2] < -0.01).sum()))
        seconds = time.perf_counter() - t0
        t, mass = np.array(out_t), np.array(out_m)
        steady = t > settle + 0.1
        rate = float(np.polyfit(t[steady], mass[steady], 1)[0])
        bev = 0.58 * rho_b * math.sqrt(9.81) * (D - 1.5 * 2 * r) ** 2.5
        common.write("hopper", {
            "bench": "silo", "grains": len(ids), "d": 2 * r, "D": D, "D_over_d": D / (2 * r),
            "silo_width": width, "bed_height": float(top), "bulk_density": rho_b,
            "step": h, "settle_s": settle, "flow_s": args.flow, "mass_flow": rate,
            "beverloo": bev, "ratio": rate / bev, "left": int(mass[-1] / grain),
            "wall_seconds": seconds, **common.metadata()})


def drum(args):
    import drum as example

    for omega in args.omegas:
        variants = [False, True] if omega == args.omegas[-1] else [False]
        for kinematic in variants:
            m = example.build(args.beads, omega, kinematic=kinematic)
            sim = Simulation(m, step=4e-4, solver=ps.GaussSeidel(tol=1e-4, max_iter=300),
                             progress=0, quiet=True, verify_every=0)
            t0 = time.perf_counter()
            sim.run(args.duration)
            seconds = time.perf_counter() - t0
            beads = sim.owned.shape == 0
            h = [r["energy_error"] for r in sim.history]
            common.write("hopper", {
                "bench": "drum", "drum": "kinematic compound" if kinematic else "turning mesh",
                "beads": int(beads.sum()), "omega": omega,
                "froude": omega ** 2 * example.R_DRUM / 9.81, "duration": args.duration,
                "angle_deg": example.surface_angle(sim.owned.x[beads]),
                "seconds_per_step": seconds / sim.step_count,
                "t_detect": sim.phase["detect"] / sim.step_count,
                "energy_error_max": float(np.abs(h).max()), **common.metadata()})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("part", nargs="?", default="all", choices=["all", "detect", "silo", "drum"])
    ap.add_argument("--spheres", type=int, default=100_000)
    ap.add_argument("--triangles", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--grains", type=int, default=3000)
    ap.add_argument("--outlets", type=float, nargs="+", default=[0.020, 0.028])
    ap.add_argument("--settle", type=float, default=0.15)
    ap.add_argument("--flow", type=float, default=0.4)
    ap.add_argument("--beads", type=int, default=1000)
    ap.add_argument("--omegas", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--duration", type=float, default=1.5)
    args = ap.parse_args()
    for part in (("detect", "silo", "drum") if args.part == "all" else (args.part,)):
        globals()[part](args)


if __name__ == "__main__":
    main()
