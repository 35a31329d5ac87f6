"""W = H M^-1 H^T as a PETSc BAIJ matrix (block size 3) over the ranks: rows of the contacts
each rank owns, with global block-column indices. The distributed assembly routes each
incidence (contact, body) to the owner of its body; that routing is why it lives here, in the
parallel layer, and not in assembly (which stays free of MPI)."""
import sys

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
    Returns (W, first global contact index of this rank, W's block rows (indptr, global
    block columns, blocks) or None). On one rank the rows are summed here, as PETSc would,
    and W is None: the caller makes it from them (delassus_matrix), or reuses a matrix of the
    same pattern.
    """
    from ..platform.petsc import PETSc

    comm = domain.comm
    n = ld.n
    first, n_global = comm.offset(n)
    owner = domain.body_owner(held)
    inc = {"gid": held.gid[ld.inc_body], "row": first + ld.con,
           "H": ld.H.reshape(-1, 18), "K": ld.K.reshape(-1, 18)}
    got = domain.route(np.arange(len(ld.con)), owner[ld.inc_body], inc)
    order = np.lexsort((got["row"], got["gid"]))
    gid, row = got["gid"][order], got["row"][order]
    H, K = got["H"][order].reshape(-1, 3, 6), got["K"][order].reshape(-1, 6, 3)
    p1, p2 = pairs_sharing(gid)                                 # all pairs at each body
    blocks = np.einsum("mik,mkj->mij", H[p1], K[p2]).reshape(-1, 9)
    if comm.size == 1:
        return None, first, _kernel.block_rows(row[p1], row[p2], blocks, n)
    W = PETSc.Mat().createBAIJ(size=((3 * n, 3 * n_global), (3 * n, 3 * n_global)), bsize=3,
                               nnz=(24, 24), comm=comm.petsc())
    W.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
    if len(p1):
        W.setValuesBlockedRCV(row[p1].astype(PETSc.IntType)[:, None],
                              row[p2].astype(PETSc.IntType)[:, None], blocks,
                              addv=PETSc.InsertMode.ADD_VALUES)
    W.assemble()
    return W, first, None


def block_rows(rows, cols, blocks, n):
    """(indptr, block columns, blocks (nnz, 3, 3)) of the n block rows holding the sums of
    `blocks` (m, 9) at (rows, cols): each entry set by its first block and added to by the
    others in their order, as MatSetValuesBlocked with ADD_VALUES builds it, so the sums
    are PETSc's bits. The twin of kernels/operators.pyx's block_rows (which distributed_delassus
    calls)."""
    if not len(rows):
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros((0, 3, 3))
    width = np.int64(max(n, int(cols.max()) + 1))
    key = rows.astype(np.int64) * width + cols
    o = np.argsort(key, kind="stable")
    k = key[o]
    start = np.r_[True, k[1:] != k[:-1]]
    group = np.cumsum(start) - 1
    nth = np.arange(len(k)) - np.flatnonzero(start)[group]
    out = blocks[o[start]].copy()
    for m in range(1, int(nth.max()) + 1):           # the m-th block of each entry, if any
        more = nth == m
        out[group[more]] += blocks[o[more]]
    entry = k[start]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(entry // width, minlength=n), out=indptr[1:])
    return indptr, entry % width, out.reshape(-1, 3, 3)


from .._kernels import compiled  # noqa: E402  (after block_rows: its twin)

_modules = compiled("operators")
_kernel = _modules[0] if _modules is not None else sys.modules[__name__]
