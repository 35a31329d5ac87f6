"""User-given names in error messages are quoted one way, as Python's repr of a string (issue
38): materials, obstacles, sensors and files (given as str or as pathlib.Path) alike."""
import pathlib

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import ParsolveError
from parsolve.io import checkpoint, describe, fclib, meshfile, render
from parsolve.parallel import Comm
from parsolve.run import Simulation


def message(fn, *args):
    with pytest.raises(ParsolveError) as info:
        fn(*args)
    return str(info.value)


def model():
    m = ps.Model()
    m.surface("grain", "grain", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "steel", name="floor")
    m.sphere((0, 0, 0.1), 0.1, "grain", density=1000)
    return m


def test_materials_obstacles_and_sensors_are_quoted(tmp_path):
    m = model()                                       # no surface for (grain, steel)
    assert "('grain', 'steel')" in message(lambda: Simulation(m, step=1e-3, quiet=True,
                                                               progress=0))
    m = model()
    assert "no obstacle named 'roof' (the model has 'floor')" in message(
        m.move, "roof", lambda t: np.zeros(3), lambda t: np.zeros(3))
    m = model()
    m.surface("grain", "steel", friction=0.3)
    m.sensor("gauge", pairs=[(0, "roof")])
    text = message(lambda: Simulation(m, step=1e-3, quiet=True, progress=0,
                                      output=str(tmp_path / "res.h5")).run(1e-3))
    assert "sensor 'gauge'" in text and "'roof'" in text, text


@pytest.mark.parametrize("read", [
    lambda p: checkpoint.read(p, Comm()), fclib.read, describe.describe, meshfile.read,
    render.render], ids=["checkpoint", "fclib", "info", "mesh", "render"])
@pytest.mark.parametrize("kind", [str, pathlib.Path])
def test_a_file_is_quoted_as_a_string_whatever_its_type(tmp_path, read, kind):
    path = tmp_path / "missing.h5"
    text = message(read, kind(path))
    assert repr(str(path)) in text and "PosixPath" not in text, text
