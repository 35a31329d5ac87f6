"""Newton's linear algebra met on rank 0 in the rows' canonical order (run at 2, 3 and 4 ranks
by make test-mpi): the rows and blocks of every rank reach rank 0 sorted by their keys and come
back unchanged; a wall of 27 polyhedral bricks settling 100 steps under the Hybrid (the
README's masonry solver) and under the interior point follows the serial run bit for bit."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.parallel.canonical import CanonicalRows
from parsolve.run.simulation import Simulation

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
H, STEPS = 1e-3, 100


def test_rows_and_blocks_meet_on_rank_0_in_key_order_and_return():
    """Each rank holds rows of random keys (a share that differs per rank) and block rows
    with columns in the distributed numbering: rank 0 receives them sorted by key, the
    columns renumbered canonically and sorted in each row; scatter returns each rank's own."""
    rng = np.random.default_rng(7)
    n_global = 40
    keys = rng.permutation(n_global * 3)[:n_global].reshape(-1, 1) * np.array([[1, 0]]) + \
        rng.integers(0, 2, (n_global, 1)) * np.array([[0, 1]])
    share = np.sort(rng.choice(np.arange(1, n_global), WORLD.size - 1, replace=False))
    cuts = np.concatenate([[0], share, [n_global]])
    first, last = cuts[WORLD.rank], cuts[WORLD.rank + 1]
    mine = keys[first:last]
    length = rng.integers(1, 5, n_global)
    columns = [np.sort(rng.choice(n_global, k, replace=False)) for k in length]
    indptr = np.concatenate([[0], np.cumsum(length[first:last])])
    indices = np.concatenate([columns[g] for g in range(first, last)] or [np.zeros(0, int)])
    rows = CanonicalRows(WORLD, mine, indptr, indices)
    values = np.arange(first, last, dtype=float)[:, None] * [1.0, 10.0, 100.0]
    blocks = np.concatenate([[100.0 * g + c for c in columns[g]]
                             for g in range(first, last)] or [np.zeros(0)])
    got, got_blocks = rows.gather(values), rows.gather(blocks, blocks=True)
    assert rows.n_global == n_global
    if WORLD.rank == 0:
        order = np.lexsort(keys.T[::-1])
        np.testing.assert_array_equal(got[:, 0], order)
        inverse = np.empty(n_global, int)
        inverse[order] = np.arange(n_global)
        for c, g in enumerate(order):
            span = slice(rows.indptr[c], rows.indptr[c + 1])
            np.testing.assert_array_equal(rows.indices[span], np.sort(inverse[columns[g]]))
            want = 100.0 * g + order[rows.indices[span]]
            np.testing.assert_array_equal(got_blocks[span], want)
    np.testing.assert_array_equal(rows.scatter(got), values)


def test_a_key_held_twice_is_refused_on_every_rank():
    keys = np.array([[0, 5]], np.int64)              # every rank holds the same key
    with pytest.raises(ValueError, match=r"key \[0, 5\] is held twice"):
        CanonicalRows(WORLD, keys, np.array([0, 1]), np.array([WORLD.rank]))


def wall():
    """27 bricks of 0.2 x 0.1 x 0.05 m in running bond (six courses of four and five) on a
    fixed slab, 1e-4 m apart in height: the courses settle onto each other."""
    m = ps.Model(gravity=(0, 0, -9.81))
    m.surface("brick", "brick", friction=0.6, restitution=0.0)
    slab = np.array([(x, y, z) for x in (-0.3, 1.1) for y in (-0.2, 0.3) for z in (-0.1, 0.0)])
    m.polyhedron(slab, "brick", fixed=True, name="base")
    ids = m.wall(length=0.8, height=0.3, brick=(0.2, 0.1, 0.05), material="brick",
                 density=1800, gap=1e-4)
    assert len(ids) == 27
    return m


def run(comm, solver):
    sim = Simulation(wall(), step=H, solver=solver, progress=0, quiet=True, comm=comm)
    z0 = sim.owned.x[:, 2].copy()
    sim.run(STEPS * H)
    assert len(sim.history) == STEPS and all(r["converged"] for r in sim.history)
    if comm.size == 1:                   # the bricks' largest drop (all held: same order)
        sim.drop = np.max(z0 - sim.owned.x[:, 2])
    return sim


@pytest.mark.parametrize("solver", [lambda: ps.Hybrid(tol=1e-8),
                                    lambda: ps.InteriorPoint(tol=1e-8)],
                         ids=["hybrid", "interior point"])
def test_a_settling_wall_is_the_serial_run_bit_for_bit(solver):
    serial = run(Comm(MPI.COMM_SELF), solver())
    par = run(Comm(WORLD), solver())
    assert WORLD.allreduce(int(par.owned.n_owned > 0)) > 1        # the bricks are shared out
    assert sum(r["newton_iterations"] + r["ksp_iterations"] for r in serial.history) > 0
    assert serial.drop > 4e-4                          # the courses settle onto each other
    assert_equals_serial(par, serial)
    assert [r["contacts"] for r in par.history] == [r["contacts"] for r in serial.history]
