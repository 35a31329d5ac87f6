"""A masonry arch: a semicircle of equal voussoirs on two fixed abutments, under gravity.

Heyman's limit analysis: a semicircular arch of dry stone (no tension, friction enough) stands
when its thickness ratio t / R exceeds 0.1075 (Milankovitch); below, four hinges open and it
collapses. Try --ratio 0.2 (stands) and --ratio 0.05 (falls) and watch the voussoirs in
ParaView (frames: the blocks' points, their contacts with forces).

    parsolve run examples/arch.py -- --blocks 21 --ratio 0.15 --duration 1.0
"""
import argparse

import parsolve as ps

ap = argparse.ArgumentParser()
ap.add_argument("--blocks", type=int, default=21, help="voussoirs (odd: a keystone)")
ap.add_argument("--ratio", type=float, default=0.15, help="thickness / centreline radius")
ap.add_argument("--radius", type=float, default=1.0, help="centreline radius R [m]")
ap.add_argument("--duration", type=float, default=1.0, help="simulated seconds")
ap.add_argument("--step", type=float, default=2e-3)
ap.add_argument("--output", default="out/arch.h5")
args = ap.parse_args()

R, t = args.radius, args.ratio * args.radius
model = ps.Model(gravity=(0.0, 0.0, -9.81))
model.surface("stone", "stone", friction=0.8, restitution=0.0)
model.arch(span=2 * R - t, thickness=t, depth=0.5 * t + 0.1 * R, blocks=args.blocks,
           material="stone", density=2400.0)
model.run(args.duration, args.step, output=args.output, frames=args.duration / 10,
          solver=ps.Hybrid())
