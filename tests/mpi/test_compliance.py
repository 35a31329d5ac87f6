"""Compliant contacts across ranks (run at 2, 3 and 4 ranks by make test-mpi): a pile poured
on springs (laws/coulomb.py: the spring's state is the row's reaction, carried by the warm
start) cut by every partition equals its serial run bit for bit (states, rows, reactions,
iterations)."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.run import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def pile(n=120):
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("g", "g", friction=0.5, restitution=0.2, stiffness=3e4)
    m.surface("g", "w", friction=0.4, stiffness=6e4)
    m.box_walls((0, 0, 0), (0.12, 0.12, 0.3), "w")
    k = np.arange(n)
    x = np.stack([0.012 + 0.024 * (k % 5), 0.012 + 0.024 * ((k // 5) % 5),
                  0.011 + 0.024 * (k // 25)], axis=1)
    rng = np.random.default_rng(1)
    m.spheres(x + rng.uniform(-1e-3, 1e-3, x.shape), 0.01, "g", density=2500,
              velocities=rng.normal(0, 0.3, x.shape))
    return m


def run(comm, steps):
    sim = Simulation(pile(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9, max_iter=400),
                     progress=0, quiet=True, comm=comm, verify_every=0)
    for _ in range(steps):
        sim.step()
    return sim


def test_a_pile_on_springs_equals_the_serial_run_bit_for_bit():
    serial = run(Comm(MPI.COMM_SELF), 80)
    par = run(Comm(WORLD), 80)
    assert_equals_serial(par, serial)
    loaded = int((par.contacts.R[:, 0] > 0).sum())
    assert WORLD.allreduce(loaded) > 100 and WORLD.allreduce(int(loaded > 0)) >= 2
