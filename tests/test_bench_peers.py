"""The peer bench's parsolve models build and step, and its measures hold on known cases, so
that bench/bench_peers.py cannot rot silently (no peer is needed)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from peers import dem  # noqa: E402
from peers import models as M  # noqa: E402
from peers import parsolve_models as P  # noqa: E402


def short(name, steps):
    spec = dict(M.quick(M.MODELS[name]))
    spec["duration"] = steps * spec["step"]
    return spec


def test_ball_falls_freely_then_bounces_at_its_restitution():
    spec = dict(M.MODELS["ball"], duration=0.3)
    out = P.run("ball", spec)
    assert out["steps"] == 300 and out["unconverged_steps"] == 0
    # t = 0.3 s is before the first impact (0.303 s): no bounce yet
    assert out["physics"]["rebound_heights"] == []
    t, z = [0.0, 0.1, 0.2], []
    sim = P.simulation("ball", spec)
    for _ in range(200):
        sim.step()
        if sim.step_count in (100, 200):
            z.append(sim.bodies.x[0, 2])
    # Moreau-Jean's midpoint positions: within g h t of the exact free fall
    for tk, zk in zip(t[1:], z):
        assert abs(zk - (spec["height"] - 0.5 * M.G * tk ** 2)) < M.G * spec["step"] * tk
    physics = M.ball_physics(spec, *_bounce(spec))
    assert physics["restitution"] == pytest.approx([0.8, 0.8, 0.8], abs=1e-4)


def _bounce(spec):
    """An exact bouncing history at e = 0.8, sampled finely: the measure's own check."""
    t = np.linspace(0.0, 2.0, 200001)
    h0, e, r = spec["height"] - spec["radius"], spec["restitution"], spec["radius"]
    z, t0, v = np.empty_like(t), 0.0, 0.0
    z_start = h0
    for k, tk in enumerate(t):
        s = tk - t0
        zk = z_start + v * s - 0.5 * M.G * s * s
        if zk < 0:
            vin = v - M.G * s
            t0, z_start, v = tk, 0.0, -e * vin
            zk = 0.0
        z[k] = zk + r
    return t, z


def test_spring_follows_the_damped_oscillation():
    out = P.run("spring", short("spring", 100))
    assert out["unconverged_steps"] == 0
    assert out["physics"]["max_error_relative"] < 2e-3
    t = np.linspace(0.0, 0.1, 100001)
    exact = M.crossings(t, M.spring_analytic(M.MODELS["spring"], t))[0]   # 0.0507 s
    assert out["physics"]["zero_crossings"][0] == pytest.approx(exact, abs=2e-4)


@pytest.mark.parametrize("solver", ["gs", "newton"])
def test_chain_hangs_from_its_pivot_with_its_weight(solver):
    spec = short("chain", 5)
    out = P.run("chain", spec, solver)
    assert out["unconverged_steps"] == 0
    weight = spec["links"] * spec["mass"] * M.G
    # released straight and at rest, the pivot takes the chain's weight along the chain
    assert out["physics"]["tension_start"] == pytest.approx(weight * np.cos(spec["angle"]),
                                                            rel=1e-2)


def test_pour_starts_inside_its_box_without_overlaps_and_steps():
    spec = dict(M.MODELS["pour2k"], spheres=300, duration=2 * M.MODELS["pour2k"]["step"])
    x, r, v = M.pour_spheres(spec)
    assert (x[:, :2] - r[:, None] > 0).all() and (x[:, :2] + r[:, None] < spec["side"]).all()
    assert (x[:, 2] - r > 0).all()
    d = np.linalg.norm(x[:, None] - x[None], axis=2) + np.eye(len(r))
    assert (d > r[:, None] + r[None]).all()
    out = P.run("pour2k", spec)
    assert out["steps"] == 2 and out["unconverged_steps"] == 0
    assert out["physics"]["spheres"] == 300
    # falling for 1 ms: the centre of mass has not moved by more than g t^2 / 2 + v t
    com0 = (r ** 3 * x[:, 2]).sum() / (r ** 3).sum()
    assert abs(out["physics"]["com_height"] - com0) < 0.5 * M.G * 1e-3 ** 2 + 0.2 * 1e-3


def test_the_pours_springs_are_the_dem_codes_hertz_glass_at_five_weights():
    """parsolve's compliant pours take the secant of the DEM codes' Hertz contact (E, nu of
    the spec, two spheres of the mean radius) at five sphere weights: at the overlap F / k,
    Hertz's force 4/3 E* sqrt(R*) delta^3/2 is that load; the built model carries it."""
    spec = M.MODELS["pour2k"]
    r, k = 1.9e-3, spec["stiffness"]
    force = 5 * spec["density"] * 4 / 3 * np.pi * r ** 3 * M.G
    e_star = spec["young"] / (2 * (1 - spec["poisson"] ** 2))
    assert 4 / 3 * e_star * np.sqrt(r / 2) * (force / k) ** 1.5 == pytest.approx(force)
    assert 1.5e3 < k < 1.8e3
    for contacts, want in (("springs", k), ("rigid", None)):
        stiff = dict(P.build("pour2k", dict(spec, spheres=10), contacts).materials.state())
        assert [v for _, v in stiff.get("stiffness", [])] == ([want] if want else [])


def test_pour_measures_on_a_simple_cubic_packing():
    """Spheres of radius a on a simple cubic lattice of spacing 2a fill pi/6 of space: the
    packing fraction in the central region is that, and 95 % of the volume lies below
    0.95 of the bed's height."""
    a, n, layers = 1e-3, 25, 20
    spec = dict(M.MODELS["pour2k"], side=2 * a * n, rmax=a)
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(layers), indexing="ij")
    x = np.stack([(2 * i + 1) * a, (2 * j + 1) * a, (2 * k + 1) * a], -1).reshape(-1, 3)
    p = M.pour_physics(spec, x, np.full(len(x), a))
    assert p["bed_height"] == pytest.approx(0.95 * 2 * a * layers, rel=2e-3)
    assert p["packing"] == pytest.approx(np.pi / 6, rel=2e-2)
    assert p["com_height"] == pytest.approx(a * layers)


def test_dem_inputs_carry_the_models_numbers(tmp_path):
    spec = dict(M.MODELS["pour2k"], spheres=50)
    text = dem.liggghts_input(spec, "pour.data", "final.dump")
    for key in ("young", "poisson", "restitution", "friction", "dem_step"):
        assert str(spec[key]) in text
    assert f"run {dem.dem_steps(spec)}" in text
    x, r, v = M.pour_spheres(spec)
    dem.write_data(tmp_path / "pour.data", spec, x, r, v)
    lines = (tmp_path / "pour.data").read_text().splitlines()
    first = lines[lines.index("Atoms") + 2].split()
    assert float(first[2]) == 2 * r[0] and float(first[4]) == x[0, 0]
    # the DEM step is a tenth of the smallest sphere's Rayleigh time
    assert spec["dem_step"] == pytest.approx(
        0.1 * M.rayleigh_time(spec["rmin"], spec["young"], spec["poisson"], spec["density"]),
        rel=1e-2)
