"""W = H M^-1 H^T as a PETSc BAIJ matrix (block size 3) over the ranks: rows of the contacts
each rank owns, with global block-column indices. The distributed assembly routes each
incidence (contact, body) to the owner of its body; that routing is why it lives here, in the
parallel layer, and not in assembly (which stays free of MPI)."""
import numpy as np


def delassus_matrix(indptr, indices, blocks, comm, n_global=None):
    """PETSc Mat of block rows given as block CSR (indptr from 0, global column indices) on
    PETSc communicator `comm`; n_global: the block rows over all ranks (PETSc sums them when
    None)."""
    from ..platform.petsc import PETSc

    n_local = len(indptr) - 1
    size = PETSc.DECIDE if n_global is None else 3 * n_global
    W = PETSc.Mat().createBAIJ(size=((3 * n_local, size), (3 * n_local, size)),
                               bsize=3, comm=comm,
                               csr=(np.asarray(indptr, PETSc.IntType),
                                    np.asarray(indices, PETSc.IntType),
                                    np.ascontiguousarray(blocks).reshape(-1)))
    W.assemble()
    return W


def pairs_sharing(key):
    """All ordered pairs (i, j) of positions with key[i] == key[j], for a sorted key."""
    first = np.searchsorted(key, key, side="left")
    count = np.searchsorted(key, key, side="right") - first
    p1 = np.repeat(np.arange(len(key)), count)
    p2 = np.repeat(first, count) + (np.arange(len(p1)) - np.repeat(np.cumsum(count) - count,
                                                                    count))
    return p1, p2


def distributed_delassus(ld, domain, held):
    """W over all ranks as one PETSc BAIJ matrix: rows of the contacts each rank owns.

    ld: the step's local dynamics (its contacts, incidences con/inc_body, blocks H and
    K = M^-1 H^T); held: the bodies this rank holds. Contacts are numbered globally by rank
    (an exclusive scan of the counts), then locally in key order. Every incidence goes to
    the owner of its body, which forms the blocks H_e1 M^-1 H_e2^T of all pairs of
    incidences at the body, whichever ranks own the two contacts, and adds them with
    MatSetValuesBlocked; PETSc sends the rows it does not own to their owners at assembly.
    Returns (W, first global contact index of this rank).
    """
    from ..platform.petsc import PETSc

    comm = domain.comm
    n = ld.n
    first, n_global = comm.offset(n)
    owner = domain.body_owner(held)
    inc = {"gid": held.gid[ld.inc_body], "row": first + ld.con,
           "H": ld.H.reshape(-1, 18), "K": ld.K.reshape(-1, 18)}
    got = domain.route(np.arange(len(ld.con)), owner[ld.inc_body], inc)
    W = PETSc.Mat().createBAIJ(size=((3 * n, 3 * n_global), (3 * n, 3 * n_global)), bsize=3,
                               nnz=(24, 24), comm=comm.petsc())
    W.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
    order = np.lexsort((got["row"], got["gid"]))
    gid, row = got["gid"][order], got["row"][order]
    H, K = got["H"][order].reshape(-1, 3, 6), got["K"][order].reshape(-1, 6, 3)
    p1, p2 = pairs_sharing(gid)                                 # all pairs at each body
    if len(p1):
        blocks = np.einsum("mik,mkj->mij", H[p1], K[p2]).reshape(-1, 9)
        W.setValuesBlockedRCV(row[p1].astype(PETSc.IntType)[:, None],
                              row[p2].astype(PETSc.IntType)[:, None], blocks,
                              addv=PETSc.InsertMode.ADD_VALUES)
    W.assemble()
    return W, first
