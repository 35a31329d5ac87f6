"""Domain decomposition (run at 2, 3 and 4 ranks by make test-mpi): the trajectory equals the
serial one bit for bit, each contact exists once, migration keeps every body once, and a
repartition in mid-run changes nothing."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel import Comm
from parsolve.run import Simulation
from scenes import spheres_in_box

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def flow(n=360, seed=11):
    """A granular flow: spheres thrown about in a closed box under tilted gravity, so that
    they cross the subdomain boundaries many times and collide across them."""
    return spheres_in_box(n, seed, (3.0, 0.0, -9.81), 0.4, 0.3, 0.3, 0.5, (0.4, 0.12, 0.3),
                          (0.012, 0.025), (0.008, 0.01), 1.0, spin=5.0)


def run(comm, steps, repartition_at=()):
    sim = Simulation(flow(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9, max_iter=300),
                     progress=0, quiet=True, comm=comm)
    owners = []
    for k in range(steps):
        if k in repartition_at:
            sim.domain.force_repartition = True
        sim.step()
        owners.append(dict(zip(sim.owned.gid.tolist(), [comm.rank] * sim.owned.n_owned)))
    return sim, owners


def by_key(contacts):
    """(keys (n, 2), R) of a contact set, sorted by key (contacts are stored in sweep order)."""
    o = np.lexsort((contacts.k2, contacts.k1))
    return np.stack([contacts.k1, contacts.k2], 1)[o], contacts.R[o]


def gathered(sim):
    """(gid-sorted state, key-sorted contacts) of all ranks (small test problems only)."""
    o = sim.owned
    parts = WORLD.allgather((o.gid, np.hstack([o.x, o.q, o.v, o.w]),
                             np.stack([sim.contacts.k1, sim.contacts.k2], 1), sim.contacts.R))
    gid = np.concatenate([p[0] for p in parts])
    state = np.concatenate([p[1] for p in parts])
    keys = np.concatenate([p[2] for p in parts])
    R = np.concatenate([p[3] for p in parts])
    o1, o2 = np.argsort(gid), np.lexsort((keys[:, 1], keys[:, 0]))
    return gid[o1], state[o1], keys[o2], R[o2]


@pytest.fixture(scope="module")
def serial():
    sim, _ = run(Comm(MPI.COMM_SELF), 150)
    return sim


@pytest.fixture(scope="module")
def parallel():
    return run(Comm(WORLD), 150)


def test_trajectory_and_reactions_equal_the_serial_run_bit_for_bit(serial, parallel):
    sim, _ = parallel
    gid, state, keys, R = gathered(sim)
    s = serial.owned
    np.testing.assert_array_equal(gid, s.gid)
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    skeys, sR = by_key(serial.contacts)
    np.testing.assert_array_equal(keys, skeys)
    np.testing.assert_array_equal(R, sR)
    assert [r["iterations"] for r in sim.history] == [r["iterations"] for r in serial.history]
    assert [r["kinetic_energy"] for r in sim.history] == \
        [r["kinetic_energy"] for r in serial.history]
    assert [r["residual"] for r in sim.history] == [r["residual"] for r in serial.history]


def test_each_contact_exists_exactly_once(serial, parallel):
    sim, _ = parallel
    _, _, keys, _ = gathered(sim)
    assert len(np.unique(keys, axis=0)) == len(keys) == len(serial.contacts) > 100
    assert WORLD.allreduce(len(sim.contacts)) == len(serial.contacts)


def test_migration_keeps_every_body_exactly_once_and_bodies_do_cross(parallel):
    sim, owners = parallel
    every = WORLD.allgather(owners)
    moves = 0
    for k in range(len(owners)):
        merged = {}
        for rank_owners in every:
            for gid, rank in rank_owners[k].items():
                assert gid not in merged, f"body {gid} owned twice at step {k}"
                merged[gid] = rank
        assert sorted(merged) == list(range(360))
        if k:
            moves += sum(merged[g] != prev[g] for g in merged)
        prev = merged
    assert moves > 20                      # the test means something: bodies change owner
    assert WORLD.allreduce(sim.owned.n_owned) == 360


def test_a_repartition_mid_run_changes_nothing(serial):
    sim, _ = run(Comm(WORLD), 150, repartition_at=(40, 41, 97))
    assert sim.domain.repartitions >= 3
    gid, state, keys, R = gathered(sim)
    s = serial.owned
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    np.testing.assert_array_equal(R, by_key(serial.contacts)[1])


def test_delassus_assembled_across_ranks_in_petsc_agrees_with_the_sweeps():
    """W as one PETSc BAIJ matrix over all ranks (rows owned by the contacts' owners, blocks
    between contacts of different ranks included) gives the residual the solver reports."""
    sim = Simulation(flow(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9, max_iter=300),
                     progress=0, quiet=True, comm=Comm(WORLD), verify_every=1)
    rows = [sim.step() for _ in range(60)]
    checked = [r for r in rows if r["contacts"] > 0]
    assert len(checked) > 40
    for r in checked:
        assert abs(r["petsc_residual"] - r["residual"]) <= 1e-9 * max(r["residual"], 1e-12) \
            + 1e-13, (r["step"], r["petsc_residual"], r["residual"])


def generated(calls, n=1200):
    """A bed made by a generator: each rank asks only for its share of the bodies."""
    m = ps.Model()
    m.surface("g", "g", friction=0.5)
    m.surface("g", "w", friction=0.5)
    m.box_walls((0, 0, 0), (1.0, 0.2, 1.0), "w")
    side = 50

    def make(ids):
        calls.append(len(ids))
        k = ids.astype(float)
        return {"centers": np.stack([0.01 + 0.02 * (k % side), 0.01 + 0.02 * ((k // side) % 5),
                                     0.01 + 0.02 * (k // (5 * side))], axis=1),
                "radii": 0.0099, "velocities": np.stack([np.sin(k), np.cos(k), 0 * k], 1)}
    m.sphere_generator(n, make, "g", density=2000)
    return m


def test_a_generated_model_is_never_whole_on_one_rank_and_runs_as_in_serial():
    calls = []
    par = Simulation(generated(calls), step=1e-3, solver=ps.GaussSeidel(tol=1e-6),
                     progress=0, quiet=True, comm=Comm(WORLD))
    assert sum(calls) <= -(-1200 // WORLD.size) and WORLD.allreduce(sum(calls)) == 1200
    assert par.owned.n_owned < 1200
    ser = Simulation(generated([]), step=1e-3, solver=ps.GaussSeidel(tol=1e-6), progress=0,
                     quiet=True, comm=Comm(MPI.COMM_SELF))
    for _ in range(10):
        par.step()
        ser.step()
    gid, state, keys, R = gathered(par)
    s = ser.owned
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    np.testing.assert_array_equal(R, by_key(ser.contacts)[1])


def row_on_floor(per_row=120):
    """Spheres touching in a 120 x 2 x 2 block on a floor: 120 cell columns along x, the same
    load in each, so a cut can move by one column (1/120 of the load). Each centre lies in the
    lower part of its column, so a contact along x lies in the column of its lower body."""
    m = ps.Model()
    m.surface("g", "g", friction=0.5)
    m.surface("g", "f", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    k = np.arange(4 * per_row)
    x = np.stack([0.002 + 0.02 * (k % per_row), 0.01 + 0.02 * ((k // per_row) % 2),
                  0.01 + 0.02 * (k // (2 * per_row))], axis=1)
    m.spheres(x, 0.01, "g", density=1000)
    return m


def test_a_slow_rank_gets_fewer_bodies_and_the_trajectory_stays():
    """Rank 0 made three times slower per unit of work (its measured seconds replaced by a
    deterministic 3 us per unit, the others' by 1 us): the time-weighted cuts give it about a
    third of the others' bodies, and the trajectory equals the serial one bit for bit."""
    def sim_on(comm):
        return Simulation(row_on_floor(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9),
                          progress=0, quiet=True, comm=comm, balance_tolerance=1.05)

    sim = sim_on(Comm(WORLD))
    dom = sim.domain
    slow = 3.0 if WORLD.rank == 0 else 1.0
    record = dom.record_work
    dom.record_work = lambda seconds, units: record(slow * 1e-6 * np.sum(units), units)
    dom.min_seconds, dom.min_steps = 0.0, 1
    counts = []
    for _ in range(12):
        sim.step()
        counts.append(sim.owned.n_owned)
    assert dom.repartitions >= 1
    n = np.array(WORLD.allgather(np.mean(counts[-4:])))
    assert n[0] < 0.6 * n[1:].mean(), n                 # ideal ratio 1/3 (2 ranks) .. 0.4
    assert WORLD.allreduce(sim.owned.n_owned) == 480
    serial = sim_on(Comm(MPI.COMM_SELF))
    for _ in range(12):
        serial.step()
    gid, state, keys, R = gathered(sim)
    s = serial.owned
    np.testing.assert_array_equal(gid, s.gid)
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    np.testing.assert_array_equal(R, by_key(serial.contacts)[1])


def same_as_serial(make, steps, cuts=None):
    """Run `make()` on all ranks (with the cuts set to `cuts(part)` from step 3 on when given)
    and on one rank; the states and reactions must be equal bit for bit. Returns the
    parallel run."""
    sim = Simulation(make(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9), progress=0,
                     quiet=True, comm=Comm(WORLD))
    part = sim.domain.part
    if cuts is not None:
        part.balance = lambda comm, x, weights=None, gain=None: \
            part.set_cuts(cuts(part)) or True
    for k in range(steps):
        sim.domain.force_repartition = cuts is not None and k == 2
        sim.step()
    if cuts is not None:
        np.testing.assert_array_equal(part.cuts(), cuts(part))
    serial = Simulation(make(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9), progress=0,
                        quiet=True, comm=Comm(MPI.COMM_SELF))
    for _ in range(steps):
        serial.step()
    gid, state, keys, R = gathered(sim)
    s = serial.owned
    np.testing.assert_array_equal(gid, s.gid)
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    np.testing.assert_array_equal(keys, by_key(serial.contacts)[0])
    np.testing.assert_array_equal(R, by_key(serial.contacts)[1])
    return sim


def test_slabs_one_cell_thin_still_give_the_serial_trajectory():
    """Cuts one cell apart along the row (ranks 1 .. P-2 own one column each) from step 3
    on: a ghost's velocity change must then reach a rank two subdomains away."""
    bounds = 60 + np.arange(WORLD.size - 1) - (WORLD.size > 2)

    def slabs(part):       # the tree's cut between ranks f + k//2 - 1 and f + k//2
        i = part.internal
        return np.stack([0 * i, bounds[part.first[i] + part.count[i] // 2 - 1]], axis=1)

    same_as_serial(row_on_floor, 8, slabs)


def cubic_bed(side=12, layers=6, seed=3):
    """Touching spheres in a side x side x layers block on a floor, thrown about: one body
    per cell, as long in x as in y."""
    m = ps.Model()
    m.surface("g", "g", friction=0.5)
    m.surface("g", "f", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    k = np.arange(side * side * layers)
    x = 0.01 + 0.02 * np.stack([k % side, (k // side) % side, k // side ** 2], axis=1)
    v = np.random.default_rng(seed).normal(0, 0.5, (len(k), 3))
    m.spheres(x, 0.0099, "g", density=1000, velocities=v)
    return m


def test_a_cubic_bed_is_cut_in_several_axes_and_runs_as_in_serial():
    """3 or more ranks cut a 12 x 12 x 6 bed across x, then its parts across y: boxes, not
    slabs; the trajectory is the serial one."""
    sim = same_as_serial(cubic_bed, 10)
    axes = set(sim.domain.part.cuts()[:, 0].tolist())
    assert len(axes) >= min(2, WORLD.size - 1), sim.domain.part.cuts()
    assert WORLD.allreduce(sim.owned.n_owned) == 864


def test_boxes_one_cell_thin_in_several_axes_still_give_the_serial_trajectory():
    """Every cut one cell from the bed's low side, the k-th internal node across axis k % 3:
    at 4 ranks rank 0 owns one column of cells, ranks 1 and 2 boxes one cell thin in y and
    in z; ghosts and du cross boxes in every direction and past the thin ones."""
    def thin(part):
        return np.stack([np.arange(len(part.internal)) % 3, np.ones(len(part.internal))], 1)

    sim = same_as_serial(cubic_bed, 8, thin)
    lo, hi = sim.domain.part.lo, sim.domain.part.hi
    width = np.minimum(hi, 12) - np.maximum(lo, 0)           # within the bed's 12 x 12 cells
    assert (width.min(axis=1) == 1).sum() >= min(WORLD.size - 1, 3), (lo, hi)


def test_a_rank_without_bodies_takes_the_same_balance_decision():
    """RCB balance with gain: a rank holding no body once reduced numpy's int64 bincount of
    nothing against the others' doubles and alone decided to move the cuts (the shear box
    hung at 4 ranks). Every rank now returns the same decision and the same cuts."""
    from parsolve.parallel.partition import RCBPartition

    part = RCBPartition(WORLD.size, cell=1.0)
    rng = np.random.default_rng(WORLD.rank)
    pts = rng.uniform(0, 8, (40, 3)) if WORLD.rank == 0 else np.zeros((0, 3))
    moved = part.balance(WORLD, pts, gain=0.5)
    assert len(set(WORLD.allgather(moved))) == 1
    assert len(set(WORLD.allgather(part.key()))) == 1
    pts = pts[:0] if WORLD.rank == 0 else rng.uniform(0, 8, (10, 3))
    moved = part.balance(WORLD, pts, gain=0.5)
    assert len(set(WORLD.allgather(moved))) == 1


def polydisperse_bed(seed=5):
    """Grains of 1 mm on a floor with a few bodies 20 times larger on and in them (spheres
    and a box) and a large fixed block: five cell levels, a partition of the grains' cells."""
    m = ps.Model(gravity=(2.0, 0.0, -9.81))
    m.surface("g", "g", friction=0.5)
    m.surface("g", "f", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    m.box((0.075, 0.01, 0.02), (0.01, 0.03, 0.02), "f", fixed=True, name="block")
    k = np.arange(30 * 10 * 2)
    x = 0.001 + 0.002 * np.stack([k % 30, (k // 30) % 10, k // 300], axis=1)
    rng = np.random.default_rng(seed)
    m.spheres(x, 0.00099, "g", density=2000, velocities=rng.normal(0, 0.2, (len(k), 3)))
    m.spheres([(0.012, 0.01, 0.0245), (0.048, 0.012, 0.0245)], 0.02, "g", density=2000,
              velocities=[(0.1, 0, -0.2), (-0.1, 0.05, -0.2)])
    m.box((0.03, 0.01, 0.0145), (0.008, 0.006, 0.01), "g", density=2000,
          orientation=((0, 0, 1), 0.3), velocity=(0.0, 0.0, -0.1))
    return m


def test_a_polydisperse_bed_with_a_fixed_block_runs_as_in_serial():
    """Size ratio 20: the colouring has a level per halving of the cell, the partition cuts the
    grains' cells (not the large bodies'), the large bodies are ghosts on every rank they
    reach; the trajectory is the serial one."""
    sim = same_as_serial(polydisperse_bed, 12)
    assert sim.levels.nlevels == 5
    assert (sim.domain.part.cell == sim.levels.finest).all()
    assert (sim.levels.finest < sim.cell / 10).all()
    assert sim.domain.reach > 1
    levels = sim.levels.level(np.array([0.00099 + 0.5 * sim.margin, 0.02]))
    assert levels.tolist() == [4, 0]


def test_large_bodies_across_subdomains_one_grain_cell_thin_run_as_in_serial():
    """Cuts one grain cell apart under the large spheres: each large sphere's rows lie on
    several ranks, which all hold it, and its du crosses the thin subdomains."""
    bounds = 4 + np.arange(WORLD.size - 1)

    def slabs(part):
        i = part.internal
        return np.stack([0 * i, bounds[part.first[i] + part.count[i] // 2 - 1]], axis=1)

    same_as_serial(polydisperse_bed, 8, slabs)


def test_the_compiled_colour_loop_equals_its_python_twin(monkeypatch):
    """The sweep's colour loop with its exchanges in C (parsolve._kernels.halo) and in Python
    (ColourSchedule.visit with Halo.begin / end) give the same run bit for bit, large bodies,
    thin subdomains and all; the compiled one is what a run uses."""
    from parsolve.parallel import halo

    assert halo._ColourLoop is not None, "the compiled colour loop is not built"
    made = halo.Halo.loop
    runs = []
    for flag in ("1", "0"):
        monkeypatch.setenv("PARSOLVE_COMPILED_HALO", flag)
        loops = []
        monkeypatch.setattr(halo.Halo, "loop", lambda self, *a: loops.append(
            made(self, *a)) or loops[-1])
        sim = Simulation(polydisperse_bed(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9),
                         progress=0, quiet=True, comm=Comm(WORLD))
        rows = [sim.step() for _ in range(6)]
        assert len(loops) >= 6 and all((f is not None) == (flag == "1") for f in loops)
        runs.append((gathered(sim), [(r["iterations"], r["residual"]) for r in rows]))
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_array_equal(a, b)
    assert runs[0][1] == runs[1][1] and runs[0][1][-1][0] > 1


def periodic_flow(seed=7):
    """Spheres thrown about under gravity tilted along x, periodic in x and y over a floor:
    bodies leave at one end and come back at the other, and collide across the boundary."""
    m = ps.Model(gravity=(4.0, 1.0, -9.81))
    m.surface("g", "g", friction=0.4, restitution=0.3)
    m.surface("g", "f", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    m.periodic(x=(0.0, 0.2), y=(-0.03, 0.05))
    k = np.arange(240)
    x = np.stack([0.0105 + 0.0205 * (k % 10), -0.02 + 0.0205 * ((k // 10) % 4),
                  0.0105 + 0.021 * (k // 40)], axis=1)
    rng = np.random.default_rng(seed)
    m.spheres(x, rng.uniform(0.008, 0.01, len(k)), "g", density=1000,
              velocities=rng.normal(0, 0.5, (len(k), 3)) + [1.0, 0, 0])
    return m


def test_a_periodic_flow_runs_as_in_serial():
    """Periodic in x and y: images across the ends, contacts found once, wrapping and the
    neighbours across the period; the trajectory is the serial one, bit for bit."""
    sim = same_as_serial(periodic_flow, 40)
    x = WORLD.allgather(sim.owned.x[:sim.owned.n_owned])
    x = np.concatenate(x)
    assert (x[:, 0] >= 0).all() and (x[:, 0] < 0.2).all()
    assert (x[:, 1] >= -0.03).all() and (x[:, 1] < 0.05).all()


def test_a_periodic_flow_cut_one_cell_thin_runs_as_in_serial():
    """Cuts one cell apart next to the period's end: a ghost's image crosses the boundary to
    a rank past a thin one."""
    bounds = 1 + np.arange(WORLD.size - 1)

    def slabs(part):
        i = part.internal
        return np.stack([0 * i, bounds[part.first[i] + part.count[i] // 2 - 1]], axis=1)

    same_as_serial(periodic_flow, 20, slabs)


def long_bed():
    """A bed of 1 mm grains 0.3 m long with one boulder 20 times larger at one end."""
    m = ps.Model(gravity=(1.0, 0.0, -9.81))
    m.surface("g", "g", friction=0.5)
    m.surface("g", "f", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    k = np.arange(150 * 6 * 2)
    x = 0.001 + 0.002 * np.stack([k % 150, (k // 150) % 6, k // 900], axis=1)
    rng = np.random.default_rng(3)
    m.spheres(x, 0.00099, "g", density=2000, velocities=rng.normal(0, 0.1, (len(k), 3)))
    m.sphere((0.02, 0.006, 0.0241), 0.02, "g", density=2000, velocity=(0.1, 0.0, -0.1))
    return m


def test_grains_far_from_a_boulder_keep_a_thin_ghost_layer():
    """Only the grains beside a large body reach as far as its cells: a rank away from the
    boulder (beyond x = 0.14 m: the grains beside it reach about 0.13 m) holds a layer of one
    grain diameter of its neighbours' grains. The run equals serial."""
    sim = same_as_serial(long_bed, 6)
    ghosts = WORLD.allgather(sim.domain.memory()["ghosts"])
    part = sim.domain.part
    far = [r for r in range(WORLD.size)
           if part.lo[r, 0] * part.cell[0] > 0.14 and (part.lo[r] < part.hi[r]).all()]
    assert far, (part.lo, part.hi)
    # a grain diameter of the neighbours' grains (12 per x slice, 2 slices) and the boulder,
    # not the 40 mm layer of a boulder's cell (about 250 grains)
    assert all(ghosts[r] <= 60 for r in far), (ghosts, part.lo)


def test_a_row_beyond_its_bodies_reach_is_refused_not_lost():
    """With the ghosts' reach cut to one cell (a broken rule), a boulder's rows have owners
    that do not hold the boulder: every rank raises the same InputError instead of losing
    them."""
    from parsolve.errors import InputError
    from parsolve.parallel.domain import _OneCell

    sim = Simulation(polydisperse_bed(), step=1e-3, solver=ps.GaussSeidel(tol=1e-9),
                     progress=0, quiet=True, comm=Comm(WORLD))
    sim.domain._reach = _OneCell()
    with pytest.raises(InputError, match="does not hold their bodies"):
        for _ in range(3):
            sim.step()
