"""Gauss-Seidel's stop and relaxation options over the ranks (run at 2 and 3 ranks): a pile
poured across the slabs, solved with stop="change", adapt and check > 1, equals its serial
run bit for bit (state, reactions, each step's sweeps and residual), with omega backed off
from 1.6 on the way: every decision of the solve reads sums exact over the ranks."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from gathering import assert_equals_serial
from parsolve.parallel import Comm
from parsolve.run.simulation import Simulation
from parsolve.solvers.problem import _Coupled
from scenes import spheres_in_box

pytestmark = pytest.mark.mpi(min_size=2)
WORLD = MPI.COMM_WORLD


def pile(n=120, seed=5):
    """Spheres dropped in a box spread along x (across the slabs), settling into contact."""
    return spheres_in_box(n, seed, (1.0, 0.0, -9.81), 0.8, 0.0, 0.5, 0.0, (0.4, 0.1, 0.3),
                          (0.011, 0.021), 0.01, 0.2)


def run(comm, solver, steps=30):
    sim = Simulation(pile(), step=1e-3, solver=solver, progress=0, quiet=True, comm=comm)
    sim.run(steps * 1e-3)
    assert len(sim.history) == steps
    return sim


@pytest.mark.parametrize("options", [{"stop": "change", "adapt": 3, "check": 4},
                                     {"adapt": 2, "check": 3}], ids=["change", "residual"])
def test_the_options_give_the_serial_run_bit_for_bit(options, monkeypatch):
    def gs():
        return ps.GaussSeidel(tol=1e-6, max_iter=400, omega=1.6, **options)

    omegas = set()
    sweep = _Coupled.sweep
    monkeypatch.setattr(_Coupled, "sweep", lambda self, R, counts, omega, *a: (
        omegas.add(omega), sweep(self, R, counts, omega, *a))[1])
    serial, par = (run(Comm(c), gs()) for c in (MPI.COMM_SELF, WORLD))
    assert min(omegas) < 1.6 == max(omegas)                  # adapt backed omega off
    its = [r["iterations"] for r in par.history]
    assert sum(r["contacts"] for r in par.history) > 100
    assert all(k % options["check"] == 0 or k == 400 for k in its)
    assert max(its) > options["check"]                       # solves of several checks
    assert_equals_serial(par, serial)
    # the options change the trajectory: they are in force
    plain = run(Comm(MPI.COMM_SELF), ps.GaussSeidel(tol=1e-6, max_iter=400, omega=1.6))
    assert not np.array_equal(plain.contacts.R, serial.contacts.R)
