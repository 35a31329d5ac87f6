"""One private communicator (a Dup of the user's) for all library traffic, and collective errors.

The duplicate is made once per user communicator and cached on it as an MPI attribute,
reference-counted by the Comm objects that use it and freed with the last one (PyOP2's
internal_comm): many runs in one process (tests, parameter sweeps) share one context instead
of leaking one each.

`Comm.collective()` is a context manager: an exception inside it on any rank is turned into an
error on every rank that carries every failing rank's message (`messages`), so a bad input on
one rank never leaves the others waiting in a collective call, and rank 0 can print each
rank's message once. `ErrorChannel` does the same for errors raised outside any collective
(a model script's own exception): the ranks that fail agree within a timeout whether all of
them failed (then rank 0 prints once) or not (then the job is aborted, never left hanging).
"""
import contextlib
import time

import numpy as np
from mpi4py import MPI

from ..errors import CollectiveError, ParsolveError

_NUMBERS = (int, float, np.integer, np.floating, np.bool_)   # bool is an int
_INTERNAL = MPI.Comm.Create_keyval()     # attribute of a user communicator: [duplicate, users]


def internal_comm(user):
    """The library's duplicate of communicator `user` (collective the first time)."""
    entry = user.Get_attr(_INTERNAL)
    if entry is None:
        entry = [user.Dup(), 0]
        user.Set_attr(_INTERNAL, entry)
    entry[1] += 1
    return entry[0]


def release_comm(user):
    """One user fewer of `user`'s duplicate; the last one frees it."""
    entry = user.Get_attr(_INTERNAL)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] == 0:
        user.Delete_attr(_INTERNAL)
        entry[0].Free()


def first_line(message):
    return str(message).strip().splitlines()[0] if str(message).strip() else ""


