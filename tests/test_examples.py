"""Every script of examples/, run as a user runs it (`parsolve run`), shortened by its own
arguments to a few seconds, and checked for the physics it shows."""
import os
import subprocess
import sys

import numpy as np
import pytest

from parsolve.io.hdf5 import h5py_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
ENV = dict(os.environ, PYTHONPATH=ROOT)


def run_example(name, tmp_path, *args):
    """Run examples/NAME with `args` after `--`; returns its results (first and last frame
    of the bodies, the history) read back from the file."""
    out = str(tmp_path / f"{name}.h5")
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "run",
                        os.path.join(EXAMPLES, f"{name}.py"), "--output", out, "--", *args],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "run summary" in p.stdout
    with h5py_module().File(out, "r") as f:
        last = f["frames/time"].shape[0] - 1
        frame = lambda k: {q: f[f"frames/{k:06d}/bodies/{q}"][()]  # noqa: E731
                           for q in ("gid", "x", "radius")}
        history = {q: f[f"history/{q}"][()] for q in
                   ("kinetic_energy", "potential_energy", "dissipated", "energy_error")}
        return frame(0), frame(last), history


def test_examples_folder_holds_the_scripts_tested_here():
    assert sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")) == \
        ["arch.py", "cam_follower.py", "collapse.py", "direct_shear.py", "drum.py", "hopper.py",
         "pour.py"]
    # cam_follower.py is run and checked by tests/test_drivers.py


def energy_closes(h, tol=1e-4):
    """Moreau's midpoint scheme keeps E(0) = E(t) + dissipated to round-off; the contacts
    take energy away (a tenth of E(0) and more in these runs), and E(t) never rises above
    E(0) by more than the solver's tolerance (1e-4 in both scripts) lets a step give back."""
    e0 = h["kinetic_energy"][0] + h["potential_energy"][0]
    assert np.abs(h["energy_error"]).max() <= 1e-9 * e0
    assert h["dissipated"][-1] > 0.1 * e0
    assert (h["kinetic_energy"] + h["potential_energy"]).max() <= (1 + tol) * e0


def test_pour_the_beads_fall_into_the_box_and_stay_in_it(tmp_path):
    first, last, h = run_example("pour", tmp_path, "--spheres", "150", "--duration", "0.1")
    assert len(last["gid"]) == 150
    x, r = last["x"], last["radius"]
    assert last["x"][:, 2].mean() < first["x"][:, 2].mean()          # the pile sinks
    box = np.array([0.12, 0.12, 0.5])                                  # pour.py's container
    assert (x - r[:, None] >= -0.1 * r[:, None]).all()                 # walls and floor hold
    assert (x + r[:, None] <= box + 0.1 * r[:, None]).all()
    energy_closes(h)


def test_collapse_the_column_spreads_along_the_channel_and_slumps(tmp_path):
    first, last, h = run_example("collapse", tmp_path, "--spheres", "300", "--width", "4",
                                 "--duration", "0.04", "--output", "unused.h5")
    x0, x1 = first["x"], last["x"]
    r = last["radius"]
    assert x1[:, 0].max() > x0[:, 0].max() + 2 * r.max()              # the front runs out
    assert x1[:, 2].max() < x0[:, 2].max() - 2 * r.max()              # the top comes down
    assert (x1 - r[:, None] >= -0.1 * r[:, None]).all()                # inside the channel
    energy_closes(h)


def test_direct_shear_the_layer_resists_with_the_friction_of_spheres(tmp_path):
    """Casagrande's shear box (examples/direct_shear.py): once the frame has travelled half a
    grain diameter, the ratio of the shear force (the guides' reactions, read by the joint
    sensor) to the normal load lies in 0.25-0.5, the range reported for frictional spheres
    (mu = 0.5: tan(phi) ~ 0.3-0.45); the cap's guides keep it on its axis."""
    out = str(tmp_path / "shear.h5")
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "run",
                        os.path.join(EXAMPLES, "direct_shear.py"), "--output", out, "--",
                        "--spheres", "300", "--travel", "0.004", "--step", "1e-3"],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    sys.path.insert(0, EXAMPLES)
    try:
        from direct_shear import build, shear_ratio
    finally:
        sys.path.remove(EXAMPLES)
    info = build(300, travel=0.004)[1]
    with h5py_module().File(out, "r") as f:
        t = f["sensors/shear/time"][()]
        force = f["sensors/shear/force"][()]
        x = f["sensors/cap/x"][()][:, 0]
    assert force.shape[1] == 4 * 6 + 5                  # the walls' 6 joints each, the cap's 5
    ratio = shear_ratio(force, info["load"])
    steady = t > info["settle"] + 0.1
    assert 0.25 <= ratio[steady].mean() <= 0.5, ratio[steady].mean()
    assert np.ptp(x[:, 1]) < 1e-9                                 # held across the shear
    assert x[-1, 0] - x[0, 0] == pytest.approx(0.004, rel=0.02)  # driven along it


