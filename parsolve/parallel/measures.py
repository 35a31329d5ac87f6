"""Where the measures' terms meet and are summed (parsolve.measures): a body and the contact
ends of that body are routed to one rank, the one a hash of the body's id picks (so that a
body's partners can be counted there), and the terms are summed exactly by cell. O(rows / P)
on every rank; the result does not depend on P."""
import numpy as np

from .reduce import exact_binned_sums

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def rank_of(gid, size):
    """The meeting rank of each body id."""
    return ((np.asarray(gid).astype(np.uint64) * _GOLDEN) % np.uint64(size)).astype(np.int64)


class Meeting:
    """The parallel half of a measure sensor over `comm` (a parsolve Comm)."""

    def __init__(self, comm):
        self.comm = comm

    def route(self, bodies, ends):
        """(bodies, ends), each a dict of arrays, moved to their bodies' meeting ranks."""
        if self.comm.size == 1:
            return bodies, ends
        out = []
        for table in (bodies, ends):
            names = sorted(table)
            moved = self.comm.route(rank_of(table["gid"], self.comm.size),
                                    tuple(table[k] for k in names))
            out.append(dict(zip(names, moved)))
        return tuple(out)

    def sums(self, terms, cells, ncells):
        return exact_binned_sums(terms, cells, ncells,
                                 self.comm.mpi if self.comm.size > 1 else None)
