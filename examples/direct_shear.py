"""A direct shear test (Casagrande's shear box) of frictional spheres: the laboratory's measure
of a granular material's friction angle.

A box split at mid-height holds a layer of polydisperse spheres (mu = 0.5 between them, no
gravity: the layer is confined by its load only). The lower half is fixed; the upper frame
(four walls, frictionless) is driven along x at V; a loading cap on top is free along z under
a constant normal load N and driven with the frame. Frame and cap are bodies on guides
(`Model.guide`: Solfec's fixed-direction and prescribed-velocity joints), so the force that
drives them is the sum of their joints' reactions, recorded by a joint sensor. The ratio of
that shear force to N climbs to the sample's shear strength, tan(phi) ~ 0.3-0.5 for spheres
of this friction (GDR MiDi 2004; Thornton 2000), and the layer dilates as it shears.

    parsolve run examples/direct_shear.py -- --spheres 2000 --travel 0.01
    parsolve plot out/direct_shear.h5        # /sensors/shear/force and /sensors/cap/x
"""
import argparse

import numpy as np

import parsolve as ps

R = 2.5e-3                 # mean grain radius [m]
DENSITY = 2500.0           # glass [kg/m^3]


def build(spheres=600, pressure=1e4, velocity=0.02, travel=0.004, aspect=(2.0, 1.0),
          seed=1, settle=0.05):
    """The shear box as a Model, with the times (settle, shear). About `spheres` grains in a
    box of Lx x Ly (aspect) and height ~ Lx/2 at a loose packing; pressure N/A [Pa]; the
    frame is driven from `settle` [s] on, at `velocity` [m/s] for `travel` [m]."""
    d = 2.0 * R
    spacing = 2.3 * R                                    # a loose lattice, settled by the load
    ax, ay = aspect
    # nx x ny x nz sites with nz ~ nx / 2 (a box half as high as long)
    u = (spheres / (0.5 * ax * ax * ay)) ** (1.0 / 3.0)
    nx, ny = max(4, int(np.ceil(ax * u))), max(3, int(np.ceil(ay * u)))
    nz = max(4, int(np.ceil(spheres / (nx * ny))))
    Lx, Ly = nx * spacing, ny * spacing
    rng = np.random.default_rng(seed)
    ijk = np.array([(i, j, k) for k in range(nz) for j in range(ny) for i in range(nx)])
    centres = (ijk + 0.5) * spacing + rng.uniform(-0.05, 0.05, ijk.shape) * R
    radii = R * rng.uniform(0.85, 1.15, len(ijk))
    H = nz * spacing                                      # loose height; settles to ~0.85 H
    zs = 0.45 * H                                         # the shear plane
    gap, tw = 0.2 * R, 3.0 * d                           # joints between parts; wall thickness
    top = H + 2.0 * d                                     # the frame's top

    m = ps.Model(gravity=(0.0, 0.0, 0.0))
    m.surface("grain", "grain", friction=0.5)
    m.surface("grain", "frame", friction=0.0)
    m.surface("grain", "cap", friction=0.5)
    m.surface("frame", "frame", friction=0.0)
    m.surface("frame", "cap", friction=0.0)
    m.half_space((0, 0, 0), (0, 0, 1), "grain", name="floor")
    # the lower half: fixed walls
    hz = 0.5 * zs
    for x in (-0.5 * tw, Lx + 0.5 * tw):
        m.box((x, 0.5 * Ly, hz), (0.5 * tw, 0.5 * Ly + tw, hz), "frame", fixed=True)
    for y in (-0.5 * tw, Ly + 0.5 * tw):
        m.box((0.5 * Lx, y, hz), (0.5 * Lx - gap, 0.5 * tw, hz), "frame", fixed=True)
    m.spheres(centres[:spheres], radii[:spheres], "grain", density=DENSITY)
    n = min(spheres, len(centres))
    # the upper frame: four walls on guides, driven along x after the settling
    t_settle = settle
    drive = ([0.0, t_settle, t_settle + 0.005, 1e3], [0.0, 0.0, velocity, velocity])
    z0, hz = 0.5 * (zs + gap + top), 0.5 * (top - zs - gap)
    walls = [((-0.5 * tw, 0.5 * Ly, z0), (0.5 * tw, 0.5 * Ly + tw, hz)),
             ((Lx + 0.5 * tw, 0.5 * Ly, z0), (0.5 * tw, 0.5 * Ly + tw, hz)),
             ((0.5 * Lx, -0.5 * tw, z0), (0.5 * Lx - gap, 0.5 * tw, hz)),
             ((0.5 * Lx, Ly + 0.5 * tw, z0), (0.5 * Lx - gap, 0.5 * tw, hz))]
    ids = []
    for k, (c, half) in enumerate(walls):
        ids.append(m.box(c, half, "frame", density=DENSITY, id=n + k))
        m.guide(ids[-1], c, span=d, free=(), velocity={"x": drive}, name=f"wall {k}")
    # the cap: free along z under the load, driven with the frame
    cz = H + 0.5 * d
    cap = m.box((0.5 * Lx, 0.5 * Ly, cz), (0.5 * Lx - gap, 0.5 * Ly - gap, 0.5 * d), "cap",
                density=DENSITY, id=n + 4)
    m.guide(cap, (0.5 * Lx, 0.5 * Ly, cz), span=d, free=("z",), velocity={"x": drive},
            name="cap")
    load = pressure * Lx * Ly
    m.load(cap, force=(0.0, 0.0, -load))
    m.sensor("shear", joints=[f"wall {k}" for k in range(4)] + ["cap"], every=1)
    m.sensor("cap", bodies=[cap], quantities=("x", "v"), every=1)
    info = {"load": load, "Lx": Lx, "Ly": Ly, "cap": cap, "spheres": n,
            "settle": t_settle, "shear": travel / velocity}
    return m, info


def shear_ratio(force, load):
    """The shear force over the normal load, per sample: the x-sum of the guides' reactions
    on the frame and the cap (what drives them against the grains) over N."""
    return np.asarray(force)[:, :, 0].sum(axis=1) / load


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=2000)
    ap.add_argument("--pressure", type=float, default=1e4, help="normal stress N/A [Pa]")
    ap.add_argument("--velocity", type=float, default=0.02, help="frame speed [m/s]")
    ap.add_argument("--travel", type=float, default=0.01, help="shear displacement [m]")
    ap.add_argument("--step", type=float, default=5e-4)
    ap.add_argument("--output", default="out/direct_shear.h5")
    args = ap.parse_args()
    model, info = build(args.spheres, args.pressure, args.velocity, args.travel)
    model.run(info["settle"] + info["shear"], args.step, output=args.output,
              solver=ps.GaussSeidel(tol=1e-4, max_iter=300),
              frames=(info["settle"] + info["shear"]) / 20)
