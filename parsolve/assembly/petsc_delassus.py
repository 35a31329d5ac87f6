"""W as a distributed PETSc BAIJ matrix (block size 3): each rank passes the block-CSR rows it
owns, with global block-column indices; PETSc assembles the parallel matrix on `comm`."""
import numpy as np


def delassus_matrix(indptr, indices, blocks, comm, n_global=None):
    """PETSc Mat of block rows given as block CSR (indptr from 0, global column indices)."""
    from ..petsc import PETSc

    n_local = len(indptr) - 1
    if n_global is None:
        n_global = comm.tompi4py().allreduce(n_local) if comm.getSize() > 1 else n_local
    W = PETSc.Mat().createBAIJ(size=((3 * n_local, 3 * n_global), (3 * n_local, 3 * n_global)),
                               bsize=3, comm=comm,
                               csr=(np.asarray(indptr, PETSc.IntType),
                                    np.asarray(indices, PETSc.IntType),
                                    np.ascontiguousarray(blocks).reshape(-1)))
    W.assemble()
    return W


def row_slice(indptr, indices, blocks, first, last):
    """The block rows [first, last) of a block-CSR matrix, re-based for delassus_matrix."""
    k0, k1 = indptr[first], indptr[last]
    return indptr[first:last + 1] - k0, indices[k0:k1], blocks[k0:k1]
