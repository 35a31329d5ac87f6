"""Periodic boundaries (parsolve/periodic.py): a collision across the boundary is the same
collision away from it, bodies wrap, contacts across the boundary are found once, the energy
balance holds through the wraps, restarts continue exactly; bad periods are refused by name."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.contact.periodic import Period
from parsolve.run import Simulation


def pair(periodic):
    """Two spinning spheres rolling on a floor towards each other, across x = 0.2 / 0 when
    periodic, at x = 0.19 and 0.212 otherwise (the same relative position)."""
    m = ps.Model()
    m.surface("g", "g", friction=0.3, restitution=0.5)
    m.surface("g", "f", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    if periodic:
        m.periodic(x=(0.0, 0.2))
    m.spheres([(0.19, 0.05, 0.01), (0.012 if periodic else 0.212, 0.05, 0.01)], 0.01, "g",
              density=1000, velocities=[(0.5, 0, 0.1), (-0.5, 0.1, 0)],
              angular_velocities=[(0, 3, 1), (1, 0, 0)])
    return m


def test_a_collision_across_the_boundary_is_the_collision_away_from_it():
    per = Simulation(pair(True), step=1e-4, progress=0, quiet=True)
    plain = Simulation(pair(False), step=1e-4, progress=0, quiet=True)
    touching = 0
    for _ in range(300):
        r, r2 = per.step(), plain.step()
        assert r["contacts"] == r2["contacts"]
        touching += int((per.contacts.b >= 0).sum())     # each other, across the boundary
    assert touching >= 1                                 # an impact: one step
    a, b = per.owned, plain.owned
    np.testing.assert_array_equal(a.v, b.v)              # the same bits
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.x[:, 1:], b.x[:, 1:])
    np.testing.assert_allclose((a.x[:, 0] - b.x[:, 0] + 0.1) % 0.2 - 0.1, 0.0, atol=1e-15)
    assert a.v[0, 0] < 0 < a.v[1, 0]                     # they bounced
    assert (a.x[:, 0] >= 0).all() and (a.x[:, 0] < 0.2).all()


def chain(n=10, period=0.2):
    """A ring of touching spheres along a periodic x: every sphere has exactly two
    neighbours, the last and the first across the boundary."""
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("g", "g", friction=0.2)
    m.periodic(x=(0.0, period))
    d = period / n
    m.spheres([(d * (i + 0.5), 0.0, 0.0) for i in range(n)], 0.5 * d, "g", density=1000)
    return m


def test_a_ring_closes_across_the_boundary_with_each_contact_once():
    sim = Simulation(chain(), step=1e-4, progress=0, quiet=True)
    sim.step()
    c = sim.contacts
    pairs = sorted(zip(c.k1.tolist(), (c.k2 // 64 - 2 ** 20).tolist()))
    assert len(pairs) == 10 and len(set(pairs)) == 10
    assert (0, 9) in pairs                                 # across the boundary
    across = (c.k1 == 0) & (c.k2 // 64 - 2 ** 20 == 9)
    np.testing.assert_allclose(c.offset[across], [[0.2, 0.0, 0.0]])   # B's image at -0.2
    assert np.abs(c.offset[~across]).max() == 0.0


def test_bodies_wrap_and_the_energy_balance_holds_through_the_wraps():
    """A stream of spheres sliding down a floor tilted along the periodic x: every centre
    stays in the period, and E(0) + W = E + D to round-off although each wrap moves a body
    up the slope by the period's height."""
    m = ps.Model(gravity=(3.0, 0.0, -9.0))
    m.surface("g", "g", friction=0.3, restitution=0.2)
    m.surface("g", "f", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    m.periodic(x=(0.0, 0.1))
    m.spheres([(0.01 + 0.021 * i, 0.0, 0.0101) for i in range(4)], 0.01, "g", density=1000,
              velocities=[(2.0 * (i % 2), 0, 0) for i in range(4)])
    sim = Simulation(m, step=1e-3, progress=0, quiet=True,
                     solver=ps.GaussSeidel(tol=1e-12, max_iter=500))
    wraps, prev = 0, sim.owned.x[:, 0].copy()
    for _ in range(150):
        r = sim.step()
        x = sim.owned.x[:, 0]
        assert (x >= 0).all() and (x < 0.1).all()
        wraps += int((x < prev - 0.05).sum())
        prev = x.copy()
    assert wraps >= 4
    total = r["kinetic_energy"] + r["potential_energy"] + r["dissipated"]
    assert abs(r["energy_error"]) < 1e-9 * total


def test_a_step_with_no_body_near_a_boundary():
    """Bodies far from every boundary have no images: detection runs as without periods (and
    a body that then crosses one wraps)."""
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("g", "g", friction=0.2)
    m.periodic(x=(0.0, 1.0))
    m.spheres([(0.45, 0, 0), (0.4899, 0, 0), (0.7, 0.1, 0)], 0.02, "g", density=1000,
              velocities=[(0, 0, 0), (0, 0, 0), (30.0, 0, 0)])
    sim = Simulation(m, step=1e-3, progress=0, quiet=True)
    assert sim.step()["contacts"] == 1                     # the two touching ones
    for _ in range(20):
        sim.step()
    x = sim.owned.x[:, 0]
    assert 0.3 < x[2] < 0.4                                # 1.33: it crossed x = 1, wrapped


def test_bad_periods_are_refused_by_name():
    with pytest.raises(InputError, match="periodic y: upper"):
        ps.Model().periodic(y=(1.0, 1.0))
    with pytest.raises(InputError, match="axis 'w'"):
        Period({"w": (0, 1)})
    m = chain(n=2, period=0.03)
    m.spheres([(0.02, 0.2, 0.0)], 0.01, "g", density=1000)
    with pytest.raises(InputError, match="periodic x: the period 0.03 m is shorter"):
        Simulation(m, step=1e-4, progress=0, quiet=True)
    with pytest.raises(InputError, match="projection"):
        Simulation(chain(), step=1e-4, progress=0, quiet=True, projection=True)


def test_images_cover_edges_and_corners():
    p = Period({"x": (0, 1), "y": (0, 2)})
    idx, shift = p.images(np.array([[0.05, 0.05, 0], [0.5, 1.95, 0], [0.5, 1.0, 0]]), 0.1)
    got = sorted(zip(idx.tolist(), map(tuple, shift.tolist())))
    assert got == [(0, (0.0, 2.0, 0.0)), (0, (1.0, 0.0, 0.0)), (0, (1.0, 2.0, 0.0)),
                   (1, (0.0, -2.0, 0.0))]
    cell = p.fit(0.3)
    assert cell[0] == 0.5 and 2 / cell[1] == 6 and cell[2] == 0.3   # even counts per period


PERIODIC = """
import numpy as np
import parsolve as ps
m = ps.Model(gravity=(3.0, 0.0, -9.81))
m.surface("g", "g", friction=0.4, restitution=0.3)
m.surface("g", "f", friction=0.5)
m.half_space((0, 0, 0), (0, 0, 1), "f")
m.periodic(x=(0.0, 0.12), y=(0.0, 0.08))
k = np.arange(60)
rng = np.random.default_rng(2)
m.spheres(np.stack([0.011 + 0.02 * (k % 6), 0.011 + 0.02 * ((k // 6) % 4),
                    0.011 + 0.021 * (k // 24)], 1), 0.009, "g", density=1000,
          velocities=rng.normal(0, 0.4, (60, 3)))
m.run(0.06, 1e-3, output="res.h5", frames=0.03, progress=0,
      solver=ps.GaussSeidel(tol=1e-10, max_iter=300))
"""


def test_a_periodic_run_restarts_on_another_rank_count_bit_for_bit(tmp_path):
    from test_restart import assert_restart_continues

    assert_restart_continues(tmp_path, PERIODIC)
