"""The fast-body guard warns only when something could be passed through (issue 38): a body
alone in space moving many radii a step is no tunnelling hazard; one heading at a wall, a fixed
box or another body within reach of its path is."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.run import Simulation

H = 1e-3


def fast(neighbour=None):
    """A sphere of 1 cm moving 20 m/s (2 radii a step) along x, without gravity; and
    optionally something ahead of it."""
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("g", "g", friction=0.3)
    m.sphere((0, 0, 0), 0.01, "g", density=1000, velocity=(20.0, 0, 0))
    if neighbour == "far wall":             # 10 m ahead: beyond a step's reach
        m.half_space((10.0, 0, 0), (-1, 0, 0), "g", name="far")
    elif neighbour == "wall":               # 2.5 cm ahead: within it
        m.half_space((0.025, 0, 0), (-1, 0, 0), "g", name="near")
    elif neighbour == "fixed box":
        m.box((0.03, 0, 0), (0.005, 0.05, 0.05), "g", fixed=True, name="slab")
    elif neighbour == "body":
        m.sphere((0.035, 0, 0), 0.01, "g", density=1000)
    elif neighbour == "body far":
        m.sphere((0.0, 5.0, 0), 0.01, "g", density=1000)
    return m


@pytest.mark.parametrize("neighbour, warned", [(None, False), ("far wall", False),
                                               ("body far", False), ("wall", True),
                                               ("fixed box", True), ("body", True)])
def test_a_fast_body_is_reported_only_with_something_within_reach(neighbour, warned, capsys):
    summary = Simulation(fast(neighbour), step=H, progress=0).run(H)
    out = capsys.readouterr().out
    assert ("body 0 moved 0.02 m in one step" in out) is warned, out
    assert summary["guard_warnings"] == int(warned)
