"""Free motion: the scheme's exact answers, rigid rotation, and the Newton-Euler gyroscopic term."""
import numpy as np
import pytest

import parsolve as ps
from scenes import run


def test_free_fall_is_exact_for_constant_gravity():
    """x(t+h) = x + h v + h^2/2 g and v(t+h) = v + h g: exact to round-off after 1000 steps."""
    g = np.array([0.3, -0.2, -9.81])
    m = ps.Model(gravity=g)
    x0, v0 = np.array([0.1, 0.2, 5.0]), np.array([1.0, 0.5, 2.0])
    m.sphere(x0, 0.1, "ball", density=1000, velocity=v0)
    sim = run(m, 1.0, 1e-3)
    t = sim.time
    assert sim.step_count == 1000 and abs(t - 1.0) < 1e-15
    np.testing.assert_allclose(sim.bodies.x[0], x0 + v0 * t + 0.5 * g * t * t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.bodies.v[0], v0 + g * t, rtol=0, atol=1e-12)
    assert sim.history[-1]["contacts"] == 0


def test_constant_spin_rotates_by_the_exponential_map():
    """A sphere spinning at w about z for 1 s turns by |w| rad; the quaternion stays unit."""
    m = ps.Model(gravity=(0, 0, 0))
    w = np.array([0.0, 0.0, 2.0])
    m.sphere((0, 0, 0), 0.1, "ball", density=1000, angular_velocity=w)
    sim = run(m, 1.0, 1e-3)
    q = sim.bodies.q[0]
    assert abs(np.linalg.norm(q) - 1) < 1e-14
    np.testing.assert_allclose(q, [np.cos(1.0), 0, 0, np.sin(1.0)], atol=1e-12)


def test_torque_free_box_keeps_energy_and_angular_momentum():
    """Newton-Euler with the gyroscopic term: an asymmetric box spinning about a perturbed
    principal axis conserves |L| and kinetic energy to the scheme's accuracy."""
    m = ps.Model(gravity=(0, 0, 0))
    m.box((0, 0, 0), (0.3, 0.2, 0.1), "block", density=1000, angular_velocity=(0.01, 0.01, 3.0))
    from parsolve.run import Simulation

    sim = Simulation(m, step=1e-4, progress=0, quiet=True)
    b = sim.bodies
    L0 = b.inertia_world()[0] @ b.w[0]
    E0 = b.kinetic_energy()[0]
    sim.run(1.0)
    L1 = b.inertia_world()[0] @ b.w[0]
    assert np.linalg.norm(L1 - L0) / np.linalg.norm(L0) < 1e-3
    assert abs(b.kinetic_energy()[0] - E0) / E0 < 1e-3


def test_the_compiled_integration_equals_its_twins_bit_for_bit():
    """kernels/rigid.pyx's half step, free velocity and velocity change against
    parsolve/dynamics/twins.py on random bodies (spins from 1e-12 to 1e3 rad/s: both branches of the exponential map)."""
    from parsolve._kernels import compiled
    from parsolve.dynamics import twins

    modules = compiled("rigid")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    kernel = modules[0]
    rng = np.random.default_rng(11)
    n = 5000
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    x, v = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    w = rng.normal(size=(n, 3)) * rng.uniform(1e-12, 1e3, (n, 1))
    got, want = (x.copy(), q.copy()), (x.copy(), q.copy())
    kernel.half_step(*got, v, w, n - 7, 1.3e-3)
    twins.half_step(*want, v, w, n - 7, 1.3e-3)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    args = (q, rng.uniform(1e-2, 10, (n, 3)), rng.uniform(0.1, 10, n), v, w,
            rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), np.array([0.1, 0.0, -9.81]), 1e-3)
    outs = [(np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3, 3)), np.empty(n))
            for _ in range(2)]
    kernel.free_velocity(*args, *outs[0])
    twins.free_velocity(*args, *outs[1])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
    # u(t+h) = u_free + du on the first rows only, the rest untouched
    du = rng.normal(size=(n, 6)) * rng.uniform(1e-9, 1e3, (n, 1))
    got, want = (v.copy(), w.copy()), (v.copy(), w.copy())
    kernel.apply_velocity_change(*got, outs[0][0], outs[0][1], du, n - 7)
    twins.apply_velocity_change(*want, outs[0][0], outs[0][1], du, n - 7)
    for a, b, before in zip(got, want, (v, w)):
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
        np.testing.assert_array_equal(a[n - 7:], before[n - 7:])


def test_the_compiled_energies_equal_their_twins_bit_for_bit():
    """kernels/rigid.pyx's energies against parsolve/dynamics/twins.py (the kinetic energy
    also against BodySet.kinetic_energy, whose sums it takes in the same order)."""
    from parsolve._kernels import compiled
    from parsolve.dynamics import twins
    from parsolve.tables.bodies import BodySet

    modules = compiled("rigid")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(12)
    n = 4000
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    b = BodySet(n, q=q, inertia=rng.uniform(1e-2, 10, (n, 3)), mass=rng.uniform(0.1, 10, n),
                x=rng.normal(size=(n, 3)), v=rng.normal(size=(n, 3)), w=rng.normal(size=(n, 3)))
    args = (b.q, b.inertia, b.mass, b.x, b.v, b.w, np.array([0.3, 0.0, -9.81]))
    got, want = (np.empty(n), np.empty(n)), (np.empty(n), np.empty(n))
    modules[0].energies(*args, *got)
    twins.energies(*args, *want)
    for a, c in zip(got, want):
        np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(got[0], b.kinetic_energy())
    # the owned rows of held bodies: as many as the outputs have, the inputs unsliced
    first = (np.empty(n - 7), np.empty(n - 7)), (np.empty(n - 7), np.empty(n - 7))
    modules[0].energies(*args, *first[0])
    twins.energies(*args, *first[1])
    for part in first:
        for a, c in zip(part, got):
            assert a.tobytes() == c[:n - 7].tobytes()
    with pytest.raises(AssertionError):            # more outputs than bodies
        modules[0].energies(*args, np.empty(n + 1), np.empty(n + 1))


@pytest.mark.parametrize("n", [1, 2, 5, 3000])
def test_the_compiled_loads_work_and_travel_equal_their_twins_bit_for_bit(n):
    """kernels/rigid.pyx's loads_work and travel against parsolve/dynamics/twins.py (numpy's
    einsum and norm, whose summation orders the kernels copy) at several row counts, terms
    spread over 16 decades so that another order of the sums changes bits; the fast count
    exactly at fraction times the radius and around it."""
    from parsolve._kernels import compiled
    from parsolve.dynamics import twins

    modules = compiled("rigid")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    kernel = modules[0]
    rng = np.random.default_rng(13 + n)
    spread = lambda: rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-8, 8, (n, 3))  # noqa: E731
    args = (spread(), spread(), spread(), spread(), spread(), spread(), 1.7e-3)
    got, want = np.empty(n), np.empty(n)
    kernel.loads_work(*args, got)
    twins.loads_work(*args, want)
    np.testing.assert_array_equal(got, want)
    x0, x1 = spread(), spread()
    travel = np.linalg.norm(x1 - x0, axis=1)
    radius = travel / 0.5 * rng.choice([1.0, 1.0 - 1e-15, 1.0 + 1e-15, 0.5, 2.0], n)
    outs = np.empty(n), np.empty(n)
    counts = (kernel.travel(x0, x1, radius, 0.5, outs[0]),
              twins.travel(x0, x1, radius, 0.5, outs[1]))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], travel)
    assert counts[0] == counts[1] == np.count_nonzero(travel > 0.5 * radius)
