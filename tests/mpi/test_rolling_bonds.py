"""Rolling resistance and cohesive bonds across ranks (run at 2, 3 and 4 ranks by make
test-mpi): a pile poured with rolling and spinning resistance, and a bonded wall pushed until
its joints break, cut by every partition, equal their serial runs bit for bit (states, rows,
reactions, iterations, breakage events); a checkpoint written across a break on every rank
restarts on one rank and continues as the run that wrote it."""
import os
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.run import Simulation
from parsolve.tables.keys import BOND, ROLLING

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def pile(n=120, grains=None, walls=None):
    """n spheres poured into a box, with rolling resistance unless the surfaces of the
    grains and of the walls are given (model.surface's keywords)."""
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("g", "g", **(grains or dict(friction=0.5, rolling=0.002, spinning=0.001)))
    m.surface("g", "w", **(walls or dict(friction=0.4, rolling=0.004)))
    m.box_walls((0, 0, 0), (0.12, 0.12, 0.3), "w")
    k = np.arange(n)
    x = np.stack([0.012 + 0.024 * (k % 5), 0.012 + 0.024 * ((k // 5) % 5),
                  0.011 + 0.024 * (k // 25)], axis=1)
    rng = np.random.default_rng(1)
    m.spheres(x + rng.uniform(-1e-3, 1e-3, x.shape), 0.01, "g", density=2500,
              velocities=rng.normal(0, 0.3, x.shape))
    return m


def wall(load=1000.0):
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("brick", "brick", friction=0.6)
    m.box((0.3, 0.05, -0.05), (0.6, 0.3, 0.05), "brick", fixed=True, name="base")
    ids = m.wall(0.6, 0.2, (0.2, 0.1, 0.05), "brick", 2000.0)
    for i in ids[-3:]:
        m.load(int(i), force=lambda t: (load * t / 0.05, 0.0, 0.0))
    m.bonds(tension=20.0, cohesion=20.0)
    return m


def run(make, comm, steps, solver, **options):
    sim = Simulation(make(), step=1e-3, solver=solver, progress=0, quiet=True, comm=comm,
                     verify_every=0, **options)
    events = []
    for _ in range(steps):
        sim.step()
        events.append(sim.last["element_events"].get("bonds", np.zeros((0, 6))))
    return sim, events


def test_a_pile_with_rolling_resistance_equals_the_serial_run_bit_for_bit():
    solver = ps.GaussSeidel(tol=1e-9, max_iter=400)
    serial, _ = run(pile, Comm(MPI.COMM_SELF), 60, solver)
    par, _ = run(pile, Comm(WORLD), 60, solver)
    keys = assert_equals_serial(par, serial)
    rolling = int((par.contacts.origin == ROLLING).sum())
    assert WORLD.allreduce(rolling) > 50 and WORLD.allreduce(int(rolling > 0)) >= 2


def test_a_bonded_wall_breaking_equals_the_serial_run_bit_for_bit():
    solver = ps.GaussSeidel(tol=1e-7, max_iter=3000)
    serial, want = run(wall, Comm(MPI.COMM_SELF), 20, solver)
    par, got = run(wall, Comm(WORLD), 20, solver)
    assert_equals_serial(par, serial)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert sum(len(e) for e in want) >= 20                     # joints broke
    bonds = int((par.contacts.origin == BOND).sum())
    assert WORLD.allreduce(bonds) == 124 and WORLD.allreduce(int(bonds > 0)) >= 2
    assert (par.elements[-1].mode == serial.elements[-1].mode).all()


def test_a_checkpoint_across_a_break_restarts_on_one_rank():
    """Written on every rank at step 9 (after the first breaks), read on one: the same
    continuation, breaks included."""
    solver = ps.GaussSeidel(tol=1e-7, max_iter=3000)
    folder = WORLD.bcast(tempfile.mkdtemp() if WORLD.rank == 0 else None)
    par = Simulation(wall(), step=1e-3, solver=solver, progress=0, quiet=True,
                     comm=Comm(WORLD), verify_every=0, checkpoint_every=9,
                     checkpoint_dir=folder)
    par.run(0.009)
    path = os.path.join(folder, "checkpoint-000000009.h5")
    WORLD.barrier()
    assert (par.elements[-1].mode != 0).sum() > 0
    serial, want = run(wall, Comm(MPI.COMM_SELF), 14, solver)
    again = Simulation(wall(), step=1e-3, solver=solver, progress=0, quiet=True,
                       comm=Comm(MPI.COMM_SELF), verify_every=0, restart=path,
                       checkpoint_dir=os.path.join(folder, f"again{WORLD.rank}"))
    again.run(0.009)                                          # reads it, no step
    assert again.step_count == 9
    assert (again.elements[-1].mode == par.elements[-1].mode).all()
    got = []
    for _ in range(5):
        again.step()
        got.append(again.last["element_events"].get("bonds", np.zeros((0, 6))))
    for a, b in zip(got, want[9:]):
        np.testing.assert_array_equal(a, b)
    o, s = np.argsort(again.owned.gid), np.argsort(serial.owned.gid)
    np.testing.assert_array_equal(again.owned.x[o], serial.owned.x[s])
    np.testing.assert_array_equal(again.owned.w[o], serial.owned.w[s])
