"""A rotating drum: glass beads in a drum turning about its horizontal axis (x) at --omega
rad/s; the free surface settles at a dynamic angle of repose, printed at the end.

    parsolve run examples/drum.py --output out/drum.h5
    parsolve run examples/drum.py -- --omega 4 --duration 3

The drum is a closed cylinder mesh (48 staves and two end caps, normals inwards) turned by
model.move(angle=omega t, rate=omega): its contacts are rheonomic rows, the wall's velocity
omega x r at each contact point, and its work enters the energy balance. --kinematic builds
the same drum instead as one compound body of 50 convex blocks (the staves and the caps)
driven by model.kinematic: the same physics through body-body contacts, which the bench
compares (bench/bench_hopper.py drum).
"""
import argparse
import math

import numpy as np

import parsolve as ps
from parsolve.shapes import compound
from parsolve.shapes.mesh import TriangleMesh, cylinder_surface, place

R_DRUM, LENGTH, SIDES = 0.08, 0.03, 48      # [m]
R = 0.0025                                   # bead radius [m]


def build(beads, omega, kinematic=False, seed=3):
    """The drum turning at omega about x through the origin, `beads` beads on a jittered
    lattice in its lower part; returns the model."""
    m = ps.Model()
    m.surface("glass", "glass", friction=0.5, restitution=0.2)
    m.surface("glass", "steel", friction=0.5, restitution=0.2)
    turn = ((0, 1, 0), math.pi / 2)                        # the cylinder's z to x
    if kinematic:
        a = 2 * math.pi * np.arange(SIDES) / SIDES
        c, s = np.cos(a), np.sin(a)
        parts = []
        for k in range(SIDES):                             # staves 5 mm thick
            k1 = (k + 1) % SIDES
            ring = [(R_DRUM * c[j] * f, R_DRUM * s[j] * f) for j in (k, k1) for f in (1, 1.06)]
            parts.append(compound.block([(x, y, z) for x, y in ring
                                         for z in (-0.005, LENGTH + 0.005)]))
        for z0, z1 in ((-0.005, 0.0), (LENGTH, LENGTH + 0.005)):
            parts.append(compound.block([(R_DRUM * ci, R_DRUM * si, z) for ci, si in zip(c, s)
                                         for z in (z0, z1)]))
        body = m.compound(parts, "steel", density=7800, orientation=turn,
                          position=(-LENGTH / 2, 0, 0))
        m.kinematic(body, angular_velocity=(omega, 0, 0))
    else:
        V, T = cylinder_surface(R_DRUM, LENGTH, SIDES, 1)
        from parsolve.dynamics.rotation import axis_angle_to_quat

        V = place("drum", V, rotation=axis_angle_to_quat(*turn), translation=(-LENGTH / 2, 0, 0))
        m.mesh(TriangleMesh(V, T, inside=True), "steel", name="drum")
        m.move("drum", angle=lambda t: omega * t, rate=lambda t: omega, axis=(1, 0, 0),
               centre=(0, 0, 0))
    spacing = 2.3 * R
    g = np.arange(-R_DRUM, R_DRUM, spacing)
    sites = np.stack(np.meshgrid(np.arange(-LENGTH / 2 + 1.2 * R, LENGTH / 2 - R, spacing),
                                 g, g, indexing="ij"), -1).reshape(-1, 3)
    sites = sites[np.hypot(sites[:, 1], sites[:, 2]) < R_DRUM * math.cos(math.pi / SIDES)
                  - 1.5 * R]
    sites = sites[np.lexsort((sites[:, 1], sites[:, 0], sites[:, 2]))][:beads]
    rng = np.random.default_rng(seed)
    m.spheres(sites + rng.uniform(-0.1, 0.1, sites.shape) * R, R, "glass", density=2500)
    return m


def surface_angle(x, radius=R):
    """The free surface's angle [degrees] from the horizontal in the drum's cross-section
    (y, z): the highest bead in each of 12 slices across the middle 70 % of the bed's
    width, a least-squares line through their tops."""
    y, z = x[:, 1], x[:, 2]
    lo, hi = np.quantile(y, 0.15), np.quantile(y, 0.85)
    edges = np.linspace(lo, hi, 13)
    tops = [(0.5 * (a + b), z[(y >= a) & (y < b)].max() + radius)
            for a, b in zip(edges[:-1], edges[1:]) if ((y >= a) & (y < b)).any()]
    yy, zz = np.array(tops).T
    return math.degrees(math.atan(abs(np.polyfit(yy, zz, 1)[0])))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--beads", type=int, default=1000)
    ap.add_argument("--omega", type=float, default=2.0)
    ap.add_argument("--duration", type=float, default=1.5)
    ap.add_argument("--step", type=float, default=4e-4)
    ap.add_argument("--kinematic", action="store_true")
    ap.add_argument("--output", default="out/drum.h5")
    args = ap.parse_args()

    model = build(args.beads, args.omega, args.kinematic)
    sim = ps.Simulation(model, step=args.step, solver=ps.GaussSeidel(tol=1e-4, max_iter=300),
                        output=args.output, frames=0.05, progress=5.0)
    sim.run(args.duration)
    x = sim.comm.gather_rows({"x": sim.owned.x[:sim.owned.n_owned][sim.owned.shape[
        :sim.owned.n_owned] == 0]})
    if x is not None:
        print(f"[drum] omega {args.omega:g} rad/s, Froude {args.omega ** 2 * R_DRUM / 9.81:.3g}:"
              f" free surface at {surface_angle(x['x']):.1f} degrees")
