"""Every bad input gets an InputError that names the item and the offending value."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError


def model():
    m = ps.Model()
    m.surface("a", "a", friction=0.3)
    m.surface("a", "floor", friction=0.3)
    m.half_space((0, 0, 0), (0, 0, 1), "floor")
    return m


@pytest.mark.parametrize("call, match", [
    (lambda m: m.sphere((0, 0, 1), 0.1, "a", mass=0.0), r"body 0: mass must be a finite number > 0, got 0.0"),
    (lambda m: m.sphere((0, 0, 1), 0.1, "a", mass=-2.0), r"body 0: mass must be a finite number > 0, got -2.0"),
    (lambda m: m.sphere((0, 0, 1), -0.1, "a", density=1.0), r"body 0: radius must be a finite number > 0"),
    (lambda m: m.sphere((0, 0, 1), 0.0, "a", density=1.0), r"body 0: radius must be a finite number > 0"),
    (lambda m: m.sphere((0, 0, 1), 0.1, "a", density=-5.0), r"body 0: density must be a finite number > 0, got -5.0"),
    (lambda m: m.box((0, 0, 1), (0.1, 0.0, 0.1), "a", density=1.0),
     r"body 0: half_extents: must be > 0, got 0.0 at index \(1,\)"),
    (lambda m: m.sphere((0, np.nan, 1), 0.1, "a", density=1.0), r"center.*not a finite number"),
    (lambda m: m.sphere((0, 0, 1), np.inf, "a", density=1.0), r"body 0: radius"),
    (lambda m: m.sphere((0, 0, 1), 0.1, "a", density=1.0, velocity=(0, 0, np.nan)),
     r"body 0: velocity: not a finite number"),
    (lambda m: m.spheres([(0, 0, 1), (0, 0, 2)], [0.1, -0.1], "a", density=1.0),
     r"body 1: radius must be a finite number > 0, got -0.1"),
    (lambda m: m.surface("a", "b", friction=-0.1), r"surface \('a', 'b'\): friction mu must be >= 0"),
    (lambda m: m.surface("a", "b", friction=np.nan), r"surface \('a', 'b'\): friction.*finite"),
    (lambda m: m.surface("a", "b", friction=0.1, restitution=1.5),
     r"restitution: must lie in \[0.0, 1.0\], got 1.5"),
    (lambda m: m.surface("a", "b", friction=0.1, restitution=-0.1), r"restitution"),
    (lambda m: m.half_space((0, 0, 0), (0, 0, 0), "floor"), r"normal: the zero vector"),
    (lambda m: m.sphere((0, 0, 1), 0.1, "a"), r"give exactly one of density and mass"),
    (lambda m: m.sphere((0, 0, 1), 0.1, "a", mass=1.0, inertia=-1.0),
     r"body 0: inertia must be a finite number > 0, got -1.0"),
    (lambda m: m.box((0, 0, 1), (0.1, 0.1, 0.1), "a", mass=1.0, inertia=(1, np.nan, 1)),
     r"body 0: inertia: not a finite number"),
    (lambda m: ps.Model(gravity=(0, 0, np.inf)), r"gravity: not a finite number"),
    (lambda m: m.box_walls((0, 0, 0), (1, -1, 1), "floor"), r"box_walls: upper"),
])
def test_bad_value_is_named(call, match):
    with pytest.raises(InputError, match=match):
        call(model())


def test_undefined_material_pair_is_named():
    m = model()
    m.sphere((0, 0, 1), 0.1, "a", density=1.0)
    m.sphere((0, 0, 2), 0.1, "b", density=1.0)
    with pytest.raises(InputError, match=r"no surface material for the pair \('a', 'b'\)"):
        m.build()


def test_material_against_obstacle_must_be_defined():
    m = model()
    m.sphere((0, 0, 1), 0.1, "b", density=1.0)
    m.surface("a", "b", friction=0.1)
    with pytest.raises(InputError, match=r"pair \('floor', 'b'\).*half-space 0"):
        m.build()


def test_duplicate_id_is_named():
    m = model()
    m.sphere((0, 0, 1), 0.1, "a", density=1.0, id=7)
    m.sphere((0, 0, 2), 0.1, "a", density=1.0, id=7)
    with pytest.raises(InputError, match="duplicate body id 7"):
        m.build()


def test_load_on_unknown_body_is_named():
    m = model()
    m.sphere((0, 0, 1), 0.1, "a", density=1.0)
    m.load(42, force=(1, 0, 0))
    with pytest.raises(InputError, match="load on unknown body 42"):
        m.build()


def test_bad_solver_settings_and_step():
    with pytest.raises(InputError, match="tol"):
        ps.GaussSeidel(tol=-1)
    with pytest.raises(InputError, match="omega"):
        ps.GaussSeidel(omega=2.5)
    m = model()
    m.sphere((0, 0, 1), 0.1, "a", density=1.0)
    with pytest.raises(InputError, match="step: must be > 0"):
        m.run(1.0, step=0.0)
