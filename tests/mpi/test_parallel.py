"""Run under mpirun at 2 and 3 ranks (make test-mpi): collective errors and the distributed
Delassus operator."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.parallel.operators import delassus_matrix
from parsolve.errors import CollectiveError, InputError, ParsolveError
from parsolve.parallel import Comm

pytestmark = pytest.mark.mpi(min_size=2)


def row_slice(indptr, indices, blocks, first, last):
    """The block rows [first, last) of a block-CSR matrix, re-based for delassus_matrix."""
    k0, k1 = indptr[first], indptr[last]
    return indptr[first:last + 1] - k0, indices[k0:k1], blocks[k0:k1]


def test_an_error_on_one_rank_is_raised_on_every_rank():
    comm = Comm()
    last = comm.size - 1
    with pytest.raises(ParsolveError) as info:
        with comm.collective():
            if comm.rank == last:
                raise InputError("body 3: radius must be a finite number > 0, got -1.0")
    assert "body 3: radius must be a finite number > 0, got -1.0" in str(info.value)
    if comm.rank == last:
        assert type(info.value) is InputError
    else:
        assert type(info.value) is CollectiveError
        assert f"raised on rank {last}" in str(info.value)
    comm.free()


def test_no_error_means_no_exception_and_no_hang():
    comm = Comm()
    for _ in range(3):
        with comm.collective():
            pass
    comm.free()


def test_comms_of_one_communicator_share_one_duplicate_freed_with_the_last():
    """PyOP2's internal communicator: one Dup per user communicator, cached on it."""
    from parsolve.parallel.comm import _INTERNAL

    base = MPI.COMM_WORLD.Dup()
    a, b = Comm(base), Comm(base)
    assert a.mpi is b.mpi and MPI.Comm.Compare(a.mpi, base) == MPI.CONGRUENT
    a.free()
    assert b.sum(1) == b.size                     # still alive for its other user
    b.free()
    assert base.Get_attr(_INTERNAL) is None       # freed with the last
    c = Comm(base)
    assert c.sum(1) == c.size
    c.free()
    base.Free()


def test_a_halo_brings_every_holder_the_rows_a_colour_changed():
    """Every rank holds bodies 0..P (ids), body r is touched by rank r in colour 0 and by
    nobody in colour 1, body P by nobody: after colour 0's begin/end every rank has each
    toucher's row, and colour 1 moves nothing."""
    from parsolve.parallel.halo import Halo

    comm = Comm()
    p, r = comm.size, comm.rank
    ranks = np.arange(p)
    graph = comm.mpi.Create_dist_graph_adjacent(ranks.tolist(), ranks.tolist(), reorder=False)
    gid = np.arange(p + 1)
    pair_row, pair_rank = np.repeat(gid, p), np.tile(ranks, p + 1)
    du = np.zeros((p + 1, 6))
    du[r] = r + 1.0                                # this rank's relaxation changed body r
    halo = Halo(graph, ranks, r, gid, pair_row, pair_rank, np.array([r]), np.array([0]), 2,
                du, lambda seconds, nbytes: None)
    for c in range(2):
        halo.begin(c)
        halo.end(c)
    halo.free()
    want = np.zeros((p + 1, 6))
    want[:p] = np.arange(1.0, p + 1)[:, None]
    np.testing.assert_array_equal(du, want)
    graph.Free()
    comm.free()


def test_distributed_delassus_rows_apply_the_serial_operator():
    """Each rank owns a contiguous range of contact rows; the PETSc matrix assembled from those
    rows on the run's communicator applies exactly the serial W."""
    from test_assembly import make_step

    comm = Comm()
    *_, ld, _ = make_step(40)
    n = ld.n
    cuts = np.linspace(0, n, comm.size + 1).astype(int)
    first, last = cuts[comm.rank], cuts[comm.rank + 1]
    W = delassus_matrix(*row_slice(ld.indptr, ld.indices, ld.blocks, first, last), comm.petsc(),
                        n_global=n)
    assert W.getSizes() == ((3 * (last - first), 3 * n), (3 * (last - first), 3 * n))
    R = np.random.default_rng(5).normal(size=(n, 3))
    x, y = W.createVecs()
    x.setArray(R[first:last].reshape(-1))
    W.mult(x, y)
    full = np.concatenate(comm.mpi.allgather(y.getArray().copy()))
    np.testing.assert_allclose(full, ld.matvec(R).reshape(-1), rtol=1e-13, atol=1e-13)
    W.destroy()
    comm.free()


def test_model_checks_are_collective_whichever_rank_holds_the_culprit():
    """Each rank builds only its slice of the bodies; a bad pair, a duplicate id or a load on
    an unknown body is still found, and every rank raises the same error."""
    def model(extra):
        m = ps.Model()
        m.surface("a", "a", friction=0.1)
        m.surface("a", "f", friction=0.1)
        m.half_space((0, 0, 0), (0, 0, 1), "f")
        m.spheres([(0.3 * k, 0, 1) for k in range(12)], 0.1, "a", density=1.0)
        extra(m)
        return m

    cases = [
        (lambda m: m.sphere((5, 0, 1), 0.1, "b", density=1.0),
         r"no surface material for the pair \('a', 'b'\)"),
        (lambda m: m.sphere((5, 0, 1), 0.1, "a", density=1.0, id=3), "duplicate body id 3"),
        (lambda m: m.load(99, force=(1, 0, 0)), "load on unknown body 99"),
    ]
    for extra, match in cases:
        with pytest.raises(ParsolveError, match=match):
            m = model(extra)
            m.run(0.01, 1e-3, progress=0, quiet=True)
        MPI.COMM_WORLD.Barrier()
