"""Cohesive bonds (parsolve/laws/bond.py, kernels/bond.pxd, parsolve/elements/bonds.py): the
kernels equal their twins and the local solve is the exact minimum over the strength domain;
a block hanging by n bonds of tensile strength T falls exactly when its weight exceeds n T; a
bonded block pushed sideways breaks exactly at n C + mu N; a broken bond carries nothing again
and the contacts take over; breaks are events in the results, statuses in ParaView's frames,
and they survive a restart."""
import numpy as np
import pytest

import parsolve as ps
from parsolve import laws
from parsolve.errors import InputError
from parsolve.io.hdf5 import h5py_module
from parsolve.laws import bond
from parsolve.laws.codes import OUTCOMES, STATUS
from parsolve.solvers import GaussSeidel, kernels
from parsolve.solvers.newton import SemismoothNewton
from parsolve.tables.keys import BOND, CONTACT

G = 9.81


def spd(rng):
    A = rng.normal(size=(3, 3))
    return A @ A.T + 0.1 * np.eye(3)


def in_domain(p, R, rtol=1e-12):
    scale = p[0] + p[1] + abs(R[0]) + 1e-300
    return R[0] >= -p[0] - rtol * scale and \
        np.hypot(R[1], R[2]) <= p[1] + p[2] * R[0] + rtol * scale


def test_row_solve_is_the_exact_minimum_over_the_strength_domain():
    """Random W, b, strengths: the kernel's reaction is the twin's, lies in S, the law's
    residual vanishes at it and no admissible point has a lower 1/2 r^T W r + b^T r; an inert
    row carries nothing."""
    rng = np.random.default_rng(11)
    seen = set()
    for trial in range(400):
        W = spd(rng)
        b = rng.normal(size=3) * rng.choice([0.1, 1.0, 10.0])
        p = np.array([rng.choice([0.0, 0.3, 2.0]), rng.choice([0.0, 0.5, 3.0]),
                      rng.choice([0.0, 0.4, 1.0]), 0.0])
        got, code = kernels.row_solve(bond.KIND, W, b, p)
        want, wcode = laws.row_solve(bond.KIND, W, b, p)
        assert code == wcode == OUTCOMES.index("bond")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        assert in_domain(p, got)
        u = W @ got + b
        assert laws.residual_sq(bond.KIND, p, got, u) <= 1e-18 * (1 + b @ b)
        f = 0.5 * got @ W @ got + b @ got
        z = rng.normal(size=(300, 3)) * 3.0
        trial_points = bond.project_rows(z, np.tile(p, (300, 1)))
        values = 0.5 * np.einsum("ki,ij,kj->k", trial_points, W, trial_points) + trial_points @ b
        assert (values >= f - 1e-10 * (1 + abs(f))).all()
        seen.add(("inside" if np.abs(u).max() < 1e-9 else
                  "cut" if got[0] <= -p[0] * (1 - 1e-9) else "cone"))
        inert, _ = kernels.row_solve(bond.KIND, W, b, np.array([*p[:3], bond.BROKEN]))
        assert (inert == 0).all()
    assert seen == {"inside", "cut", "cone"}


def test_projection_and_newton_blocks_equal_their_twins():
    rng = np.random.default_rng(2)
    n = 300
    p = np.stack([rng.choice([0.0, 0.5], n), rng.choice([0.0, 1.0], n), rng.choice([0.0, 0.6], n),
                  rng.choice([0.0, 0.0, 1.0], n)], axis=1)
    kind = np.full(n, bond.KIND, np.int8)
    R, U = rng.normal(size=(n, 3)) * 2, rng.normal(size=(n, 3))
    Z1 = R.copy()
    kernels.project_admissible(kind, p, Z1)
    np.testing.assert_allclose(Z1, bond.project_rows(R, p), atol=1e-14)
    assert all(in_domain(pa, r) for pa, r in zip(p, Z1))
    rho = np.full(n, 0.7)
    Phi, A, B = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3, 3))
    kernels.alart_curnier(kind, p, R, U, rho, 1.3 * rho, Phi, A, B)
    for got, want in zip((Phi, A, B), laws.phi_rows(kind, p, R, U, rho, 1.3 * rho)):
        np.testing.assert_allclose(got, want, atol=1e-13)
    eps = 1e-7                        # A = dPhi/dR by central differences (away from kinks)
    for j in range(3):
        d = np.zeros((n, 3))
        d[:, j] = eps
        fd = (laws.phi_rows(kind, p, R + d, U, rho, 1.3 * rho, False)
              - laws.phi_rows(kind, p, R - d, U, rho, 1.3 * rho, False)) / (2 * eps)
        close = np.abs(fd - A[:, :, j]).max(axis=1) < 1e-5
        assert close.mean() > 0.97