def test_arch_a_thick_one_stands_a_thin_one_falls(tmp_path):
    """examples/arch.py: 11 voussoirs at t / R = 0.2 (above Heyman's 0.1075) stand, the
    keystone still within 1e-4 R; at 0.05 the crown drops."""
    first, last, h = run_example("arch", tmp_path, "--blocks", "11", "--ratio", "0.2",
                                 "--duration", "0.2")
    assert np.abs(last["x"] - first["x"]).max() < 1e-4
    first, last, h = run_example("arch", tmp_path, "--blocks", "11", "--ratio", "0.05",
                                 "--duration", "0.3")
    assert first["x"][5, 2] - last["x"][5, 2] > 0.05


def test_hopper_the_beads_flow_out_of_the_stl_hopper_once_the_gate_opens(tmp_path):
    """examples/hopper.py, short: beads and clumps in a cone read from the STL the script
    writes (millimetres); nothing leaves while the gate is shut, beads leave once it has
    slid away, none passes through the cone's walls; the gate is drawn where it went."""
    out = str(tmp_path / "hopper.h5")
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "run",
                        os.path.join(EXAMPLES, "hopper.py"), "--output", out, "--",
                        "--beads", "300", "--clumps", "60", "--duration", "0.3", "--open",
                        "0.1"], cwd=tmp_path, env=ENV, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Beverloo" in p.stdout
    sys.path.insert(0, EXAMPLES)
    try:
        import hopper
    finally:
        sys.path.remove(EXAMPLES)
    with h5py_module().File(out, "r") as f:
        t = f["sensors/out/time"][()]
        below = f["sensors/out/below"][()][:, :, 0].sum(axis=1)
        last = f["frames/time"].shape[0] - 1
        x = f[f"frames/{last:06d}/bodies/x"][()]
        radius = f[f"frames/{last:06d}/bodies/radius"][()]
        gate = f[f"frames/{last:06d}/obstacles/point"][()]
        energy = {q: f[f"history/{q}"][()] for q in ("kinetic_energy", "potential_energy",
                                                     "energy_error")}
    assert below[t < 0.1].max() == 0 and below[-1] > 10
    np.testing.assert_allclose(gate, [(0.1, 0, -0.005)], atol=1e-12)
    inside = x[:, 2] > 0.005                              # in the cone or the bin
    wall = 0.5 * hopper.OUTLET + (0.5 * hopper.WIDTH - 0.5 * hopper.OUTLET) * np.minimum(
        x[inside, 2] / hopper.RISE, 1)
    assert (np.hypot(x[inside, 0], x[inside, 1]) < wall + 0.1 * radius[inside]).all()
    # the clumps' inertia is not isotropic: their gyroscopic moment, taken at the half step
    # (explicitly), does a little work the balance does not count (beads alone: 6e-16 J)
    e0 = energy["kinetic_energy"][0] + energy["potential_energy"][0]
    assert np.abs(energy["energy_error"]).max() < 1e-4 * abs(e0)


def test_drum_the_beads_stay_in_the_turning_drum_and_the_balance_closes(tmp_path):
    """examples/drum.py, short: beads in the turning drum mesh stay inside it, are lifted on
    the rising side, and the energy balance closes with the drum's work."""
    first, last, h = run_example("drum", tmp_path, "--beads", "300", "--duration", "0.4",
                                 "--omega", "3")
    sys.path.insert(0, EXAMPLES)
    try:
        import drum
    finally:
        sys.path.remove(EXAMPLES)
    r = np.hypot(last["x"][:, 1], last["x"][:, 2])
    assert (r < drum.R_DRUM).all()
    assert last["x"][:, 1].mean() > first["x"][:, 1].mean() + 0.002      # carried up on +y
    e0 = h["kinetic_energy"][0] + h["potential_energy"][0]
    assert np.abs(h["energy_error"]).max() < 1e-6 * abs(e0)
