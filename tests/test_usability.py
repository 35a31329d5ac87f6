"""What users reach for first: orientations in any form, rank and size for scripts, a restart
with another step size, progress, plots and `parsolve info` that tell the run's story."""
import os

import numpy as np
import pytest

import parsolve as ps
from parsolve.cli import describe
from parsolve.dynamics.rotation import axis_angle_to_quat, matrix_to_quat, quat_to_matrix
from parsolve.errors import InputError
from parsolve.io.plot import plot_history
from tests.scenes import on_floor, run


def test_an_orientation_is_a_quaternion_a_matrix_or_an_axis_and_angle():
    axis, angle = np.array([1.0, 2.0, -0.5]), 0.7
    q = axis_angle_to_quat(axis, angle)
    R = quat_to_matrix(q[None])[0]
    np.testing.assert_allclose(matrix_to_quat(R), q, atol=1e-15)
    for k in range(4):                          # every branch of Shepperd's method
        r = np.random.default_rng(k).normal(size=4)
        r[k] += 3.0
        r /= np.linalg.norm(r) * np.sign(r[0])
        np.testing.assert_allclose(matrix_to_quat(quat_to_matrix(r[None])[0]), r, atol=1e-14)
    m = ps.Model()
    m.surface("b", "b", 0.3)
    ids = [m.box((0, 0, 0), (0.1, 0.2, 0.3), "b", density=1, orientation=o)
           for o in (q, R, (axis, angle))]
    bodies = m.build()
    for i in ids:
        np.testing.assert_allclose(bodies.q[i], q, atol=1e-15)
    for bad, message in [(((0, 0, 0), 1.0), "rotation axis is zero"),
                         (np.diag([1.0, 1.0, -1.0]), "not a rotation matrix"),
                         ((0, 0, 0, 0), "quaternion is zero")]:
        with pytest.raises(InputError, match=message):
            m.box((0, 0, 0), (0.1, 0.1, 0.1), "b", density=1, orientation=bad)


def test_rank_and_size_without_mpirun():
    assert (ps.rank(), ps.size()) == (0, 1)


def test_a_restart_with_another_step_size_continues_with_a_warning(tmp_path, capsys):
    m = on_floor(mu=0.4)
    m.sphere((0, 0, 0.05), 0.05, "body", density=1000, velocity=(0.5, 0, 0))
    ck = str(tmp_path / "ck")
    run(m, 0.1, 1e-3, checkpoint_every=50, checkpoint_dir=ck)
    sim = ps.Simulation(m, step=5e-4, restart=os.path.join(ck, "checkpoint-000000100.h5"),
                        solver=ps.GaussSeidel(tol=1e-10), progress=0)
    sim.run(0.2)
    out = capsys.readouterr().out
    assert "continuing with the new step" in out
    assert sim.step_count == 400 and sim.time == pytest.approx(0.2)
    # rolling without slip, then at rest on the floor: the scaled warm start is right at once
    assert sim.history[0]["iterations"] < 20 and sim.owned.x[0, 2] == pytest.approx(0.05)


def test_progress_plots_and_info_tell_the_run_s_story(tmp_path, capsys):
    m = on_floor(mu=0.4, e=0.5)
    m.sphere((0, 0, 0.3), 0.05, "body", density=1000)
    out = str(tmp_path / "res.h5")
    sim = ps.Simulation(m, step=1e-3, output=out, progress=1e-9,
                        solver=ps.GaussSeidel(tol=1e-9, max_iter=77))
    sim.run(0.3)
    printed = capsys.readouterr().out
    assert "ms/step now" in printed and " mean, ETA" in printed
    info = describe(out)
    assert "run: 300 steps in" in info and "unconverged steps 0" in info
    written = plot_history(out, str(tmp_path / "plots"))
    names = sorted(os.path.basename(p) for p in written)
    assert names == ["contacts.png", "energy-balance.png", "energy.png", "iterations.png",
                     "phases.png", "residual.png"]
    assert all(os.path.getsize(p) > 10000 for p in written)