def hanging(factor, n_expected=4, solver=None, **run):
    """A 10 kg block bonded under a fixed block at its four corner contacts, each of
    tensile strength T = m g / 4 / factor."""
    model = ps.Model(gravity=(0.0, 0.0, -G))
    model.surface("s", "s", friction=0.5)
    model.box((0, 0, 0.1), (0.2, 0.2, 0.05), "s", fixed=True, name="ceiling")
    model.box((0, 0, 0), (0.1, 0.1, 0.05), "s", mass=10.0)
    model.bonds(tension=10.0 * G / 4 / factor, cohesion=100.0)
    run = {"progress": 0, "quiet": True, "verify_every": 0, **run}
    sim = ps.Simulation(model, step=1e-3, solver=solver or SemismoothNewton(tol=1e-12), **run)
    assert len(sim.elements[-1]) == n_expected
    return sim


def breaks_of(sim, steps):
    """The steps at which bonds broke in `steps` steps, and the events."""
    at, events = [], []
    for _ in range(steps):
        sim.step()
        got = sim.last["element_events"].get("bonds", np.zeros((0, 6)))
        at += [sim.step_count] * len(got)
        events += list(got)
    return at, np.array(events).reshape(-1, 6)


@pytest.mark.parametrize("factor, solver", [(1 - 1e-6, "newton"), (1 - 1e-3, "gs")])
def test_a_block_hangs_while_its_weight_is_below_n_T(factor, solver):
    sim = hanging(factor, solver=None if solver == "newton" else
                  GaussSeidel(tol=1e-12, max_iter=100000))
    at, _ = breaks_of(sim, 200)
    assert at == [] and np.abs(sim.owned.v).max() < 1e-12
    c = sim.contacts
    bonds = c.origin == BOND
    assert bonds.sum() == 4 and (c.R[bonds, 0] < 0).all()              # in tension
    assert np.sum(c.R[bonds, 0]) == pytest.approx(-10.0 * G * sim.h, rel=1e-9)
    status = laws.status(c.kind, c.param, c.R)
    assert set(status[bonds]) == {STATUS.index("bonded")}
    assert not (c.origin == CONTACT).any()                             # replaced by bonds


@pytest.mark.parametrize("factor", [1 + 1e-6, 1 + 1e-3])
def test_a_block_falls_once_its_weight_exceeds_n_T_and_its_bonds_never_pull_again(factor):
    sim = hanging(factor)
    at, events = breaks_of(sim, 40)
    assert len(at) == 4 and max(at) <= (1 if factor > 1.0001 else 5)
    assert sorted(events[:, 0]) == [0, 1, 2, 3] and set(events[:, 3]) == {1.0}   # tension
    assert events[:, 4] == pytest.approx(-10.0 * G / 4 / factor, rel=1e-6)
    assert sim.owned.v[0, 2] < -0.3                                      # falling
    c = sim.contacts
    assert ((c.origin == BOND) & (c.R != 0).any(axis=1)).sum() == 0
    assert set(laws.status(c.kind, c.param, c.R)[c.origin == BOND]) == {STATUS.index("broken")}


def pushed(factor, n=4, C=10.0, mu=0.5, tension=1e6):
    model = ps.Model(gravity=(0.0, 0.0, -G))
    model.surface("s", "s", friction=0.3)
    model.box((0, 0, -0.1), (0.3, 0.3, 0.05), "s", fixed=True, name="floor")
    block = model.box((0, 0, 0), (0.1, 0.1, 0.05), "s", mass=10.0)
    model.load(block, force=((n * C + mu * 10.0 * G) * factor, 0, 0))
    model.bonds(tension=tension, cohesion=C, friction=mu)
    return ps.Simulation(model, step=1e-3, solver=SemismoothNewton(tol=1e-12), progress=0,
                         quiet=True, verify_every=0)


def test_a_bonded_block_pushed_sideways_breaks_at_n_C_plus_mu_N():
    """F = n C + mu m g: (1 - 1e-6) F holds, (1 + 1e-6) F breaks every bond in shear, and
    the block then slides on its contacts (friction 0.3) with a = F/m - 0.3 g."""
    sim = pushed(1 - 1e-6)
    assert breaks_of(sim, 50)[0] == [] and np.abs(sim.owned.v).max() < 1e-12
    sim = pushed(1 + 1e-6)
    at, events = breaks_of(sim, 50)
    assert len(at) == 4 and max(at) <= 3 and set(events[:, 3]) == {2.0}       # shear
    for _ in range(20):                    # the joint's last (dilatant) slip settles
        sim.step()
    v0, t0 = sim.owned.v[0, 0], sim.time
    for _ in range(20):
        sim.step()
    F = (4 * 10.0 + 0.5 * 10.0 * G) * (1 + 1e-6)
    assert (sim.owned.v[0, 0] - v0) / (sim.time - t0) == pytest.approx(F / 10 - 0.3 * G,
                                                                       rel=1e-9)
    c = sim.contacts
    assert (c.R[c.origin == CONTACT, 0] >= 0).all() and (c.R[c.origin == BOND] == 0).all()


