"""The global Newton over distributed W (run at 2, 3 and 4 ranks by make test-mpi): W R and the
linear solves are rank 0's on the rows in their canonical order (parsolve.solvers.linear), so a
run of Newton, the Hybrid or the interior point on all ranks equals the serial run bit for bit
(state, reactions, each step's iterations and residual); with W and J left distributed
(gather=0: MatMult and MUMPS over the ranks, as above 30,000 unknowns) it equals it to the
solve tolerance; the solver events (linear-solve fallbacks) are the same on every rank and at
every rank count."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.run.simulation import Simulation
from parsolve.solvers import Hybrid, SemismoothNewton
from scenes import spheres_in_box

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD
TOL = 1e-11


def pile(n=120, seed=5):
    """Spheres dropped in a box spread along x (across the slabs), settling into contact."""
    return spheres_in_box(n, seed, (1.0, 0.0, -9.81), 0.8, 0.0, 0.5, 0.0, (0.4, 0.1, 0.3),
                          (0.011, 0.021), 0.01, 0.2)


def run(comm, solver, steps=40):
    sim = Simulation(pile(), step=1e-3, solver=solver, progress=0, quiet=True, comm=comm)
    sim.run(steps * 1e-3)
    sim.rows = sim.history
    assert len(sim.rows) == steps and all(row["converged"] for row in sim.rows)
    return sim


def gathered(sim):
    o = sim.owned
    parts = WORLD.allgather((o.gid, np.hstack([o.x, o.v, o.w])))
    gid = np.concatenate([p[0] for p in parts])
    return np.concatenate([p[1] for p in parts])[np.argsort(gid)]


def state(sim):
    o = sim.owned
    return np.hstack([o.x, o.v, o.w])[np.argsort(o.gid)]


@pytest.fixture(scope="module")
def serial():
    return run(Comm(MPI.COMM_SELF), SemismoothNewton(tol=TOL))


SOLVERS = {"newton": lambda: SemismoothNewton(tol=TOL),
           "hybrid": lambda: Hybrid(tol=TOL, window=2, stall=0.01),
           "fischer-burmeister merit": lambda: SemismoothNewton(tol=TOL, merit="fb", memory=5)}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_newton_on_all_ranks_is_the_serial_run_bit_for_bit(serial, name):
    one = serial if name == "newton" else run(Comm(MPI.COMM_SELF), SOLVERS[name]())
    sim = run(Comm(WORLD), SOLVERS[name]())
    assert sum(r["newton_iterations"] for r in sim.rows) > 0
    assert sum(r["contacts"] for r in sim.rows) > 0
    assert_equals_serial(sim, one)
    assert [r["ksp_iterations"] for r in sim.rows] == [r["ksp_iterations"] for r in one.rows]


def test_with_w_distributed_newton_equals_the_serial_run_to_the_tolerance(serial):
    """gather=0 keeps W and J over the ranks (PETSc's MatMult, MUMPS), what every system above
    the gathering limit gets: sums in another order, the same trajectory to the tolerance."""
    assert_matches(run(Comm(WORLD), SemismoothNewton(tol=TOL, gather=0)), serial)


def assert_matches(sim, ref):
    """sim's state (over all ranks) equals ref's (serial) to the tolerance, and the history's
    collective values are the same on every rank."""
    scale = np.abs(state(ref)).max()
    np.testing.assert_allclose(gathered(sim), state(ref), rtol=0, atol=1e-8 * scale)
    rows = WORLD.allgather([(r["iterations"], r["residual"]) for r in sim.rows])
    assert all(r == rows[0] for r in rows)


def test_newton_equals_gauss_seidel_on_all_ranks(serial):
    sim = run(Comm(WORLD), ps.GaussSeidel(tol=TOL, max_iter=20000))
    scale = np.abs(state(serial)).max()
    np.testing.assert_allclose(gathered(sim), state(serial), rtol=0, atol=1e-8 * scale)


def events(sim):
    """The solver events summed over the run's steps."""
    total = {}
    for row in sim.rows:
        for k, v in row.items():
            if k.startswith("event_"):
                total[k[6:]] = total.get(k[6:], 0) + v
    return total


def test_fallbacks_are_counted_alike_at_every_rank_count():
    """-ksp_divtol 0.5 makes every Krylov solve diverge at iteration 0 at any rank count (as
    ILU(0) did on rigid sets): each is counted, LU solves in its place, and the counts of the
    parallel run equal the serial run's, on every rank."""
    from parsolve.platform.petsc import PETSc

    opts = PETSc.Options()
    opts.setValue("ksp_divtol", 0.5)
    try:
        runs = [run(Comm(c), SemismoothNewton(tol=TOL, linear="gmres"), steps=8)
                for c in (MPI.COMM_SELF, WORLD)]
    finally:
        opts.delValue("ksp_divtol")
    serial, parallel = (events(sim) for sim in runs)
    assert set(serial) == set(SemismoothNewton.event_names)
    assert serial["ksp_failed"] == serial["lu_fallback"] > 0
    assert serial["gs_fallback"] == 0
    assert parallel == serial
    assert all(e == parallel for e in WORLD.allgather(parallel))
    assert_equals_serial(runs[1], runs[0])


def test_shuffled_relaxed_gauss_seidel_is_the_serial_run_bit_for_bit():
    """Gauss-Seidel shuffled every sweep (by a hash of the rows' global keys and the seed) and
    over-relaxed: the run on every rank equals the serial run bit for bit (state, reactions,
    each step's sweeps and residual), and the shuffle changes the trajectory."""
    def gs(**kw):
        return ps.GaussSeidel(tol=1e-6, max_iter=3000, omega=1.2, **kw)

    kw = {"shuffle": "sweep", "seed": 11}
    serial, par = (run(Comm(c), gs(**kw), steps=15) for c in (MPI.COMM_SELF, WORLD))
    assert sum(r["contacts"] for r in serial.rows) > 0
    assert_equals_serial(par, serial)
    plain = run(Comm(MPI.COMM_SELF), gs(), steps=15)
    assert not np.array_equal(plain.contacts.R, serial.contacts.R)


def test_the_interior_point_on_all_ranks_is_the_serial_run_bit_for_bit():
    """The interior point (its iterations alone: no Newton polish; MUMPS factors on rank 0):
    the serial interior point's state, reactions, iterations and residuals bit for bit, and
    its events, the same on every rank."""
    runs = [run(Comm(c), ps.InteriorPoint(tol=TOL, newton_iter=0), steps=6)
            for c in (MPI.COMM_SELF, WORLD)]
    one, par = runs
    assert sum(r["iterations"] for r in par.rows) > 0
    assert sum(r["contacts"] for r in par.rows) > 20
    assert_equals_serial(par, one)
    assert all(e == events(par) for e in WORLD.allgather(events(par)))
    assert events(par) == events(one)
    assert events(par)["newton_polish"] == events(one)["newton_polish"] == 0
    assert events(par)["lu_factorisations"] > 0
