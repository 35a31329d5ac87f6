"""Compliant contacts across ranks (run at 2, 3 and 4 ranks by make test-mpi): a pile poured
on springs (laws/coulomb.py: the spring's state is the row's reaction, carried by the warm
start) cut by every partition equals its serial run bit for bit (states, rows, reactions,
iterations)."""
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from test_rolling_bonds import pile, run

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def springs():
    return pile(grains=dict(friction=0.5, restitution=0.2, stiffness=3e4),
                walls=dict(friction=0.4, stiffness=6e4))


def test_a_pile_on_springs_equals_the_serial_run_bit_for_bit():
    solver = ps.GaussSeidel(tol=1e-9, max_iter=400)
    serial, _ = run(springs, Comm(MPI.COMM_SELF), 80, solver)
    par, _ = run(springs, Comm(WORLD), 80, solver)
    assert_equals_serial(par, serial)
    loaded = int((par.contacts.R[:, 0] > 0).sum())
    assert WORLD.allreduce(loaded) > 100 and WORLD.allreduce(int(loaded > 0)) >= 2
