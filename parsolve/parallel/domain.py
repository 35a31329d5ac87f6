"""The domain decomposition of a run: partition, migration, ghosts, the exchanges of a sweep.

Every rank owns the bodies whose centres lie in its subdomain, a box of whole cells cut by
recursive coordinate bisection (partition.py), and holds read-only ghost copies of the bodies
within one cell of its box: enough for every contact whose point lies in its box (the contacts
it owns) to find both bodies. A body's holders (its owner and the ranks that keep a ghost)
follow from its position and the cuts alone, so every rank computes the same holders for the
same body. Copies are exact (bits are sent), and
the Gauss-Seidel exchange sends new values, never increments, so all copies stay equal.

The physics modules see none of this: they receive a BodySet (owned rows first) and call the
`exchange` and `sums` functions the Domain hands them.
"""
import resource
import time

import numpy as np

from ..contact.broadphase import cell_hash
from ..interactions import Interactions
from ..errors import InputError
from ..model.bodies import FIELDS as BODY_FIELDS
from ..model.bodies import BodySet
from .colouring import ColourSchedule
from .partition import RCBPartition
from .reduce import exact_sums


class Domain:
    BALANCE = ("time", "contacts", "bodies")
    PARTITION = ("rcb", "slab")

    def __init__(self, comm, cell, axis=0, tolerance=1.1, balance="time", min_seconds=0.2,
                 min_steps=10, partition="rcb"):
        """axis: the axis of the cuts when partition="slab" (slabs of whole cells, the
        partition before RCB, kept for comparison); "rcb" cuts any axis."""
        if balance not in self.BALANCE:
            raise InputError(f"balance: {balance!r} is not one of {', '.join(self.BALANCE)}")
        if partition not in self.PARTITION:
            raise InputError(f"partition: {partition!r} is not one of "
                             f"{', '.join(self.PARTITION)}")
        if not tolerance >= 1.0:
            raise InputError(f"balance_tolerance: {tolerance} (max/avg load) must be >= 1")
        self.comm = comm
        self.part = RCBPartition(comm.size, cell, (0, 1, 2) if partition == "rcb" else (axis,))
        self.tolerance = float(tolerance)
        self.balance = balance
        self.min_seconds = float(min_seconds)
        self.min_steps = int(min_steps)
        self.seconds = 0.0                # time spent in communication
        self.repartitions = 0
        self.force_repartition = False
        self.bytes_sent = 0               # payload bytes this rank sent to other ranks
        self.work_seconds = 0.0           # compute seconds of the steps, waits excluded
        self._units = None                # cost units of the owned bodies (record_work)
        self._window = np.zeros(3)        # seconds, units, steps since the cuts last moved
        self._cuts_moved = False          # in this step's migrate
        self._sending = None              # the sweep's sends not yet known complete
        self._held = (0, 0)               # owned and ghost bodies of the step (memory)
        self._step_arrays = (0, 0, 0)     # contacts, incidences, exchange bytes (memory)

    # -- routing -------------------------------------------------------------------------------
    def route(self, index, dest, payload, neighbours=False):
        """Send row index[k] of every array in `payload` to rank dest[k]; returns the rows this
        rank receives, concatenated in order of source rank (then of `index`).

        neighbours=True: every dest is a neighbour (ghosts, contacts, the sweep's du), and the
        exchange is an MPI neighbour collective on the subdomain graph, O(neighbours) not O(P).
        Otherwise (migration, set-up) an all-to-all."""
        t0 = time.perf_counter()
        self._complete_sends()
        ranks = self._neighbours() if neighbours else np.arange(self.comm.size)
        order = np.argsort(dest, kind="stable")
        index, dest = index[order], dest[order]
        cuts = np.searchsorted(dest, np.append(ranks, ranks[-1] + 1 if len(ranks) else 0))
        if len(dest) and neighbours:
            assert cuts[-1] - cuts[0] == len(dest) and np.isin(dest, ranks).all(), \
                "neighbour exchange to a rank outside the subdomain graph"
        send = [{k: v[index[cuts[i]:cuts[i + 1]]] for k, v in payload.items()}
                for i in range(len(ranks))]
        self.bytes_sent += sum(a.nbytes for i, r in enumerate(ranks) if r != self.comm.rank
                               for a in send[i].values())
        recv = self._graph.neighbor_alltoall(send) if neighbours else \
            self.comm.mpi.alltoall(send)
        out = {k: np.concatenate([p[k] for p in recv] or [v[:0]]) for k, v in payload.items()}
        self.seconds += time.perf_counter() - t0
        return out

    def _neighbours(self):
        """Ranks whose box lies within two cells of this rank's box in every axis (itself
        included), and the MPI distributed-graph communicator over them; rebuilt when the
        cuts move.

        Two cells: a rank holds bodies up to one cell beyond its box (ghosts), and their
        other holders hold them up to one cell beyond theirs; when a subdomain is thinner
        than two cells, a ghost's du must reach the rank past it."""
        key = self.part.key()
        if getattr(self, "_graph_key", None) != key:
            self._ranks = self.part.neighbours(self.comm.rank)
            if getattr(self, "_graph", None) is not None:
                self._graph.Free()
            nb = [int(x) for x in self._ranks]
            self._graph = self.comm.mpi.Create_dist_graph_adjacent(nb, nb, reorder=False)
            self._graph_key = key
        return self._ranks

    def _route_bodies(self, bodies, index, dest, neighbours=False):
        got = self.route(index, dest, {f: getattr(bodies, f) for f in BODY_FIELDS}, neighbours)
        return BodySet(len(got["gid"]), **got)

    # -- ownership -----------------------------------------------------------------------------
    def setup(self, bodies):
        """From any initial split of the bodies (each on one rank) to the owners' boxes."""
        self.part.balance(self.comm.mpi, bodies.x)
        self._units, self._window[:] = None, 0.0
        return self.migrate(bodies, check_balance=False)

    def migrate(self, owned, check_balance=True):
        """Move each owned body to the rank of its cell; returns the owned set by id.

        First the cuts are rebalanced when asked to, or when the load's max/avg exceeds the
        tolerance and new cuts would at least halve the excess (body_load: the load)."""
        if self.comm.size == 1:
            return owned
        n = owned.n_owned
        if check_balance:
            weights = self.body_load(n)
            forced, self.force_repartition = self.force_repartition, False
            if (forced or self.part.imbalance(self.comm.mpi, float(weights.sum()))
                    > self.tolerance) and self.part.balance(
                        self.comm.mpi, owned.x[:n], weights, gain=None if forced else 0.5):
                self.repartitions += 1
                self._window[:] = 0.0
                self._cuts_moved = True
        idx = np.arange(n)
        return self._route_bodies(owned, idx, self.part.owner(owned.x[:n])).sorted_by_gid()

    # -- load ---------------------------------------------------------------------------------
    def record_work(self, seconds, units):
        """Account a step: the `seconds` this rank computed (its waits in exchanges excluded)
        and `units`, the cost units of each owned body (1 + the contacts it touches), in the
        order of the owned rows the next migrate receives."""
        self._units = np.asarray(units, float)
        self._window += (seconds, self._units.sum(), 1)
        self.work_seconds += seconds

    def body_load(self, n):
        """The load of each of this rank's n owned bodies, the weights of the cuts.

        bodies: 1 each. contacts: its cost units, 1 + the contacts it touches (the sweeps'
        work is per contact, the integration's per body). time: its units times this rank's
        measured seconds per unit relative to the mean over all ranks, once the ranks have
        measured `min_steps` steps and `min_seconds` on average since the cuts last moved
        (timings of single steps are noisy): a rank on a slower or busier core then weighs
        more and gets fewer bodies. The relative speed is clipped to [1/2, 2] so that one
        noisy measurement (an oversubscribed core) cannot empty a subdomain. The weights move the
        cuts only; the trajectory does not depend on them. Collective in "time" mode: the
        branches taken depend on counts that are equal on every rank."""
        if self.balance == "bodies" or self._units is None:   # None: nothing measured yet
            return np.ones(n)
        units = self._units if len(self._units) == n else np.ones(n)
        if self.balance == "contacts":
            return units
        if self._window[2] < self.min_steps:             # the same count on every rank
            return units
        total = np.empty(3)
        self.comm.mpi.Allreduce(self._window, total)
        if total[0] < self.min_seconds * self.comm.size or total[1] <= 0:
            return units
        mean_rate = total[0] / total[1]                  # seconds per unit over all ranks
        seconds, own, _ = self._window
        rate = seconds / own if own > 0 else mean_rate
        return units * float(np.clip(rate / mean_rate, 0.5, 2.0))

    # -- ghosts --------------------------------------------------------------------------------
    def with_ghosts(self, owned):
        """Owned bodies followed by ghost copies of the other ranks' bodies near this box."""
        n = owned.n_owned
        self._held = (n, len(owned) - n)
        if self.comm.size == 1:
            return owned
        idx, dest = self.part.holders(owned.x[:n])
        keep = dest != self.comm.rank
        ghosts = self._route_bodies(owned, idx[keep], dest[keep], neighbours=True).sorted_by_gid()
        held = BodySet(n + len(ghosts), n_owned=n, **{
            f: np.concatenate([getattr(owned, f)[:n], getattr(ghosts, f)])
            for f in BODY_FIELDS})
        # every holder of a body computes the same holder ranks from the same position
        self._holders = self.part.holders(held.x)
        self._owners = self.part.owner(held.x)
        self._held = (n, len(ghosts))
        return held

    def share_contacts(self, contacts):
        """The previous step's contacts (keys and reactions) of every rank whose box is near
        this one: a persisting contact warm-starts on whichever rank owns it now. Right after
        the cuts moved, a contact's new holders may lie beyond the subdomain graph it was found
        on, so that once they travel by an all-to-all."""
        if contacts is None or self.comm.size == 1:
            return contacts
        near, self._cuts_moved = not self._cuts_moved, False
        idx, dest = self.part.holders(contacts.point)
        got = self.route(idx, dest, contacts.columns(contacts.PERSISTENT), neighbours=near)
        return type(contacts)(**got)

    def scatter_contacts(self, contacts):
        """Contacts read from a checkpoint (any slice of the saved rows on each rank) sent to
        the ranks that own their points, once after a restart: from then on each rank's
        contacts lie in its box and share_contacts needs its neighbours only."""
        if self.comm.size == 1:
            return contacts
        got = self.route(np.arange(len(contacts)), self.part.owner(contacts.point),
                         contacts.columns(contacts.PERSISTENT))
        return type(contacts)(**got)

    def body_owner(self, held):
        """The owner rank of each held body (as at the start of the step)."""
        if self.comm.size == 1:
            return np.zeros(len(held), np.int64)
        return self._owners

    def owns(self, points):
        return self.part.owner(points) == self.comm.rank

    # -- the sweep's exchanges -----------------------------------------------------------------
    def schedule(self, held, inc_body, con, colours, cells, du):
        """The ColourSchedule of this step's sweeps: colour c's contacts with the cells that
        touch a body held by other ranks first; after those, the du rows of the bodies they
        changed go to the bodies' other holders (start), and theirs come in (finish) while
        the rest of the colour is relaxed.

        The rows each neighbour will send for each colour are agreed once a step (their body
        ids travel once); each colour's exchange then moves only the du rows, as raw doubles,
        by nonblocking point-to-point messages to the neighbours on the subdomain graph."""
        self._step_arrays = (len(cells), len(con), 0)
        if self.comm.size == 1:
            return ColourSchedule(colours)
        from mpi4py import MPI

        self._complete_sends(free=True)
        pair_row, pair_rank = self._holders      # as when the ghosts were made
        # bodies with copies on other ranks
        shared = np.bincount(pair_row, minlength=len(held.gid)) > 1
        other = pair_rank != self.comm.rank
        ranks = self._neighbours()
        slot = np.full(self.comm.size, -1)
        slot[ranks] = np.arange(len(ranks))
        # boundary cells: those with a contact touching a shared body; whole cells move first
        key = cell_hash(cells)
        on_boundary = np.isin(key, key[con[shared[inc_body]]])
        colours = [np.concatenate([o[on_boundary[o]], o[~on_boundary[o]]]) for o in colours]
        boundary = [int(on_boundary[o].sum()) for o in colours]
        colour_of = np.empty(len(key), np.int64)
        for c, order in enumerate(colours):
            colour_of[order] = c
        inc_colour = colour_of[con] if len(con) else np.zeros(0, np.int64)
        send_idx, send_counts, outgoing = [], [], [[] for _ in ranks]
        for c in range(len(colours)):
            touched = np.zeros(len(held.gid), bool)
            touched[inc_body[inc_colour == c]] = True
            keep = touched[pair_row] & other      # rows in order, each row's ranks ascending
            idx, dest = pair_row[keep], slot[pair_rank[keep]]
            assert (dest >= 0).all(), "du exchange to a rank outside the subdomain graph"
            o = np.argsort(dest, kind="stable")
            idx, dest = idx[o], dest[o]
            counts = np.bincount(dest, minlength=len(ranks))
            send_idx.append(idx)
            send_counts.append(counts)
            for k, part in enumerate(np.split(held.gid[idx], np.cumsum(counts)[:-1])):
                outgoing[k].append(part)
        t0 = time.perf_counter()
        incoming = self._graph.neighbor_alltoall(outgoing)       # once a step: body ids
        self.seconds += time.perf_counter() - t0
        lookup = np.argsort(held.gid, kind="stable")
        sorted_gid = held.gid[lookup]
        recv_idx, recv_counts = [], []
        for c in range(len(colours)):
            gids = [incoming[k][c] for k in range(len(ranks))]
            allg = np.concatenate(gids) if gids else np.zeros(0, np.int64)
            pos = np.searchsorted(sorted_gid, allg)
            assert (sorted_gid[np.minimum(pos, len(sorted_gid) - 1)] == allg).all(), \
                "du exchange reached a rank without the body"
            recv_idx.append(lookup[pos])
            recv_counts.append(np.array([len(g) for g in gids], np.int64))
        # per colour: buffers, and persistent point-to-point requests on their row ranges
        others = [(k, int(r)) for k, r in enumerate(ranks) if r != self.comm.rank]
        sbuf = [np.empty((len(i), 6)) for i in send_idx]
        rbuf = [np.empty((len(i), 6)) for i in recv_idx]
        g = self._graph

        def requests(init, bufs, counts, c):
            off = np.concatenate([[0], np.cumsum(counts[c])])
            return [init(bufs[c][off[k]:off[k + 1]], r, c) for k, r in others if counts[c][k]]

        recvs = [requests(g.Recv_init, rbuf, recv_counts, c) for c in range(len(colours))]
        sends = [requests(g.Send_init, sbuf, send_counts, c) for c in range(len(colours))]

        def start(c):
            t = time.perf_counter()
            MPI.Request.Waitall(sends[c])                 # the last sweep's, same buffer
            np.take(du, send_idx[c], axis=0, out=sbuf[c])
            MPI.Prequest.Startall(recvs[c] + sends[c])
            self.bytes_sent += sbuf[c].nbytes
            self.seconds += time.perf_counter() - t

        def finish(c):
            t = time.perf_counter()
            MPI.Request.Waitall(recvs[c])
            du[recv_idx[c]] = rbuf[c]
            self.seconds += time.perf_counter() - t

        # sends complete once the neighbour has taken them (at its finish(c)); waiting for
        # them only before a buffer is reused, or before the next collective, lets a rank
        # that is ahead go on without meeting the neighbour at every colour
        self._sending = (sends, recvs, sbuf, rbuf)
        self._step_arrays = (len(cells), len(con), sum(
            a.nbytes for a in (pair_row, pair_rank, *send_idx, *recv_idx, *sbuf, *rbuf)))
        return ColourSchedule(colours, boundary, start, finish)

    def _complete_sends(self, free=False):
        """Wait for the last sweep's sends (the neighbours have posted every receive, so this
        never blocks for long); free=True (a new schedule replaces this one): free the
        requests too."""
        if self._sending is not None:
            from mpi4py import MPI

            sends, recvs = self._sending[:2]
            for requests in sends:
                MPI.Request.Waitall(requests)
            if free:
                for requests in sends + recvs:
                    for r in requests:
                        r.Free()
                self._sending = None

    def sums(self, columns):
        """exact_sums over all ranks; its time counts as communication only on several."""
        if self.comm.size == 1:
            return exact_sums(columns)
        t0 = time.perf_counter()
        self._complete_sends()
        out = exact_sums(columns, self.comm.mpi)
        self.seconds += time.perf_counter() - t0
        return out

    # -- memory --------------------------------------------------------------------------------
    def memory(self):
        """This rank's bytes in the last step, by what they scale with, for the run summary.

        bodies/ghosts/contacts: counts. body_bytes, ghost_bytes: the owned and ghost rows of
        every BodySet field and of du. contact_bytes: the contact rows (every ContactSet
        field, the cell of the point) and their body incidences (the solver's own blocks per
        incidence come on top: also O(contacts)). exchange_bytes: the holders of the held
        bodies and the sweep's exchange indices and buffers (O(ghosts)). partition_bytes:
        the cut tree and the boxes (O(P), the same on every rank). peak_rss_bytes: the
        process's peak resident size (everything, Python and MPI included). No term grows
        with the total number of bodies N, only with this rank's share."""
        owned, ghosts = self._held
        contacts, incidences, exchange = self._step_arrays
        body_row = _row_bytes(BODY_FIELDS) + 6 * 8                # + the row of du
        contact_row = Interactions.row_bytes() + 3 * 8          # + the cell of the point
        return {"bodies": owned, "ghosts": ghosts, "contacts": contacts,
                "body_bytes": owned * body_row, "ghost_bytes": ghosts * body_row,
                "contact_bytes": contacts * contact_row + incidences * 2 * 8,
                "exchange_bytes": exchange, "partition_bytes": self.part.nbytes(),
                "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _row_bytes(fields):
    """Bytes of one row of a table of fields {name: (trailing shape, dtype)}."""
    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
               for shape, dtype in fields.values())
