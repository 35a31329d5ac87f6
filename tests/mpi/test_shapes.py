"""Fixed boxes in parallel (run at 2, 3 and 4 ranks): spheres thrown in a container of five
fixed boxes follow the serial trajectory bit for bit, each contact with a wall exists once,
and every rank holds every obstacle while no rank holds every body."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel import Comm
from gathering import assert_equals_serial
from parsolve.run import Simulation
from tests.test_shapes import container

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
STEPS = 300


def run(comm):
    sim = Simulation(container(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9, max_iter=300),
                     progress=0, quiet=True, comm=comm)
    for _ in range(STEPS):
        sim.step()
    return sim


def test_a_container_of_fixed_boxes_gives_the_serial_trajectory_bit_for_bit():
    serial = run(Comm(MPI.COMM_SELF))
    sim = run(Comm(WORLD))
    keys = assert_equals_serial(sim, serial, history=False)
    assert WORLD.allreduce(int(sim.owned.n_owned)) == 32
    assert len(np.unique(keys, axis=0)) == len(keys)          # each contact once
    assert len(sim.model.obstacles) == 5                       # every rank: every wall
    assert WORLD.allreduce(int(sim.owned.n_owned)) == 32
    assert WORLD.allreduce(int(sim.owned.n_owned > 0)) > 1    # the bodies are shared out
