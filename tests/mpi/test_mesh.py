"""Mesh walls, turning obstacles and compound grains in parallel (run at 2, 3 and 4 ranks): a
hopper read from an STL file, with a paddle turning in it, discharging clumps of two spheres,
L-shaped compound blocks and spheres onto a floor, follows the serial trajectory bit for bit,
and a restart on this rank count from a serial checkpoint continues it bit for bit."""
import os
import shutil
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.io.meshfile import write_stl
from parsolve.parallel import Comm
from parsolve.run import Simulation
from parsolve.shapes import compound as C
from parsolve.shapes.mesh import hopper_surface

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
H, STEPS = 1e-3, 40


def brick(lo, hi):
    return np.array([(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                     for z in (lo[2], hi[2])], float)


def hopper(folder):
    m = ps.Model()
    m.surface("g", "g", friction=0.5, restitution=0.2)
    m.surface("g", "steel", friction=0.3, restitution=0.2)
    m.mesh(os.path.join(folder, "hopper.stl"), "steel", units="mm")
    m.half_space((0, 0, -0.15), (0, 0, 1), "steel", name="floor")
    m.box((0, 0, 0.2), (0.1, 0.02, 0.03), "steel", fixed=True, name="paddle")
    m.move("paddle", angle=lambda t: 8.0 * t, rate=lambda t: 8.0, axis=(0, 0, 1),
           centre=(0, 0, 0.2))
    clump = [C.sphere((-0.006, 0, 0), 0.009), C.sphere((0.006, 0, 0), 0.009)]
    ell = [C.block(brick((0, 0, 0), (0.01, 0.01, 0.025))),
           C.block(brick((0.01, 0, 0), (0.025, 0.01, 0.01)))]
    g = np.arange(-0.2, 0.2, 0.032)
    x = np.stack(np.meshgrid(g, g, np.arange(0.05, 0.5, 0.032), indexing="ij"), -1)
    x = x.reshape(-1, 3)
    half = np.minimum(0.05 + 0.6 * x[:, 2], 0.2) - 0.018     # inside the walls, near them
    x = x[(np.abs(x[:, :2]) < half[:, None]).all(axis=1)
          & (np.abs(x[:, 2] - 0.2) > 0.05)][::2][:180]       # clear of the paddle
    rng = np.random.default_rng(35)
    turns = [((0, 0, 1), a) for a in rng.uniform(0, np.pi, len(x))]
    out = np.column_stack([x[:, :2], np.zeros(len(x))])
    out /= np.maximum(np.linalg.norm(out, axis=1), 1e-9)[:, None]
    v = rng.normal(0, 0.1, (len(x), 3)) + 0.8 * out - (0, 0, 0.3)    # thrown at the walls
    m.compounds(clump, x[:80], "g", orientations=turns[:80], density=2500, velocities=v[:80])
    m.compounds(ell, x[80:120], "g", orientations=turns[80:120], density=2500,
                velocities=v[80:120])
    m.spheres(x[120:], 0.009, "g", density=2500, velocities=v[120:])
    m.sphere((0.0, 0.0, 0.24), 0.009, "g", density=2500)          # on the paddle
    return m


def run(folder, comm, steps, **kw):
    sim = Simulation(hopper(folder), step=H, solver=ps.GaussSeidel(tol=1e-9, max_iter=200),
                     progress=0, quiet=True, comm=comm, verify_every=0, **kw)
    sim.run(steps * H)
    return sim


def test_a_hopper_with_a_turning_paddle_and_compound_grains_is_bit_for_bit_and_restarts():
    folder = WORLD.bcast(tempfile.mkdtemp(prefix="hopper-") if WORLD.rank == 0 else None)
    if WORLD.rank == 0:                          # millimetres, as CAD files often are
        V, T = hopper_surface(100.0, 400.0, 250.0, 300.0, n=6)
        write_stl(os.path.join(folder, "hopper.stl"), V, T)
    WORLD.barrier()
    serial = run(folder, Comm(MPI.COMM_SELF), STEPS, checkpoint_every=STEPS // 2,
                 checkpoint_dir=os.path.join(folder, f"serial-{WORLD.rank}"))
    c = serial.contacts
    assert (c.obstacle == 0).sum() > 5 and (c.obstacle == 2).sum() > 0    # walls, paddle
    shape = serial.owned.shape
    assert ((c.b >= 0) & ((shape[c.a] == 5) | (shape[np.maximum(c.b, 0)] == 5))).sum() > 3
    sim = run(folder, Comm(WORLD), STEPS)
    assert_equals_serial(sim, serial)
    assert WORLD.allreduce(int(sim.owned.n_owned > 0)) > 1    # the grains are shared out
    ckpt = sorted(os.listdir(os.path.join(folder, "serial-0")))
    first = os.path.join(folder, "serial-0", [c for c in ckpt if c.endswith(".h5")][0])
    again = run(folder, Comm(WORLD), STEPS, restart=first)
    assert again.restarted_from is not None
    assert_equals_serial(again, serial, history=False)
    WORLD.barrier()
    if WORLD.rank == 0:
        shutil.rmtree(folder)
