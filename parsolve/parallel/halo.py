"""The sweep's halo: the du rows of bodies held on several ranks, exchanged colour by colour.

After colour c's contacts are relaxed, the bodies they changed have new du rows; every other
holder of such a body must have them before colour c + 1 (the Gauss-Seidel order is the serial
one only if all copies agree). A Halo (Firedrake's object of that name) is made once a step
from the holders of the held bodies and the colour of each contact incidence: the rows each
neighbour sends for each colour are agreed once (their body ids travel once), then each
colour moves raw doubles by persistent point-to-point requests on the subdomain graph.
begin(c) sends the rows after colour c's boundary part, end(c) takes the neighbours' rows;
the interior part is relaxed in between, so the transfer overlaps work.
"""
import os
import time

import numpy as np
from mpi4py import MPI

try:
    from .._kernels.halo import ColourLoop as _ColourLoop
except ImportError:                      # built without mpicc: the Python twin
    _ColourLoop = None


class Halo:
    """graph: the distributed-graph communicator over `ranks` (this rank included); gid: the
    held bodies' ids; pair_row, pair_rank: each held body's holders (rows in order);
    inc_body, inc_colour: the body and colour of each contact incidence; du (held, 6): the
    array the sweeps update in place. account(seconds, bytes) meters the communication."""

    def __init__(self, graph, ranks, rank, gid, pair_row, pair_rank, inc_body, inc_colour,
                 ncolours, du, account):
        self.du, self.account = du, account
        self.post_seconds = 0.0          # of the exchanges' time, not waiting (pack, start, unpack)
        slot = np.full(graph.Get_size(), -1)
        slot[ranks] = np.arange(len(ranks))
        nr = len(ranks)
        # the (colour, row) pairs to send: row j (a body and one other holder of it) for each
        # colour that touches the body, ordered by colour, then destination, then j
        other = np.flatnonzero(pair_rank != rank)
        shared, at = np.unique(pair_row[other], return_inverse=True)
        compact = np.full(len(gid), -1)
        compact[shared] = np.arange(len(shared))
        touched = np.zeros((ncolours, len(shared)), bool)
        mine = compact[inc_body] >= 0
        touched[inc_colour[mine], compact[inc_body[mine]]] = True
        c, j = np.nonzero(touched[:, at])
        j = other[j]
        dest = slot[pair_rank[j]]
        assert (dest >= 0).all(), "du exchange to a rank outside the subdomain graph"
        o = np.argsort(c * nr + dest, kind="stable")
        c, idx, dest = c[o], pair_row[j[o]], dest[o]
        send_counts = np.bincount(c * nr + dest, minlength=ncolours * nr).reshape(ncolours, nr)
        cuts = np.concatenate([[0], np.cumsum(send_counts.sum(axis=1))])
        send_idx = [idx[cuts[k]:cuts[k + 1]] for k in range(ncolours)]
        # to each neighbour its rows' body ids, colour after colour, and the count per colour
        outgoing = [(send_counts[:, k], gid[idx[dest == k]]) for k in range(nr)]
        t0 = time.perf_counter()
        incoming = graph.neighbor_alltoall(outgoing)                # once a step: body ids
        account(time.perf_counter() - t0, 0)
        lookup = np.argsort(gid, kind="stable")
        sorted_gid = gid[lookup]
        recv_counts = np.stack([incoming[k][0] for k in range(nr)], axis=1) if nr else \
            np.zeros((ncolours, 0), np.int64)
        colour = np.concatenate([np.repeat(np.arange(ncolours), incoming[k][0])
                                 for k in range(nr)] or [np.zeros(0, np.int64)])
        allg = np.concatenate([incoming[k][1] for k in range(nr)] or [np.zeros(0, np.int64)])
        allg = allg[np.argsort(colour, kind="stable")]      # by colour, then source rank
        pos = np.searchsorted(sorted_gid, allg)
        assert (sorted_gid[np.minimum(pos, len(sorted_gid) - 1)] == allg).all(), \
            "du exchange reached a rank without the body"
        got = lookup[pos]
        cuts = np.concatenate([[0], np.cumsum(recv_counts.sum(axis=1))])
        recv_idx = [got[cuts[k]:cuts[k + 1]] for k in range(ncolours)]
        others = [(k, int(r)) for k, r in enumerate(ranks) if r != rank]
        self.send_idx, self.recv_idx = send_idx, recv_idx
        # one buffer each way, a view of it per colour (the compiled loop packs the whole)
        self.send_ptr, self.sflat = _flat(send_idx)
        self.recv_ptr, self.rflat = _flat(recv_idx)
        self.sbuf = [self.sflat[a:b] for a, b in zip(self.send_ptr[:-1], self.send_ptr[1:])]
        self.rbuf = [self.rflat[a:b] for a, b in zip(self.recv_ptr[:-1], self.recv_ptr[1:])]

        def requests(init, bufs, counts, c):
            off = np.concatenate([[0], np.cumsum(counts[c])])
            return [init(bufs[c][off[k]:off[k + 1]], r, c) for k, r in others if counts[c][k]]

        self.recvs = [requests(graph.Recv_init, self.rbuf, recv_counts, c)
                      for c in range(ncolours)]
        self.sends = [requests(graph.Send_init, self.sbuf, send_counts, c)
                      for c in range(ncolours)]
        self.nbytes = sum(a.nbytes for a in (*send_idx, *recv_idx, self.sflat, self.rflat))

    def loop(self, colours, boundary):
        """The compiled colour loop (parsolve._kernels.halo.ColourLoop) over these colours'
        rows with this halo's exchanges, as a function of the sweep kernel's arguments; None
        when it is not built or PARSOLVE_COMPILED_HALO=0 (the Python twin: visit with begin
        and end)."""
        if _ColourLoop is None or os.environ.get("PARSOLVE_COMPILED_HALO", "1") == "0":
            return None
        ptr = np.concatenate([[0], np.cumsum([len(o) for o in colours])]).astype(np.int64)
        order = np.concatenate(colours).astype(np.int64) if colours else np.zeros(0, np.int64)
        loop = _ColourLoop(self.recvs, self.sends, self.send_ptr,
                           np.concatenate(self.send_idx).astype(np.int64), self.sflat,
                           self.recv_ptr, np.concatenate(self.recv_idx).astype(np.int64),
                           self.rflat, ptr, np.asarray(boundary, np.int64), order)
        self.nbytes += order.nbytes

        def sweep(*args):
            s0, b0, p0 = loop.seconds, loop.nbytes, loop.post_seconds
            out = loop.sweep(*args)
            self.post_seconds += loop.post_seconds - p0
            self.account(loop.seconds - s0, int(loop.nbytes - b0))
            return out
        return sweep

    def begin(self, c):
        """Send the du rows colour c changed to the bodies' other holders."""
        t = time.perf_counter()
        MPI.Request.Waitall(self.sends[c])                 # the last sweep's, same buffer
        t1 = time.perf_counter()
        np.take(self.du, self.send_idx[c], axis=0, out=self.sbuf[c])
        MPI.Prequest.Startall(self.recvs[c] + self.sends[c])
        t2 = time.perf_counter()
        self.post_seconds += t2 - t1
        self.account(t2 - t, self.sbuf[c].nbytes)

    def end(self, c):
        """Take the neighbours' du rows of colour c."""
        t = time.perf_counter()
        MPI.Request.Waitall(self.recvs[c])
        t1 = time.perf_counter()
        self.du[self.recv_idx[c]] = self.rbuf[c]
        t2 = time.perf_counter()
        self.post_seconds += t2 - t1
        self.account(t2 - t, 0)

    def complete(self):
        """Wait for the last sweep's sends. They complete once the neighbour has taken them
        (at its end(c)); waiting only before a buffer is reused, or before the next
        collective, lets a rank that is ahead go on without meeting the neighbour at every
        colour. The neighbours have posted every receive, so this never blocks for long."""
        for requests in self.sends:
            MPI.Request.Waitall(requests)

    def free(self):
        """Complete, then free the persistent requests (a new step's Halo replaces this)."""
        self.complete()
        for requests in self.sends + self.recvs:
            for r in requests:
                r.Free()


def _flat(index_lists):
    """(offsets, one (total, 6) buffer) for per-colour row lists."""
    ptr = np.concatenate([[0], np.cumsum([len(i) for i in index_lists])]).astype(np.int64)
    return ptr, np.empty((int(ptr[-1]), 6))
