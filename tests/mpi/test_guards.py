"""The fast-body guard does not depend on the rank count (issue 38): a fast body whose only
neighbour within reach lies beyond the ghost layer (a contact's reach), on whichever rank
owns it, is reported on any number of ranks; a fast body alone in space on none."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.parallel import Comm
from parsolve.run import Simulation

H = 1e-3


def row():
    """30 spheres of 1 cm at rest 0.2 m apart along x, no gravity; before each but the first,
    6.5 cm behind, a sphere moving 5 cm a step towards it (within its reach, beyond a ghost
    layer of one diameter: wherever the ranks' cuts fall, some of them lie between the two);
    the last, 0.5 m aside, moves as fast alone."""
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("g", "g", friction=0.3)
    x = np.stack([0.2 * np.arange(30), np.zeros(30), np.zeros(30)], axis=1)
    m.spheres(x, 0.01, "g", density=1000)
    fast = np.concatenate([x[1:] - (0.065, 0, 0), [(2.0, 0.5, 0)]])
    m.spheres(fast, 0.01, "g", density=1000, velocities=np.tile((50.0, 0, 0), (30, 1)))
    return m


@pytest.mark.mpi(min_size=1)
def test_a_fast_body_is_reported_whatever_the_rank_count(capsys):
    comm = Comm()
    summary = Simulation(row(), step=H, progress=0, comm=comm).run(H)
    out = capsys.readouterr().out
    assert summary["guard_events"] == 29        # exact; the reports are a sample per rank
    if comm.root:
        assert out.count("moved 0.05 m in one step") == 10 and "body 59" not in out, out
