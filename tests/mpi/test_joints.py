"""Joints across ranks (run at 2, 3 and 4 ranks by make test-mpi): a chain of spheres hung
between two points of space by rigid links, with a spring, a fixed direction, a prescribed
point and spheres dropped on it, cut by every partition: the trajectory, the joints'
reactions and the iterations equal the serial run bit for bit."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel import Comm
from gathering import assert_equals_serial
from parsolve.stepping.projection import Projection
from parsolve.run import Simulation
from parsolve.tables.keys import OBSTACLE_CODES, pair_code

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def chain(n=24, L=0.125, r=0.05):
    m = ps.Model()
    m.surface("a", "a", friction=0.4)
    x = np.stack([L * np.arange(n), np.zeros(n), np.zeros(n)], axis=1)
    m.spheres(x, r, "a", density=1000)
    m.rigid_link(0, x[0], None, x[0] - (L, 0, 0), name="left")
    m.rigid_link(n - 1, x[-1], None, x[-1] + (L, 0, 0), name="right")
    for i in range(1, n):
        if i == n // 2:
            m.spring(i, x[i], i - 1, x[i - 1], lambda d, v: -2e4 * d - 5.0 * v, name="spring")
        else:
            m.rigid_link(i, x[i], i - 1, x[i - 1])
    m.fix_direction(3, x[3], (0, 1, 0))                       # keeps the chain in its plane
    m.prescribe(n - 5, x[n - 5], (0, 0, 1), velocity=([0.0, 0.05], [0.0, 0.5]))
    m.spheres(x[2:n - 2:4] + (0.01, 0.0, 0.2), 0.04, "a", density=500)
    return m


def run(comm, steps=60):
    sim = Simulation(chain(), step=1e-3, solver=ps.GaussSeidel(tol=1e-10, max_iter=500),
                     progress=0, quiet=True, comm=comm, verify_every=0)
    for _ in range(steps):
        sim.step()
    return sim


def test_a_chain_cut_by_the_partition_equals_the_serial_run_bit_for_bit():
    serial = run(Comm(MPI.COMM_SELF))
    par = run(Comm(WORLD))
    keys = assert_equals_serial(par, serial)
    assert (keys[:, 1] < 0).sum() == 27                       # every joint's row, once
    # the chain is really cut: its links' rows live on more than one rank
    mine = int((par.contacts.k2 < 0).sum())
    assert WORLD.allreduce(int(mine > 0)) >= 2


def test_projection_on_constraints_is_rank_independent():
    """The projection's position problem is solved over the step's colours with exact sums:
    the chain with projection equals its serial run bit for bit too."""
    def run_projected(comm):
        sim = Simulation(chain(), step=1e-3, solver=ps.GaussSeidel(tol=1e-10, max_iter=500),
                         progress=0, quiet=True, comm=comm, verify_every=0,
                         projection=Projection(threshold=0.0))      # at every step
        sim.projected = 0
        for _ in range(30):
            sim.step()
            sim.projected += sim.last["projection"][0] > 0
        return sim

    serial, par = run_projected(Comm(MPI.COMM_SELF)), run_projected(Comm(WORLD))
    assert_equals_serial(par, serial)
    assert serial.projected > 0 and par.projected == serial.projected   # it projected


def test_the_shear_box_equals_the_serial_run_bit_for_bit():
    """examples/direct_shear.py's box (guided frame and cap, a loaded layer) sheared for a
    few steps: every rank count gives the serial trajectory and guide reactions."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    try:
        from direct_shear import build
    finally:
        sys.path.pop(0)

    def shear(comm):
        m, _ = build(80, travel=0.002, settle=0.003)
        sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(tol=1e-6, max_iter=100),
                         progress=0, quiet=True, comm=comm, verify_every=0)
        for _ in range(12):
            sim.step()
        return sim

    serial, par = shear(Comm(MPI.COMM_SELF)), shear(Comm(WORLD))
    keys = assert_equals_serial(par, serial)
    assert (keys[:, 1] < 0).sum() == 29 and (keys[:, 1] >= 0).sum() > 100
    assert WORLD.allreduce(int(len(par.contacts) > 0)) >= 2     # the box is cut


def test_a_pendulum_on_a_far_fixed_point_equals_the_serial_run_bit_for_bit():
    """A bob fixed 1 m from its centre (the joint's reach makes a coarse level of cells over
    a row of grains) swings into the grains: the joint's row lives with its point, the bob
    with its centre, on other ranks at times; every rank count gives the serial run."""
    def pendulum(comm):
        m = ps.Model()
        m.surface("a", "a", friction=0.3)
        m.half_space((0, 0, 0), (0, 0, 1), "a")
        n = 40
        m.spheres(np.stack([0.05 * np.arange(n), np.zeros(n), np.full(n, 0.05)], 1), 0.025,
                  "a", density=1000)
        pivot = np.array([0.6, 0.0, 1.11])
        bob = pivot + (0.6, 0.0, -0.8)
        m.sphere(bob, 0.08, "a", density=3000, velocity=(-2.4, 0.0, -1.8), id=1000)
        m.fix_point(1000, pivot, name="pivot")
        sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(tol=1e-10, max_iter=500),
                         progress=0, quiet=True, comm=comm, verify_every=0)
        sim.apart = sim.hits = 0
        for _ in range(150):
            sim.step()
            o, c = sim.owned, sim.contacts
            sim.apart += int((c.k1 == 1000).any() and not (o.gid[:o.n_owned] == 1000).any())
            bob = (c.k1 == 1000) | (pair_code(c.k2) == 1000 + OBSTACLE_CODES)
            sim.hits += int((bob & (c.k2 >= 0)).any())
        return sim

    serial, par = pendulum(Comm(MPI.COMM_SELF)), pendulum(Comm(WORLD))
    keys = assert_equals_serial(par, serial)
    assert (keys[:, 1] < 0).sum() == 1 and serial.hits > 3           # the bob hits grains
    assert WORLD.allreduce(par.apart) > 0           # its row away from its owner
