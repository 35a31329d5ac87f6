"""One private communicator (a Dup of the user's) for all library traffic, and collective errors.

`Comm.collective()` is a context manager: an exception inside it on any rank is turned into the
same CollectiveError on every rank (the message of the lowest failing rank), so a bad input on
one rank never leaves the others waiting in a collective call.
"""
import contextlib

from mpi4py import MPI

from ..errors import CollectiveError, ParsolveError


class Comm:
    """The run's communicator: wraps a duplicate of `base` (default COMM_WORLD)."""

    def __init__(self, base=None):
        self.base = MPI.COMM_WORLD if base is None else base
        self.mpi = self.base.Dup()
        self.rank = self.mpi.Get_rank()
        self.size = self.mpi.Get_size()

    @property
    def root(self):
        return self.rank == 0

    def petsc(self):
        """The same communicator as a PETSc one (PETSc objects of this run live on it)."""
        from .. import petsc

        return petsc.PETSc.Comm(self.mpi)

    def check(self, error, original=None):
        """Collective: raise on every rank if `error` (a message or None) is set on any rank.

        The first failing rank's message wins; that rank re-raises its own exception, the
        others a CollectiveError with the same message."""
        errors = self.mpi.allgather(error)
        for rank, message in enumerate(errors):
            if message is not None:
                exc = original if rank == self.rank and original is not None else \
                    CollectiveError(f"{message} (raised on rank {rank})")
                exc.collective = True       # every rank raises it: no abort needed
                raise exc

    @contextlib.contextmanager
    def collective(self):
        message = exc = None
        try:
            yield
        except ParsolveError as e:
            message, exc = str(e), e
        except Exception as e:  # a bug or a system error: still end every rank together
            message, exc = f"{type(e).__name__}: {e}", e
        self.check(message, exc)

    def sum(self, value):
        return self.mpi.allreduce(value, op=MPI.SUM)

    def max(self, value):
        return self.mpi.allreduce(value, op=MPI.MAX)

    def min(self, value):
        return self.mpi.allreduce(value, op=MPI.MIN)

    def allreduce_array(self, arr, op="sum"):
        """Element-wise reduction of a numpy array (same shape on every rank)."""
        import numpy as np

        out = np.empty_like(arr)
        self.mpi.Allreduce(np.ascontiguousarray(arr), out,
                           op={"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op])
        return out

    def gather_rows(self, rows, root=0):
        """Collective: dicts of arrays (rows along the first axis, any number per rank)
        concatenated on `root` in rank order; None on the other ranks."""
        import numpy as np

        parts = self.mpi.gather(rows, root=root)
        if self.rank != root:
            return None
        return {k: np.concatenate([p[k] for p in parts]) for k in rows}

    def free(self):
        if self.mpi != MPI.COMM_NULL:
            self.mpi.Free()


def world():
    return Comm(MPI.COMM_WORLD)