def test_two_bodies_bonded_by_the_user_break_in_tension_at_T():
    """model.bond between two spheres pulled apart by opposite loads F: holds below T, breaks
    above, and the spheres fly apart."""
    for F, broken in ((0.999 * 5.0, False), (1.001 * 5.0, True)):
        model = ps.Model(gravity=(0.0, 0.0, 0.0))
        model.surface("s", "s", friction=0.5)
        a = model.sphere((0, 0, 0), 0.1, "s", density=100.0)
        b = model.sphere((0.2, 0, 0), 0.1, "s", density=100.0)
        model.load(a, force=(-F, 0, 0))
        model.load(b, force=(F, 0, 0))
        model.bond(b, a, (0.1, 0, 0), tension=5.0, cohesion=10.0)
        sim = ps.Simulation(model, step=1e-3, solver=SemismoothNewton(tol=1e-12),
                            progress=0, quiet=True, verify_every=0)
        at, events = breaks_of(sim, 20)
        assert (len(at) == 1) == broken
        if broken:
            assert events[0, 1:4].tolist() == [a, b, 1.0]
            assert sim.owned.v[1, 0] - sim.owned.v[0, 0] > 0
        else:
            assert np.abs(sim.owned.v).max() < 1e-12


def test_breaks_are_events_in_the_results_and_statuses_in_the_frames(tmp_path, capsys):
    sim = hanging(1.001, output=str(tmp_path / "hang.h5"), frames=0.002, quiet=False)
    sim.run(0.004)
    out = capsys.readouterr().out
    assert "bond 0 (body 0 and obstacle 'ceiling') broke in tension" in out
    assert "elements' events (results: events/NAME): 4" in out
    h5py = h5py_module()
    with h5py.File(tmp_path / "hang.h5", "r") as f:
        ev = f["events/bonds"]
        assert ev["step"][()].tolist() == [1, 1, 1, 1]
        assert sorted(ev["bond"][()]) == [0, 1, 2, 3] and set(ev["mode"][()]) == {1.0}
        last = f["frames/000002/contacts"]
        bonds = last["origin"][()] == BOND
        assert set(last["status"][()][bonds]) == {STATUS.index("broken")}
    with open(tmp_path / "hang.xdmf") as f:
        assert "status" in f.read()
    from parsolve.io.describe import describe
    assert "events/bonds: 4 (body_a, body_b, bond, mode" in describe(str(tmp_path / "hang.h5"))


def test_a_restart_continues_the_bonds_and_their_breakage(tmp_path):
    """Checkpoints before and after the first break: a restart from either continues as the
    run that wrote them, bit for bit (positions, breakage events), and a bond broken before
    the checkpoint stays broken (its row's state rebuilds every rank's flags)."""
    def make(name, **kw):
        model = ps.Model(gravity=(0.0, 0.0, -G))
        model.surface("s", "s", friction=0.5)
        model.box((0, 0, 0.1), (0.2, 0.2, 0.05), "s", fixed=True, name="ceiling")
        block = model.box((0, 0, 0), (0.1, 0.1, 0.05), "s", mass=10.0)
        model.load(block, force=lambda t: (0, 0, -2000.0 * t),          # growing: one
                   torque=lambda t: (100.0 * t, 0, 0))                # side's bonds break
        model.bonds(tension=10.0 * G / 4 * 1.5, cohesion=100.0)
        return ps.Simulation(model, step=1e-3, solver=SemismoothNewton(tol=1e-12),
                             progress=0, quiet=True, verify_every=0, checkpoint_every=1,
                             checkpoint_keep=100, checkpoint_dir=str(tmp_path / name),
                             output=str(tmp_path / "run.h5"), **kw)

    def events(path):
        with h5py_module().File(path, "r") as f:
            return np.stack([f["events/bonds"][k][()] for k in ("step", "bond", "mode",
                                                                  "normal_force")], axis=1)
    reference = make("ref")
    reference.run(0.04)
    want = events(tmp_path / "run.h5")
    steps = sorted(set(want[:, 0].astype(int)))
    assert len(want) == 2 and steps[0] >= 2     # one side's pair: the block swings on the other
    for step in (steps[0] - 1, steps[0], steps[0] + 5):
        again = make(f"leg{step}", restart=str(tmp_path / "ref" / f"checkpoint-{step:09d}.h5"))
        assert again.step_count == 0
        again.run(0.04)
        np.testing.assert_array_equal(again.owned.x, reference.owned.x)
        np.testing.assert_array_equal(again.owned.w, reference.owned.w)
        np.testing.assert_array_equal(events(again.results), want)
        assert (again.elements[-1].mode != 0).sum() == 2


def test_bad_bonds_are_refused_by_name():
    model = ps.Model()
    model.surface("s", "s", friction=0.5)
    a = model.sphere((0, 0, 0), 0.1, "s", density=1.0)
    with pytest.raises(InputError, match="bonds: tension must be >= 0"):
        model.bonds(tension=-1.0, cohesion=0.0)
    with pytest.raises(InputError, match="no obstacle named 'wall'"):
        model.bond(a, "wall", (0, 0, 0.1), tension=1.0, cohesion=1.0, normal=(0, 0, 1))
    with pytest.raises(InputError, match="needs its normal"):
        model.bond(a, None, (0, 0, 0.1), tension=1.0, cohesion=1.0)
    with pytest.raises(InputError, match="to itself"):
        model.bond(a, a, (0, 0, 0.1), tension=1.0, cohesion=1.0)
