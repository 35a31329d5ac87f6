"""The partition's cuts (on one rank, as every rank computes them from exactly reduced
histograms): recursive coordinate bisection of whole cells into equal shares of bodies, or
of measured load, and the holders and neighbours that follow from the boxes."""
import itertools

import numpy as np
import pytest
from mpi4py import MPI

from parsolve.errors import InputError
from parsolve.parallel.domain import Domain
from parsolve.parallel import Comm
from parsolve.parallel.partition import RCBPartition


def points(columns=100, per_column=10):
    x = (np.repeat(np.arange(columns), per_column) + 0.5)[:, None] * np.array([[1.0, 0, 0]])
    return x


def lattice(nx, ny, nz):
    """One point at the centre of every cell of an nx x ny x nz block from the origin."""
    return np.array(list(itertools.product(range(nx), range(ny), range(nz)))) + 0.5


def test_uniform_load_along_one_axis_is_cut_into_equal_slabs():
    part = RCBPartition(4, cell=1.0)
    part.balance(MPI.COMM_SELF, points())
    np.testing.assert_array_equal(part.cuts(), [[0, 50], [0, 25], [0, 75]])
    counts = np.bincount(part.owner(points()), minlength=4)
    np.testing.assert_array_equal(counts, [250] * 4)


def test_a_cube_is_cut_across_its_longest_extents_into_equal_boxes():
    """A 12 x 8 x 8 block of cells on 4 ranks: first across x (the longest), then each half
    (6 x 8 x 8) across y; every rank gets a 6 x 4 x 8 box, a quarter of the cells."""
    x = lattice(12, 8, 8)
    part = RCBPartition(4, cell=1.0)
    part.balance(MPI.COMM_SELF, x)
    np.testing.assert_array_equal(part.cuts(), [[0, 6], [1, 4], [1, 4]])
    np.testing.assert_array_equal(np.bincount(part.owner(x), minlength=4), [192] * 4)
    assert len(set(part.cuts()[:, 0])) >= 2


def test_any_rank_count_splits_the_load_in_proportion_to_the_ranks():
    """3 ranks: 1 below the first cut, 2 above it, with a third and two thirds of the load;
    7 ranks: every rank within one layer of cells of 1/7."""
    x = lattice(30, 6, 6)
    part = RCBPartition(3, cell=1.0)
    part.balance(MPI.COMM_SELF, x)
    assert part.cuts()[0].tolist() == [0, 10]
    np.testing.assert_array_equal(np.bincount(part.owner(x), minlength=3), [360] * 3)
    part = RCBPartition(7, cell=1.0)
    part.balance(MPI.COMM_SELF, lattice(21, 14, 7))
    counts = np.bincount(part.owner(lattice(21, 14, 7)), minlength=7)
    assert counts.sum() == 2058 and np.abs(counts - 294).max() <= 49     # one 7 x 7 layer


def test_weighted_cuts_give_the_heavier_half_fewer_bodies():
    """Bodies left of x = 50 weigh 3 (a rank three times slower measured them): the total
    weight 3*500 + 500 splits at 2000/2, i.e. after 1000/3 = 33.3 columns."""
    x = points()
    part = RCBPartition(2, cell=1.0)
    part.balance(MPI.COMM_SELF, x, np.where(x[:, 0] < 50, 3.0, 1.0))
    assert part.cuts()[0].tolist() == [0, 33]             # the nearer of 33 and 34
    load = np.bincount(part.owner(x), weights=np.where(x[:, 0] < 50, 3.0, 1.0))
    assert abs(load[0] - load[1]) <= 30                    # one column's weight


def test_a_cut_that_would_only_mirror_the_imbalance_is_not_moved():
    """Three equal columns on two ranks: 2:1 either way; with gain the cut stays, without it
    it flips; an imbalance that a move does halve is corrected."""
    x = points(columns=3)
    part = RCBPartition(2, cell=1.0, cuts=[(0, 1)])
    assert not part.balance(MPI.COMM_SELF, x, gain=0.5) and part.cuts()[0].tolist() == [0, 1]
    assert part.balance(MPI.COMM_SELF, x) and part.cuts()[0].tolist() == [0, 2]
    part = RCBPartition(2, cell=1.0, cuts=[(0, 1)])
    assert part.balance(MPI.COMM_SELF, points(columns=100), gain=0.5)
    assert part.cuts()[0].tolist() == [0, 50]


