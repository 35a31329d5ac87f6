"""The slab partition's cuts (on one rank, as every rank computes them from reduced
histograms): equal shares of bodies, or of measured load."""
import numpy as np
import pytest
from mpi4py import MPI

from parsolve.errors import InputError
from parsolve.parallel.domain import Domain
from parsolve.parallel import Comm
from parsolve.parallel.partition import SlabPartition


def points(columns=100, per_column=10):
    x = (np.repeat(np.arange(columns), per_column) + 0.5)[:, None] * np.array([[1.0, 0, 0]])
    return x


def test_uniform_load_is_cut_into_equal_slabs():
    part = SlabPartition(4, cell=1.0)
    part.balance(MPI.COMM_SELF, points())
    np.testing.assert_array_equal(part.bounds, [25, 50, 75])
    counts = np.bincount(part.owner(points()), minlength=4)
    np.testing.assert_array_equal(counts, [250] * 4)


def test_weighted_cuts_give_the_heavier_half_fewer_bodies():
    """Bodies left of x = 50 weigh 3 (a rank three times slower measured them): the total
    weight 3*500 + 500 splits at 2000/2, i.e. after 1000/3 = 33.3 columns."""
    x = points()
    part = SlabPartition(2, cell=1.0)
    part.balance(MPI.COMM_SELF, x, np.where(x[:, 0] < 50, 3.0, 1.0))
    assert part.bounds[0] == 33                           # the nearer of 33 and 34
    load = np.bincount(part.owner(x), weights=np.where(x[:, 0] < 50, 3.0, 1.0))
    assert abs(load[0] - load[1]) <= 30                    # one column's weight


def test_a_cut_that_would_only_mirror_the_imbalance_is_not_moved():
    """Three equal columns on two ranks: 2:1 either way; with gain the cut stays, without it
    it flips; an imbalance that a move does halve is corrected."""
    x = points(columns=3)
    part = SlabPartition(2, cell=1.0, bounds=[1])
    assert not part.balance(MPI.COMM_SELF, x, gain=0.5) and part.bounds[0] == 1
    assert part.balance(MPI.COMM_SELF, x) and part.bounds[0] == 2
    part = SlabPartition(2, cell=1.0, bounds=[1])
    assert part.balance(MPI.COMM_SELF, points(columns=100), gain=0.5)
    assert part.bounds[0] == 50


def test_imbalance_is_max_over_mean():
    part = SlabPartition(1, cell=1.0)
    assert part.imbalance(MPI.COMM_SELF, 7.0) == 1.0


def test_measured_load_weighs_the_units_of_the_bodies():
    """On one rank the relative speed is 1: the load is the units (1 + contacts per body)."""
    dom = Domain(Comm(MPI.COMM_SELF), 1.0)
    assert (dom.body_load(3) == 1).all()                  # nothing measured yet
    dom.min_seconds, dom.min_steps = 0.0, 1
    dom.record_work(0.5, [1.0, 3.0, 7.0])
    np.testing.assert_allclose(dom.body_load(3), [1.0, 3.0, 7.0])
    assert (Domain(Comm(MPI.COMM_SELF), 1.0, balance="bodies").body_load(2) == 1).all()


@pytest.mark.parametrize("options, culprit", [({"balance": "speed"}, "balance"),
                                              ({"tolerance": 0.9}, "balance_tolerance")])
def test_bad_balance_options_are_refused(options, culprit):
    with pytest.raises(InputError, match=culprit):
        Domain(Comm(MPI.COMM_SELF), 1.0, **options)


def test_a_schedule_relaxes_the_boundary_sends_relaxes_the_interior_then_receives():
    from parsolve.parallel.colouring import ColourSchedule

    calls = []
    schedule = ColourSchedule([np.array([4, 1, 7]), np.array([0, 2])], boundary=[2, 0],
                              start=lambda c: calls.append(("start", c)),
                              finish=lambda c: calls.append(("finish", c)))
    schedule.visit(lambda order: calls.append(order.tolist()))
    assert calls == [[4, 1], ("start", 0), [7], ("finish", 0),
                     ("start", 1), [0, 2], ("finish", 1)]
    calls.clear()
    ColourSchedule.single(3).visit(lambda order: calls.append(order.tolist()))
    assert calls == [[0, 1, 2]]
