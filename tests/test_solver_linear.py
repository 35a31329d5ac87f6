"""Newton's linear solves cannot fail silently: a failed Krylov solve is counted and LU takes
over; the chain is chosen from the size; every solver declares its events and reports exactly
those; the FCLIB command's JSON carries them."""
import json

import numpy as np
import pytest

import parsolve as ps
from parsolve.platform.petsc import PETSc
from parsolve.solvers import Hybrid, SemismoothNewton, linear
from test_newton import box_stack, local_dynamics, solve


@pytest.fixture(scope="module")
def stack():
    """Ten boxes, mu = 0.8, four corner contacts per face: W singular, J near singular."""
    return local_dynamics(box_stack(10, 0.8), 3)


@pytest.fixture
def divtol():
    """-ksp_divtol 0.5: the Krylov solve diverges at iteration 0 of every solve, at any rank
    count (its residual there is the initial one), as ILU(0) did on rigid sets
    (DIVERGED_PC_FAILED at iteration 0 on every step)."""
    opts = PETSc.Options()
    opts.setValue("ksp_divtol", 0.5)
    yield
    opts.delValue("ksp_divtol")


def test_a_failed_krylov_solve_is_counted_and_lu_takes_over(stack, divtol):
    R, rep, _ = solve(SemismoothNewton(tol=1e-8, max_iter=200, linear="gmres"), stack)
    assert rep.converged and rep.residual <= 1e-8
    solves = rep.events["ksp_failed"]
    assert solves >= rep.iterations > 0                    # every step's Krylov solve failed
    assert rep.events["lu_fallback"] == solves             # ... and LU solved it
    assert rep.events["gmres_fallback"] == rep.events["gs_fallback"] == 0


def test_without_the_fallback_every_step_would_be_gauss_seidel(stack, divtol, monkeypatch):
    """The issue as it was: no second linear solver, so each step falls back to sweeps,
    counted, and Newton does not reach 1e-8 in as many steps."""
    monkeypatch.setattr(SemismoothNewton, "chain", lambda self, unknowns: ("gmres",))
    _, rep, _ = solve(SemismoothNewton(tol=1e-8, max_iter=60, linear="gmres"), stack)
    assert rep.events["ksp_failed"] == rep.iterations == 60
    assert rep.events["gs_fallback"] > 0 and not rep.converged


def test_the_default_chain_factors_the_box_stack_without_a_failure(stack):
    R, rep, _ = solve(SemismoothNewton(tol=1e-8, max_iter=200), stack)
    assert rep.converged
    assert rep.events["ksp_failed"] == rep.events["gs_fallback"] == 0
    # GMRES on the factors of an earlier J: fewer factorisations than steps
    assert 0 < rep.events["lu_factorisations"] < rep.iterations <= rep.ksp_iterations


def test_the_chain_follows_the_size():
    s = SemismoothNewton()
    assert s.chain(3 * 1000) == ("lu", "gmres")
    assert s.chain(linear.LU_MAX_UNKNOWNS + 3) == ("gmres", "lu")
    assert s.chain(linear.LU_FALLBACK_MAX + 3) == ("gmres",)
    assert SemismoothNewton(linear="gmres").chain(30) == ("gmres", "lu")
    assert SemismoothNewton(linear="lu").chain(10 ** 9) == ("lu", "gmres")


@pytest.mark.parametrize("solver", [ps.GaussSeidel(tol=1e-8, max_iter=50),
                                    SemismoothNewton(tol=1e-8, max_iter=20),
                                    Hybrid(tol=1e-8, max_iter=200, window=5, stall=0.9)],
                         ids=["gs", "newton", "hybrid"])
def test_every_solver_reports_the_events_it_declares(stack, solver):
    _, rep, _ = solve(solver, stack)
    assert isinstance(solver.event_names, tuple)
    assert tuple(rep.events) == solver.event_names
    assert all(isinstance(v, int) and v >= 0 for v in rep.events.values())
    assert ps.GaussSeidel.event_names == ()
    if isinstance(solver, Hybrid):
        assert rep.events["newton_stages"] == sum(s[0] == "newton" for s in rep.stages) > 0


def test_the_fclib_json_carries_the_events(tmp_path, stack):
    from parsolve.cli import main
    from parsolve.io import fclib

    path = str(tmp_path / "stack.h5")
    fclib.write(path, fclib.from_local_dynamics(stack))
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["fclib", "solve", path, "--solver", "newton", "--tol", "1e-8",
              "--max-iter", "200"])
    record = json.loads(out.getvalue().strip().splitlines()[-1])
    assert record["converged"]
    assert tuple(record["events"]) == SemismoothNewton.event_names
    assert np.isfinite(record["residual"])