class Comm:
    """The run's communicator: wraps the library's duplicate of `base` (default COMM_WORLD),
    shared with every other Comm of `base`; free() releases it."""

    def __init__(self, base=None):
        self.base = MPI.COMM_WORLD if base is None else base
        self.mpi = internal_comm(self.base)
        self.rank = self.mpi.Get_rank()
        self.size = self.mpi.Get_size()

    @property
    def root(self):
        return self.rank == 0

    def petsc(self):
        """The same communicator as a PETSc one (PETSc objects of this run live on it)."""
        from ..platform import petsc

        return petsc.PETSc.Comm(self.mpi)

    def check(self, error, original=None):
        """Collective: raise on every rank if `error` (a message or None) is set on any rank.

        Every rank raises (its own exception where it failed, else a CollectiveError with
        the lowest failing rank's message), marked `collective` and carrying `messages`, the
        list of (rank, first line) of every failing rank."""
        errors = self.mpi.allgather(None if error is None else str(error))
        failed = [(rank, m) for rank, m in enumerate(errors) if m is not None]
        if not failed:
            return
        rank, message = failed[0]
        exc = original if error is not None and original is not None else \
            CollectiveError(f"{message} (raised on rank {rank})")
        exc.collective = True               # every rank raises it: no abort needed
        exc.messages = [(r, first_line(m)) for r, m in failed]
        raise exc

    @contextlib.contextmanager
    def collective(self):
        """An error inside on any rank becomes an error on every rank (see check); the block
        must not start a collective call after a point where one rank alone may fail."""
        message = exc = None
        try:
            yield
        except BaseException as e:
            if getattr(e, "collective", False):
                raise          # raised on every rank already (a nested collective check)
            if not isinstance(e, Exception):
                raise          # KeyboardInterrupt, SystemExit: not an error to share
            message, exc = (str(e), e) if isinstance(e, ParsolveError) else \
                (f"{type(e).__name__}: {e}", e)
        self.check(message, exc)

    def sum(self, value):
        return self._reduce(value, MPI.SUM)

    def max(self, value):
        return self._reduce(value, MPI.MAX)

    def min(self, value):
        return self._reduce(value, MPI.MIN)

    def _reduce(self, value, op):
        """allreduce; on one rank a number is its own reduction (no call: each step asks a
        few)."""
        if self.size == 1 and isinstance(value, _NUMBERS):
            return value
        return self.mpi.allreduce(value, op=op)

    def bcast(self, value):
        """Rank 0's `value` on every rank (what must be equal everywhere by construction)."""
        return self.mpi.bcast(value)

    def barrier(self):
        self.mpi.Barrier()

    def offset(self, n):
        """(first row of this rank, total rows) when every rank contributes `n` rows in rank
        order: where a rank writes its slice of a shared dataset."""
        if self.size == 1:
            return 0, int(n)
        return int(self.mpi.exscan(int(n), op=MPI.SUM) or 0), int(self.sum(int(n)))

    def sum_counts(self, counts):
        """A dict name -> integer count summed over the ranks (every rank gets the union of
        names, in sorted order): exact, so equal on every rank."""
        total = {}
        for part in self.mpi.allgather(dict(counts)):
            for name, c in part.items():
                total[name] = total.get(name, 0) + int(c)
        return dict(sorted(total.items()))

    def allgather(self, value):
        return self.mpi.allgather(value)

    def route(self, dest, arrays):
        """Row k of every array in `arrays` (a tuple) sent to rank dest[k]: the rows this rank
        receives, concatenated in order of source rank (each source's in its order). An
        all-to-all: O(rows / P) held per rank, whatever P."""
        order = np.argsort(dest, kind="stable")
        cuts = np.searchsorted(np.asarray(dest)[order], np.arange(self.size + 1))
        send = [tuple(a[order[cuts[r]:cuts[r + 1]]] for a in arrays) for r in range(self.size)]
        recv = self.mpi.alltoall(send)
        return tuple(np.concatenate([part[i] for part in recv]) for i in range(len(arrays)))

    def allreduce_array(self, arr, op="sum"):
        """Element-wise reduction of a numpy array (same shape on every rank)."""
        out = np.empty_like(arr)
        self.mpi.Allreduce(np.ascontiguousarray(arr), out,
                           op={"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op])
        return out

    def gather_rows(self, rows, root=0):
        """Collective: dicts of arrays (rows along the first axis, any number per rank)
        concatenated on `root` in rank order; None on the other ranks."""
        parts = self.mpi.gather(rows, root=root)
        if self.rank != root:
            return None
        return {k: np.concatenate([p[k] for p in parts]) for k in rows}

    def first_duplicate(self, ids):
        """The smallest integer that `ids` (this rank's, any order) hold more than once over
        all ranks, or None: each id meets its copies on rank id mod P."""
        ids = np.asarray(ids, np.int64)
        dest = ids % self.size
        here = np.sort(np.concatenate(self.mpi.alltoall([ids[dest == r]
                                                         for r in range(self.size)])))
        twice = here[1:][here[1:] == here[:-1]]
        found = [d for d in self.mpi.allgather(int(twice[0]) if len(twice) else None)
                 if d is not None]
        return min(found) if found else None

    def free(self):
        """Release this Comm's use of the shared duplicate (the last user frees it)."""
        if self.mpi is not None:
            release_comm(self.base)
            self.mpi = None


def world_rank_size():
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()


def abort(code):
    """End every rank of the job (mpirun reports the abort and exits non-zero)."""
    MPI.COMM_WORLD.Abort(code)


class ErrorChannel:
    """A communicator of its own (made at start-up, before any library traffic) on which the
    ranks that failed outside a collective find out whether every rank failed.

    agree(message, timeout): a failing rank enters a nonblocking barrier and waits up to
    `timeout` seconds. If every rank arrives (all failed, e.g. the same error in a model
    script), rank 0 receives every rank's message and returns them; other ranks return [].
    If not, some rank is still computing or blocked: returns None, and the caller aborts."""

    def __init__(self):
        self.mpi = MPI.COMM_WORLD.Dup()

    def agree(self, message, timeout=3.0):
        request = self.mpi.Ibarrier()
        deadline = time.monotonic() + timeout
        while not request.Test():
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)
        messages = self.mpi.gather(message)
        return messages if self.mpi.Get_rank() == 0 else []
