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
        other = pair_rank != rank
        send_idx, send_counts, outgoing = [], [], [[] for _ in ranks]
        for c in range(ncolours):
            touched = np.zeros(len(gid), bool)
            touched[inc_body[inc_colour == c]] = True
            keep = touched[pair_row] & other      # rows in order, each row's ranks ascending
            idx, dest = pair_row[keep], slot[pair_rank[keep]]
            assert (dest >= 0).all(), "du exchange to a rank outside the subdomain graph"
            o = np.argsort(dest, kind="stable")
            idx, dest = idx[o], dest[o]
            counts = np.bincount(dest, minlength=len(ranks))
            send_idx.append(idx)
            send_counts.append(counts)
            for k, part in enumerate(np.split(gid[idx], np.cumsum(counts)[:-1])):
                outgoing[k].append(part)
        t0 = time.perf_counter()
        incoming = graph.neighbor_alltoall(outgoing)                # once a step: body ids
        account(time.perf_counter() - t0, 0)
        lookup = np.argsort(gid, kind="stable")
        sorted_gid = gid[lookup]
        recv_idx, recv_counts = [], []
        for c in range(ncolours):
            gids = [incoming[k][c] for k in range(len(ranks))]
            allg = np.concatenate(gids) if gids else np.zeros(0, np.int64)
            pos = np.searchsorted(sorted_gid, allg)
            assert (sorted_gid[np.minimum(pos, len(sorted_gid) - 1)] == allg).all(), \
                "du exchange reached a rank without the body"
            recv_idx.append(lookup[pos])
            recv_counts.append(np.array([len(g) for g in gids], np.int64))
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
