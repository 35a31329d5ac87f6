"""The model of the stored format-1 checkpoint (tests/test_checkpoint_format.py): spheres, a
box and a brick on a floor that moves, a pendulum on a fixed point and a rigid link, a spring
joint and a connector with bristle friction (law state in its rows), so that every column a
checkpoint carries is exercised. Written by parsolve 0.x at commit 15d3b16 (format 1) on 2
ranks: `parsolve run model.py --checkpoint-every 20` (40 steps)."""
import numpy as np
import parsolve as ps

m = ps.Model(gravity=(0.5, 0.0, -9.81))
m.surface("g", "g", friction=0.4, restitution=0.2)
m.surface("g", "w", friction=0.3, restitution=0.0)
m.box_walls((0, 0, 0), (0.2, 0.1, 0.3), "w")
m.move("wall z-min", lambda t: np.array([0.0, 0.0, 0.002 * np.sin(40.0 * t)]),
       velocity=lambda t: np.array([0.0, 0.0, 0.08 * np.cos(40.0 * t)]))
k = np.arange(24)
x = np.stack([0.02 + 0.03 * (k % 6), 0.03 + 0.04 * ((k // 6) % 2),
              0.011 + 0.025 * (k // 12)], axis=1)
rng = np.random.default_rng(7)
m.spheres(x, 0.01, "g", density=1000, velocities=rng.normal(0, 0.3, (24, 3)))
m.box((0.1, 0.05, 0.1), (0.02, 0.015, 0.01), "g", density=800)
brick = np.array([[sx, sy, sz] for sx in (-0.015, 0.015) for sy in (-0.01, 0.01)
                  for sz in (-0.008, 0.008)])
m.polyhedron(brick + [0.05, 0.05, 0.14], "g", density=900)
bob = m.sphere((0.1, 0.05, 0.25), 0.01, "g", density=1000, velocity=(0.3, 0.0, 0.0))
m.fix_point(bob, (0.1, 0.05, 0.26))
bob2 = m.sphere((0.1, 0.05, 0.22), 0.008, "g", density=1000)
m.rigid_link(bob, (0.1, 0.05, 0.25), bob2, (0.1, 0.05, 0.22))
b3 = m.sphere((0.16, 0.05, 0.25), 0.01, "g", density=1000)
m.spring(b3, (0.16, 0.05, 0.25), None, (0.16, 0.05, 0.28),
         force=lambda d, v: -200.0 * d - 0.5 * v)
b4 = m.sphere((0.04, 0.05, 0.25), 0.01, "g", density=1000, velocity=(0.2, 0.0, 0.0))
m.connector(None, m.coordinate(b4, (1.0, 0.0, 0.0)), stiffness=50.0, damping=0.1,
            f_dynamic_friction=0.002, f_static_friction_offset=0.001,
            sticking_stiffness=500.0, sticking_damping=0.5, exponential_decay_static=0.01)
m.run(0.04, 1e-3, output="res.h5", frames=0.02, progress=0,
      solver=ps.GaussSeidel(tol=1e-10, max_iter=500))
