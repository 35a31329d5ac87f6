"""Block rows spread over the ranks, met on rank 0 in one order that does not depend on the
distribution.

A step's rows live on their owners, each rank's in sweep order, so the global numbering of
the rows (rank by rank) changes with the number of ranks, and so does the order of the sums a
distributed linear solver takes: PETSc's MatMult adds a row's columns held on its rank before
the others, MUMPS's pivots and sums follow the distribution, Krylov inner products are
reduced over the ranks in pieces. Here every rank sends its rows' keys and block columns once;
rank 0 sorts the keys (the canonical order, the one a single rank stores the rows in) and
numbers the rows and their blocks by it. From then on the values of the rows (vectors) or of
their blocks (a matrix of the rows' pattern) are gathered to rank 0 in that order and
scattered back, moved without arithmetic, so what rank 0 computes on them is the one-rank
computation, bit for bit, on any number of ranks. O(rows) on rank 0: for systems that a
single rank factors anyway.
"""
import numpy as np


class CanonicalRows:
    """Collective. comm: an mpi4py communicator; keys (n, k) int64: each row's global key, the
    canonical order sorting them by the first column, then the second, ... (unique over the
    ranks); indptr, indices: the rows' blocks' columns in the global numbering of the
    distribution (rows rank by rank, this rank's from `first`).

    On rank 0: `indptr`, `indices` (the pattern in canonical numbering, each row's columns
    sorted), `n_global`; gather() and scatter() move rows or blocks, call() runs a function
    on rank 0 and gives its value (or its exception) to every rank."""

    def __init__(self, comm, keys, indptr, indices):
        self.comm = comm
        self.root = comm.Get_rank() == 0
        keys = np.ascontiguousarray(keys, np.int64)
        indptr = np.asarray(indptr, np.int64)
        counts = np.array(comm.allgather((len(keys), int(indptr[-1]))), np.int64).reshape(-1, 2)
        self.counts = {False: counts[:, 0], True: counts[:, 1]}     # rows, blocks per rank
        self.n_global = int(counts[:, 0].sum())
        every = self._gatherv(keys, False)
        lengths = self._gatherv(np.diff(indptr), False)
        columns = self._gatherv(np.asarray(indices, np.int64), True)
        self.perm = self.inverse = self.block_perm = self.indptr = self.indices = None
        self.call(lambda: self._number(every, lengths, columns))

    @classmethod
    def over(cls, W, keys, indptr, indices):
        """CanonicalRows on the communicator of a PETSc matrix W of these rows."""
        return cls(W.getComm().tompi4py(), keys, indptr, indices)

    def _number(self, keys, lengths, columns):
        """Rank 0: the canonical numbering of the rows (perm: canonical -> distributed,
        inverse) and of the blocks (block_perm: canonical position -> distributed one)."""
        n = len(keys)
        perm = np.lexsort(keys.T[::-1]) if n else np.zeros(0, np.int64)
        s = keys[perm]
        if n > 1 and not (s[1:] != s[:-1]).any(axis=1).all():
            twice = s[1:][~(s[1:] != s[:-1]).any(axis=1)][0]
            raise ValueError(f"CanonicalRows: key {twice.tolist()} is held twice")
        inverse = np.empty(n, np.int64)
        inverse[perm] = np.arange(n)
        row = inverse[np.repeat(np.arange(n), lengths)]
        column = inverse[columns]
        self.block_perm = np.lexsort((column, row))
        self.perm, self.inverse = perm, inverse
        self.indptr = np.concatenate([[0], np.cumsum(lengths[perm])]).astype(np.int64)
        self.indices = column[self.block_perm]

    def gather(self, values, blocks=False):
        """Rows (n, ...) of every rank, or their blocks (nnz, ...) with blocks=True, on rank 0
        in canonical order (None on the other ranks)."""
        got = self._gatherv(values, blocks)
        if not self.root:
            return None
        return got[self.block_perm if blocks else self.perm]

    def scatter(self, values, tail=(3,)):
        """Rank 0's float rows in canonical order (N, *tail; ignored elsewhere): this rank's
        (n, *tail)."""
        rank = self.comm.Get_rank()
        out = np.empty((int(self.counts[False][rank]),) + tuple(tail))
        send = None
        if self.root:
            values = np.ascontiguousarray(np.asarray(values, float)[self.inverse])
            send = [values, self.counts[False] * int(np.prod(tail, dtype=np.int64))]
        self.comm.Scatterv(send, out, root=0)
        return out

    def call(self, fn):
        """fn() on rank 0, its value on every rank; an exception it raises is raised on every
        rank (marked collective: no rank is left waiting)."""
        value, error = None, None
        if self.root:
            try:
                value = fn()
            except Exception as exc:             # noqa: BLE001 - given to every rank
                error = exc
        sent = self.comm.bcast((value, _portable(error)) if self.root else None)
        if error is None and sent[1] is not None:
            error = sent[1]
        if error is not None:
            error.collective = True
            raise error
        return sent[0]

    def _gatherv(self, values, blocks):
        """values (m, ...) of every rank concatenated on rank 0 in rank order."""
        values = np.ascontiguousarray(values)
        counts = self.counts[blocks]
        per = int(np.prod(values.shape[1:], dtype=np.int64))
        out = np.empty((int(counts.sum()),) + values.shape[1:], values.dtype) \
            if self.root else None
        self.comm.Gatherv(values, [out, counts * per] if self.root else None, root=0)
        return out


def _portable(error):
    """An exception as it can travel to the other ranks (pickled), or a RuntimeError with its
    text when it cannot."""
    if error is None:
        return None
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:                          # noqa: BLE001
        return RuntimeError(f"{type(error).__name__}: {error}")


__all__ = ["CanonicalRows"]
