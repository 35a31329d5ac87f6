"""Sensors: time series of chosen bodies and contact pairs, equal to what the frames hold, at a
cost that does not grow with the model."""
import os

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.io.hdf5 import h5py_module
from tests.scenes import G, on_floor, run


def bouncing(tmp_path, every=1, frames=1e-3):
    m = on_floor(mu=0.2, e=0.8)
    ball = m.sphere((0, 0, 0.2), 0.05, "body", density=1000, velocity=(0.3, 0, 0))
    m.sphere((1.0, 0, 0.05), 0.05, "body", density=1000)
    m.sensor("ball", bodies=[ball], quantities=("x", "v", "contact_force"), every=every)
    m.sensor("height", bodies=[0, 1], quantities={"z": lambda s: s["x"][:, 2],
                                                  "speed": lambda s: np.linalg.norm(s["v"], axis=1)})
    m.sensor("floor", pairs=[(0, "half-space 0"), (1, "half-space 0")], quantities=("force", "points"))
    out = str(tmp_path / "res.h5")
    sim = run(m, 0.4, 1e-3, output=out, frames=frames)
    return sim, out


def test_a_bouncing_ball_s_sensor_equals_the_frames(tmp_path):
    sim, out = bouncing(tmp_path)
    with h5py_module().File(out, "r") as f:
        s = f["sensors/ball"]
        steps = s["step"][()]
        assert list(steps) == list(range(0, 401)) and list(s.attrs["bodies"]) == [0]
        for k in (0, 57, 200, 400):
            frame = f[f"frames/{list(f['frames/step'][()]).index(steps[k]):06d}/bodies"]
            row = list(frame["gid"][()]).index(0)
            np.testing.assert_array_equal(s["x"][k, 0], frame["x"][row])
            np.testing.assert_array_equal(s["v"][k, 0], frame["v"][row])
        z = f["sensors/height/z"][()]
        assert z.shape == (401, 2, 1) and z[0, 0, 0] == 0.2 and z[-1, 1, 0] == pytest.approx(0.05)
        # the contact force on the resting ball, and the floor's force on it, carry its weight
        mass = 1000 * 4 / 3 * np.pi * 0.05 ** 3
        np.testing.assert_allclose(f["sensors/floor/force"][-1, 1], (0, 0, mass * G),
                                   rtol=1e-6, atol=1e-9)
        assert f["sensors/floor/points"][-1, 1, 0] == 1
        impacts = np.flatnonzero(f["sensors/floor/points"][:, 0, 0])
        assert len(impacts) == 1 and 170 < impacts[0] < 180     # the impact at 0.175 s
        np.testing.assert_allclose(s["contact_force"][impacts, 0],
                                   f["sensors/floor/force"][impacts, 0], rtol=1e-12)


def test_sensors_sample_every_n_steps(tmp_path):
    sim, out = bouncing(tmp_path, every=10, frames=None)
    with h5py_module().File(out, "r") as f:
        assert list(f["sensors/ball/step"][()]) == list(range(0, 401, 10))


def test_a_restarted_leg_continues_the_sensors_and_the_energy_balance(tmp_path):
    """The restarted leg's file holds the first leg's samples up to the checkpoint, then its
    own: no gap, no sample twice, equal to the uninterrupted run's."""
    (tmp_path / "full").mkdir()
    full = bouncing(tmp_path / "full")[1]
    first = tmp_path / "legs"
    first.mkdir()
    m = on_floor(mu=0.2, e=0.8)
    m.sphere((0, 0, 0.2), 0.05, "body", density=1000, velocity=(0.3, 0, 0))
    m.sphere((1.0, 0, 0.05), 0.05, "body", density=1000)
    m.sensor("ball", bodies=[0], quantities=("x", "v", "contact_force"))
    opts = dict(output=str(first / "res.h5"), frames=1e-3, checkpoint_dir=str(first / "ck"))
    run(m, 0.25, 1e-3, checkpoint_every=100, **opts)
    run(m, 0.4, 1e-3, restart=str(first / "ck" / "checkpoint-000000200.h5"), **opts)
    h5py = h5py_module()
    with h5py.File(full, "r") as a, h5py.File(first / "res.restart-000000200.h5", "r") as b:
        for name in ("step", "x", "v", "contact_force"):
            np.testing.assert_array_equal(a[f"sensors/ball/{name}"][()],
                                          b[f"sensors/ball/{name}"][()])
        for name in ("step", "kinetic_energy", "dissipated", "energy_error"):
            np.testing.assert_array_equal(a[f"history/{name}"][()], b[f"history/{name}"][()])


def test_a_sensor_costs_nothing_like_the_model(tmp_path):
    """10^5 free-falling spheres: one body's sensor adds less than 1 % to what is written."""
    sizes = []
    for with_sensor in (False, True):
        m = ps.Model()
        m.surface("g", "g", friction=0.3)
        k = np.arange(100000)
        m.spheres(np.stack([k % 100, (k // 100) % 100, k // 10000], 1) * 0.03, 0.01, "g",
                  density=1000)
        if with_sensor:
            m.sensor("one", bodies=[123], quantities=("x", "v"))
        out = str(tmp_path / f"res{with_sensor}.h5")
        run(m, 0.005, 1e-3, output=out)
        parts = tmp_path / f"res{with_sensor}.parts"
        sizes.append(sum(os.path.getsize(parts / p) for p in os.listdir(parts)))
    assert sizes[1] < 1.01 * sizes[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(bodies=[0], quantities=("nope",)), "unknown quantity 'nope'"),
    (dict(pairs=[(0, "ceiling")]), "no obstacle named 'ceiling'"),
    (dict(bodies=[7]), "of its bodies are not in the model"),
    (dict(), "give bodies=, pairs= or joints="),
    (dict(joints=["hinge"]), "no joint named 'hinge'"),
    (dict(joints=["pin"], quantities=("points",)), "unknown quantity 'points'"),
    (dict(bodies=[0], every=0), "every must be >= 1"),
])
def test_bad_sensors_are_refused_by_name(tmp_path, kwargs, message):
    m = on_floor()
    m.sphere((0, 0, 0.2), 0.05, "body", density=1000)
    with pytest.raises(InputError, match=message):
        m.sensor("s", **kwargs)
        run(m, 0.002, 1e-3, output=str(tmp_path / "res.h5"))
