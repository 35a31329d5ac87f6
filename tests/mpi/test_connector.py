"""Connectors across ranks (run at 2 and 3 ranks by make test-mpi): a row of spheres on a floor,
neighbours joined by connectors on their x translations (spring-damper, bristle friction,
limit stops), a gear between two rotations and a connector to the ground, cut by every
partition: the trajectory, the rows' reactions and state and the connectors' outputs equal the
serial run bit for bit, and a restart from a checkpoint written at this rank count continues
it exactly."""
import os
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial, gathered
from parsolve.parallel import Comm
from parsolve.run import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def row(n=12, L=0.5, r=0.1):
    m = ps.Model()
    m.surface("a", "a", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "a")
    x = np.stack([L * np.arange(n), np.zeros(n), np.full(n, r)], axis=1)
    v = np.zeros((n, 3))
    v[:, 0] = 8.0 + 0.2 * np.sin(np.arange(n))      # the row drifts over a cell: every
                                                    # cut is crossed, rows change rank
    m.spheres(x, r, "a", density=1000, velocities=v)
    for i in range(n - 1):
        m.connector(m.coordinate(i), m.coordinate(i + 1), stiffness=200.0, damping=1.0,
                    f_dynamic_friction=0.5, f_static_friction_offset=0.2,
                    sticking_stiffness=1e5, sticking_damping=100.0, use_limit_stops=True,
                    limit_stops_upper=0.01, limit_stops_lower=-0.01,
                    limit_stops_stiffness=1e5, limit_stops_damping=10.0)
    m.connector(m.coordinate(2, (0, 1, 0), rotation=True, frame="body"),
                m.coordinate(3, (0, 1, 0), rotation=True, frame="body"), stiffness=0.5,
                factor0=2.0, factor1=1.0, name="gear")
    m.connector(None, m.coordinate(n - 1), stiffness=50.0, friction_proportional_zone=1e-3,
                f_dynamic_friction=0.3, name="to ground")
    return m


def simulation(comm, **options):
    return Simulation(row(), step=1e-3, solver=ps.GaussSeidel(tol=1e-10, max_iter=500),
                      progress=0, quiet=True, comm=comm, verify_every=0,
                      balance_tolerance=1e9, **options)     # the cuts stay: bodies cross them


def test_connectors_cut_by_the_partition_equal_the_serial_run_bit_for_bit():
    serial, par = simulation(Comm(MPI.COMM_SELF)), simulation(Comm(WORLD))
    held = []
    for _ in range(100):
        serial.step()
        par.step()
        held.append(set(par.contacts.k2[par.contacts.kind == 3].tolist()))
    assert_equals_serial(par, serial)
    for name, values in par.outputs("connectors").items():
        np.testing.assert_array_equal(values, serial.outputs("connectors")[name])
    out = serial.outputs("connectors")
    assert (out["friction_mode"] != 0).any() and (out["displacement"] != 0).all()
    mine = int((par.contacts.kind == 3).sum())         # the connectors' rows: on 2+ ranks
    assert WORLD.allreduce(mine) == 13 and WORLD.allreduce(int(mine > 0)) >= 2
    assert WORLD.allreduce(int(held[0] != held[-1])) >= 1  # and some moved to another rank


def test_a_restart_continues_the_connectors_exactly():
    folder = WORLD.bcast(tempfile.mkdtemp() if WORLD.rank == 0 else None)
    full = simulation(Comm(WORLD), checkpoint_dir=os.path.join(folder, "ck"),
                      checkpoint_every=30, output=os.path.join(folder, "res.h5"))
    full.run(0.06)
    last = full.outputs("connectors")
    if WORLD.rank == 0:                       # /connectors: gathered on rank 0 every step
        import h5py

        with h5py.File(os.path.join(folder, "res.h5"), "r") as f:
            assert f["connectors/step"].shape == (60,)
            for name, values in last.items():
                np.testing.assert_array_equal(f["connectors"][name][-1], values)
    ckpt = WORLD.bcast(sorted(os.listdir(os.path.join(folder, "ck")))[0]
                       if WORLD.rank == 0 else None)
    again = simulation(Comm(WORLD), restart=os.path.join(folder, "ck", ckpt))
    again.run(0.06)
    a, b = gathered(full), gathered(again)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    rows = []
    for sim in (full, again):
        c = sim.contacts
        parts = WORLD.allgather((c.k1, c.k2, c.state))
        k1, k2, st = (np.concatenate([p[i] for p in parts]) for i in range(3))
        rows.append(st[np.lexsort((k2, k1))])
    np.testing.assert_array_equal(rows[0], rows[1])
    assert (rows[0][:, 0] != 0).sum() >= 13               # the connectors' displacements