def test_slabs_cut_one_axis_only():
    part = RCBPartition(4, cell=1.0, axes=(2,))
    part.balance(MPI.COMM_SELF, lattice(12, 8, 8))
    assert (part.cuts()[:, 0] == 2).all()


@pytest.mark.parametrize("cuts", [
    [(0, 6), (1, 4), (2, 5)],          # a cube in four boxes
    [(0, 6), (0, 5), (1, 4)],          # rank 1's box is one cell thin (x = 5)
    [(0, 6), (0, 6), (1, 4)],          # rank 1's box is empty
])
def test_holders_are_the_ranks_whose_grown_box_holds_the_cell(cuts):
    """Against a brute-force test of every (cell, rank): holders are exactly the non-empty
    boxes within one cell, the owner among them; two holders of one body are neighbours."""
    part = RCBPartition(4, cell=1.0, cuts=cuts)
    x = lattice(14, 10, 10) - 1.0               # the cube and one layer of cells around it
    cells = part.cells(x)
    lo, hi = part.lo, part.hi
    expect = [(i, r) for i, c in enumerate(cells) for r in range(4)
              if (lo[r] < hi[r]).all()
              and (np.maximum(lo[r], c - 1) < np.minimum(hi[r], c + 2)).all()]
    rows, ranks = part.holders(x)
    assert list(zip(rows.tolist(), ranks.tolist())) == expect
    owner = part.owner(x)
    assert ((lo[owner] <= cells) & (cells < hi[owner])).all()
    assert set(zip(range(len(x)), owner.tolist())) <= set(expect)
    near = [set(part.neighbours(r).tolist()) for r in range(4)]
    for r in range(4):
        assert all(r in near[s] for s in near[r])                     # symmetric
    for i in range(len(x)):
        held = ranks[rows == i]
        assert all(set(held.tolist()) <= near[r] for r in held)


def test_imbalance_is_max_over_mean():
    part = RCBPartition(1, cell=1.0)
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
                                              ({"tolerance": 0.9}, "balance_tolerance"),
                                              ({"partition": "metis"}, "partition")])
def test_bad_balance_options_are_refused(options, culprit):
    with pytest.raises(InputError, match=culprit):
        Domain(Comm(MPI.COMM_SELF), 1.0, **options)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_the_compiled_tree_queries_equal_their_twins(size):
    """kernels/partition.pyx's descend and holders against partition.descend and holders:
    random cuts on every axis (some boxes empty), cells inside and far outside the boxes,
    reaches from 0 to beyond the whole tree."""
    from parsolve._kernels import compiled
    from parsolve.parallel import partition

    modules = compiled("partition")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    kernel = modules[0]
    rng = np.random.default_rng(size)
    part = RCBPartition(size, cell=1.0)
    for trial in range(5):
        n_int = len(part.internal)
        cuts = np.stack([rng.integers(0, 3, n_int), rng.integers(-6, 7, n_int)], axis=1)
        if trial == 0 and n_int:
            cuts[:, 1] = 0                          # every cut at one plane: empty boxes
        part.set_cuts(cuts)
        cells = rng.integers(-12, 13, (3000, 3)).astype(np.int64)
        cells[:5] = [[0, 0, 0], [-1, 0, 0], [2 ** 30, 0, 0], [-(2 ** 30), 5, 5], [6, -6, 6]]
        reach = rng.integers(0, 4, len(cells)).astype(np.int64)
        reach[:50] = 2 ** 20
        tree = (part.axis, part.cut, part.left, part.right, part.leaf_rank)
        np.testing.assert_array_equal(kernel.descend(cells, *tree),
                                      partition.descend(cells, *tree))
        full = (part.lo < part.hi).all(axis=1).view(np.int8)
        got, twin = kernel.holders(cells, reach, *tree, full), \
            partition.holders(cells, reach, *tree, full)
        for a, b in zip(got, twin):
            assert a.dtype == b.dtype == np.int64
            np.testing.assert_array_equal(a, b)
        if full.all():                              # every cell has its owner at least
            assert len(got[0]) >= len(cells)
        empty = kernel.holders(cells[:0], reach[:0], *tree, full)
        assert [len(a) for a in empty] == [0, 0]
