"""Moving obstacles across ranks (2, 3, 4 by make test-mpi): balls spread along a vibrating
floor, a block on a rising fixed box under a time load, cut by the partition: the
trajectory and the reactions equal the serial run bit for bit."""
import math

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.run import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def model():
    A, w = 0.01, 2 * math.pi * 8
    m = ps.Model()
    m.surface("a", "a", friction=0.3)
    m.surface("a", "ball", friction=0.3, restitution=0.7)
    m.surface("ball", "ball", friction=0.3, restitution=0.7)
    m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
    m.move("floor", lambda t: (0, 0, A * math.sin(w * t)),
           lambda t: (0, 0, A * w * math.cos(w * t)))
    m.box((3.4, 0, 0.3), (0.3, 0.3, 0.1), "a", fixed=True, name="lift")      # a fixed box
    m.move("lift", ([0.0, 1.0], [[0, 0, 0], [0, 0, 0.4]]))
    x = np.stack([0.12 * np.arange(24), 0.01 * np.sin(np.arange(24)), 0.06 + 0.002 *
                  np.arange(24)], axis=1)
    m.spheres(x, 0.05, "ball", density=1000, velocities=np.tile([0.1, 0.0, 0.0], (24, 1)))
    m.box((3.4, 0, 0.45), (0.05, 0.05, 0.05), "a", density=1000, id=100)
    m.load(100, force=lambda t: (2.0 * math.sin(10 * t), 0, 0))
    return m


def run(comm, steps=60):
    sim = Simulation(model(), step=1e-3, solver=ps.GaussSeidel(tol=1e-12, max_iter=300),
                     progress=0, quiet=True, comm=comm, verify_every=0)
    sim.touched = 0
    for _ in range(steps):
        sim.step()
        sim.touched += len(sim.contacts)
    return sim


def test_moving_floors_across_ranks_equal_the_serial_run_bit_for_bit():
    serial = run(Comm(MPI.COMM_SELF))
    par = run(Comm(WORLD))
    assert_equals_serial(par, serial)
    assert WORLD.allreduce(int(par.touched > 0)) >= 2              # the floor is cut
    assert serial.touched >= 24
