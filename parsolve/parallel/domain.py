"""The domain decomposition of a run: partition, ownership, migration, ghosts.

Every rank owns the bodies whose centres lie in its subdomain, a box of whole cells cut by
recursive coordinate bisection (partition.py), and holds read-only ghost copies of the bodies
whose reach (a number of cells, from the body's size and neighbourhood: parsolve/reach.py)
meets its box: enough for every row it owns to find its bodies. The cells are those of the
smallest bodies, so one large body coarsens neither the cuts nor the ghost layer of the
grains away from it. A body's holders (its owner and the ranks that keep a ghost) follow
from its position, its reach and the cuts alone, so every rank computes the same holders
for the same body. Copies are exact (bits are sent), and the Gauss-Seidel exchange (halo.py) sends
new values, never increments, so all copies stay equal.

Rows travel as tables (parsolve.tables.table.Table): a table's PERSISTENT columns, as it declares
them, are what a row carries to another rank, whatever the table holds. Bodies are a table
with an `x` column and `n_owned` (owned rows first, then ghosts); contacts one with `point`.
The physics modules see none of this: they receive the held bodies and call the schedule's
exchange and the `sums` the Domain hands them.
"""
import resource
import time

import numpy as np

from ..errors import InputError
from ..tables.table import rows_of
from .colouring import ColourSchedule, cell_ids
from .halo import Halo
from .partition import RCBPartition
from .reduce import exact_signed_sums, exact_sums


class Domain:
    BALANCE = ("time", "contacts", "bodies")
    PARTITION = ("rcb", "slab")

    def __init__(self, comm, cell, axis=0, tolerance=1.1, balance="time", min_seconds=0.2,
                 min_steps=10, partition="rcb", reach=None, row_reach=1, origin=None,
                 periodic=None, images=None):
        """cell: the side of the partition's cells (one per axis, or one for all).
        reach: how many cells beyond a body's cell the rows it must be held for may lie
        (parsolve.parallel.reach.Reach: cells(gid, radius, x, coarse), coarse(gid, radius), staged;
        default 1: cells at least a body diameter). row_reach: cells from a row's point to
        the cell that may own it at the next step (default 1). origin, periodic: the cells'
        origin and the number of cells per period along each axis (RCBPartition).
        images(x, reach): the periodic images (index, shift) of the points x within reach of
        a boundary, which make their holders too (None: no periodic axis). axis: the axis of
        the cuts when partition="slab" (slabs of whole cells, the partition before RCB, kept
        for comparison); "rcb" cuts any axis."""
        if balance not in self.BALANCE:
            raise InputError(f"balance: {balance!r} is not one of {', '.join(self.BALANCE)}")
        if partition not in self.PARTITION:
            raise InputError(f"partition: {partition!r} is not one of "
                             f"{', '.join(self.PARTITION)}")
        if not tolerance >= 1.0:
            raise InputError(f"balance_tolerance: {tolerance} (max/avg load) must be >= 1")
        self.comm = comm
        self._reach = reach or _OneCell()
        self.reach = 1                    # the largest reach of a body, in cells, all ranks
        self.row_reach = int(row_reach)   # cells from a row's point to its next owner's
        self.part = RCBPartition(comm.size, cell, (0, 1, 2) if partition == "rcb" else (axis,),
                                 origin=origin, periodic=periodic)
        self._images = images
        self.tolerance = float(tolerance)
        self.balance = balance
        self.min_seconds = float(min_seconds)
        self.min_steps = int(min_steps)
        self.seconds = 0.0                # time spent in communication
        self.repartitions = 0
        self.force_repartition = False
        self.bytes_sent = 0               # payload bytes this rank sent to other ranks
        self.post_seconds = 0.0           # the sweeps' exchanges' time not spent waiting
        self.work_seconds = 0.0           # compute seconds of the steps, waits excluded
        self._units = None                # cost units of the owned bodies (record_work)
        self._window = np.zeros(3)        # seconds, units, steps since the cuts last moved
        self._cuts_moved = False          # in this step's migrate
        self._halo = None                 # the step's sweep exchange (sends maybe pending)
        self._held = (0, 0)               # owned and ghost bodies of the step (memory)
        self._row_bytes = (0, 0)          # bytes of a body row and of a contact row (memory)
        self._step_arrays = (0, 0, 0)     # contacts, incidences, exchange bytes (memory)

    # -- routing -------------------------------------------------------------------------------
    def route(self, index, dest, payload, neighbours=False):
        """Send row index[k] of every array in `payload` to rank dest[k]; returns the rows this
        rank receives, concatenated in order of source rank (then of `index`).

        neighbours=True: every dest is a neighbour (ghosts, contacts, the sweep's du), and the
        exchange is an MPI neighbour collective on the subdomain graph, O(neighbours) not O(P).
        Otherwise (migration, set-up) an all-to-all."""
        t0 = time.perf_counter()
        if self.comm.size == 1:                 # every row is for rank 0, in index order
            return {k: rows_of(v, index) for k, v in payload.items()}
        self._complete_sends()
        ranks = self._neighbours() if neighbours else np.arange(self.comm.size)
        order = np.argsort(dest, kind="stable")
        index, dest = index[order], dest[order]
        cuts = np.searchsorted(dest, np.append(ranks, ranks[-1] + 1 if len(ranks) else 0))
        if len(dest) and neighbours:   # each rank's part holds that rank alone (dest sorted)
            part = cuts[1:] > cuts[:-1]
            first, last = dest[cuts[:-1][part]], dest[cuts[1:][part] - 1]
            assert cuts[-1] - cuts[0] == len(dest) and (first == ranks[part]).all() and \
                (last == ranks[part]).all(), "neighbour exchange to a rank outside the graph"
        send = [{k: rows_of(v, index[cuts[i]:cuts[i + 1]]) for k, v in payload.items()}
                for i in range(len(ranks))]
        self.bytes_sent += sum(a.nbytes for i, r in enumerate(ranks) if r != self.comm.rank
                               for a in send[i].values())
        me = int(np.searchsorted(ranks, self.comm.rank))   # ranks (sorted) hold this one:
        own, send[me] = send[me], None                      # its part stays here, unsent
        recv = self._graph.neighbor_alltoall(send) if neighbours else \
            self.comm.mpi.alltoall(send)
        recv[me] = own
        out = {k: np.concatenate([p[k] for p in recv] or [v[:0]]) for k, v in payload.items()}
        self.seconds += time.perf_counter() - t0
        return out

    def _neighbours(self):
        """Ranks whose box lies within twice the largest reach of this rank's box in every
        axis (itself included), and the MPI distributed-graph communicator over them; rebuilt
        when the cuts move.

        Twice: a rank holds bodies up to their reach beyond its box (ghosts), and their
        other holders hold them up to their reach beyond theirs; when a subdomain is thinner
        than that, a ghost's du must reach the rank past it."""
        key = self.part.key()
        if getattr(self, "_graph_key", None) != key:
            self._ranks = self.part.neighbours(self.comm.rank, 2 * self.reach)
            if getattr(self, "_graph", None) is not None:
                self._graph.Free()
            nb = [int(x) for x in self._ranks]
            self._graph = self.comm.mpi.Create_dist_graph_adjacent(nb, nb, reorder=False)
            self._graph_key = key
        return self._ranks

    def route_table(self, table, index, dest, neighbours=False):
        """Rows index[k] of `table` (their PERSISTENT columns) sent to ranks dest[k]: the rows
        this rank receives, as a table of the same type (see route)."""
        got = self.route(index, dest, table.columns(table.PERSISTENT), neighbours)
        return type(table)(len(next(iter(got.values()))), **got)

    def _account(self, seconds, nbytes):
        self.seconds += seconds
        self.bytes_sent += nbytes

    # -- ownership -----------------------------------------------------------------------------
    def setup(self, bodies):
        """From any initial split of the bodies (each on one rank) to the owners' boxes."""
        if self.comm.size > 1:
            self.reach = self.comm.max(int(self._reach.cells(
                bodies.gid, bodies.radius, bodies.x).max(initial=1)))
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
        owner = self.part.owner(owned.x[:n])
        mine = owner == self.comm.rank
        leave = np.flatnonzero(~mine)                 # only the movers travel
        arrived = self.route_table(owned, leave, owner[leave])
        stay = owned if len(leave) == 0 and len(owned) == n else owned.take(np.flatnonzero(mine))
        if not len(arrived) and (np.diff(stay.gid) > 0).all():
            return stay                               # sorted by id already (the last step's)
        return type(owned).concat([stay, arrived]).sorted_by_gid()

    # -- load ---------------------------------------------------------------------------------
    def record_work(self, seconds, units):
        """Account a step: the `seconds` this rank computed (its waits in exchanges excluded)
        and `units`, the cost units of each owned body (1 + the contacts it touches), in the
        order of the owned rows the next migrate receives; None on one rank, where no cut
        is weighed)."""
        self.work_seconds += seconds
        if units is None:
            return
        self._units = np.asarray(units, float)
        self._window += (seconds, self._units.sum(), 1)

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
        self._row_bytes = (type(owned).row_bytes(), self._row_bytes[1])
        if self.comm.size == 1:
            return owned
        gid, radius, x = owned.gid[:n], owned.radius[:n], owned.x[:n]
        coarse, parts = None, []
        rows = np.arange(n)
        if self._reach.staged:        # the coarse bodies first: they set the others' reach
            big = self._reach.coarse(gid, radius)
            rows = np.flatnonzero(big)
            parts.append(self._send_ghosts(owned, rows, None))
            coarse = (np.concatenate([x[rows], parts[0].x]),
                      np.concatenate([radius[rows], parts[0].radius]))
            rows = np.flatnonzero(~big)
        parts.append(self._send_ghosts(owned, rows, coarse))
        ghosts = type(owned).concat(parts).sorted_by_gid()
        held = type(owned)(n + len(ghosts), n_owned=n, **{
            f: np.concatenate([a[:n], getattr(ghosts, f)])
            for f, a in owned.columns(owned.PERSISTENT).items()})
        # every holder of a body computes the same holder ranks from the same position
        self._holders = self._holders_of(held.x, self._reach.cells(held.gid, held.radius,
                                                                   held.x, coarse))
        self._owners = self.part.owner(held.x)
        self._held = (n, len(ghosts))
        return held

    def _send_ghosts(self, owned, rows, coarse):
        """Ghost copies of the owned bodies `rows` for the other ranks that must hold them;
        returns the copies this rank receives."""
        x = owned.x[rows]
        idx, dest = self._holders_of(x, self._reach.cells(owned.gid[rows], owned.radius[rows],
                                                          x, coarse))
        keep = dest != self.comm.rank
        return self.route_table(owned, rows[idx[keep]], dest[keep], neighbours=True)

    def _holders_of(self, x, reach):
        """part.holders of the points x with their reach, and of their periodic images (a
        body near a boundary is held where its image is in reach): (row, rank) pairs once
        each, rows in order, each row's ranks ascending."""
        rows, ranks = self.part.holders(x, reach)
        if self._images is None or not len(x):
            return rows, ranks
        idx, shift = self._images(x, float(np.max(reach * self.part.cell.max())))
        r2, k2 = self.part.holders(x[idx] + shift, reach[idx])
        key = np.unique(np.concatenate([rows, idx[r2]]) * self.comm.size
                        + np.concatenate([ranks, k2]))
        return key // self.comm.size, key % self.comm.size

    def share_contacts(self, contacts):
        """The previous step's contacts (keys and reactions) of every rank whose box is near
        this one: a persisting contact warm-starts on whichever rank owns it now. Right after
        the cuts moved, a contact's new holders may lie beyond the subdomain graph it was found
        on, so that once they travel by an all-to-all."""
        if contacts is not None:
            self._row_bytes = (self._row_bytes[0], type(contacts).row_bytes())
        if contacts is None or self.comm.size == 1:
            return contacts
        near, self._cuts_moved = not self._cuts_moved, False
        idx, dest = self._holders_of(contacts.point, np.full(len(contacts), self.row_reach))
        return self.route_table(contacts, idx, dest, neighbours=near)

    def scatter_contacts(self, contacts):
        """Contacts read from a checkpoint (any slice of the saved rows on each rank) sent to
        the ranks that own their points, once after a restart: from then on each rank's
        contacts lie in its box and share_contacts needs its neighbours only."""
        if self.comm.size == 1:
            return contacts
        return self.route_table(contacts, np.arange(len(contacts)),
                                self.part.owner(contacts.point))

    def body_owner(self, held):
        """The owner rank of each held body (as at the start of the step)."""
        if self.comm.size == 1:
            return np.zeros(len(held), np.int64)
        return self._owners

    def owns(self, points):
        return self.part.owner(points) == self.comm.rank

    def held_by(self, body, ranks):
        """Whether each rank ranks[k] holds a copy of the held body body[k] (from the holders
        of this step's ghosts: every holder of a body computes the same ones)."""
        if self.comm.size == 1:
            return np.ones(len(body), bool)
        row, rank = self._holders                # sorted by (row, rank)
        key = row * self.comm.size + rank
        want = np.asarray(body, np.int64) * self.comm.size + np.asarray(ranks, np.int64)
        pos = np.minimum(np.searchsorted(key, want), max(len(key) - 1, 0))
        return (key[pos] == want) if len(key) else np.zeros(len(want), bool)

    def owner_of_cells(self, cells):
        """The rank owning each row of partition cell indices (n, 3)."""
        if self.comm.size == 1:
            return np.zeros(len(cells), np.int64)
        return self.part.owner_of_cells(cells)

    def schedule(self, held, inc_body, con, colours, cells, du):
        """The ColourSchedule of this step's sweeps: colour c's contacts with the cells that
        touch a body held by other ranks first (whole cells, each in its key order), then the
        rest; the Halo exchanges du after the first part (begin) and before the next colour
        (end), so the transfer overlaps the relaxation of the rest."""
        self._step_arrays = (len(cells), len(con), 0)
        if self.comm.size == 1:
            return ColourSchedule(colours)
        self._complete_sends(free=True)
        pair_row, pair_rank = self._holders      # as when the ghosts were made
        # bodies with copies on other ranks
        shared = np.bincount(pair_row, minlength=len(held.gid)) > 1
        # boundary cells: those with a contact touching a shared body; whole cells move first
        key = cell_ids(cells)
        on_boundary = np.isin(key, key[con[shared[inc_body]]])
        colours = [np.concatenate([o[on_boundary[o]], o[~on_boundary[o]]]) for o in colours]
        boundary = [int(on_boundary[o].sum()) for o in colours]
        colour_of = np.empty(len(key), np.int64)
        for c, order in enumerate(colours):
            colour_of[order] = c
        inc_colour = colour_of[con] if len(con) else np.zeros(0, np.int64)
        ranks = self._neighbours()
        self._halo = halo = Halo(self._graph, ranks, self.comm.rank, held.gid, pair_row,
                                 pair_rank, inc_body, inc_colour, len(colours), du,
                                 self._account)
        self._step_arrays = (len(cells), len(con),
                             pair_row.nbytes + pair_rank.nbytes + halo.nbytes)
        return ColourSchedule(colours, boundary, halo.begin, halo.end,
                              halo.loop(colours, boundary))

    def _complete_sends(self, free=False):
        """Wait for the last sweep's sends before a collective; free=True (a new schedule
        replaces this one): free its requests too."""
        if self._halo is not None:
            if free:
                self.post_seconds += self._halo.post_seconds
                self._halo.free()
                self._halo = None
            else:
                self._halo.complete()

    def free(self):
        """Free this domain's MPI objects: the last sweep's requests and the subdomain graph
        (collective; after a completed step every send has been received)."""
        self._complete_sends(free=True)
        if getattr(self, "_graph", None) is not None:
            self._graph.Free()
            self._graph = self._graph_key = None

    def sums(self, columns):
        """exact_sums over all ranks; its time counts as communication only on several."""
        return self._reduced(exact_sums, columns)

    def signed_sums(self, columns):
        """exact_signed_sums over all ranks (the positive and negative parts' sums of terms
        of any sign), timed as sums."""
        return self._reduced(exact_signed_sums, columns)

    def _reduced(self, how, columns):
        if self.comm.size == 1:
            return how(columns)
        t0 = time.perf_counter()
        self._complete_sends()
        out = how(columns, self.comm.mpi)
        self.seconds += time.perf_counter() - t0
        return out

    # -- memory --------------------------------------------------------------------------------
    def memory(self, contact_row=None):
        """This rank's bytes in the last step, by what they scale with, for the run summary.

        bodies/ghosts/contacts: counts. body_bytes, ghost_bytes: the owned and ghost rows of
        every body column and of du. contact_bytes: the contact rows (contact_row bytes each,
        default: those of the last contact table routed, plus the cell of the point) and
        their body incidences (the solver's own blocks per incidence come on top: also
        O(contacts)). exchange_bytes: the holders of the held bodies and the sweep's exchange
        indices and buffers (O(ghosts)). partition_bytes: the cut tree and the boxes (O(P),
        the same on every rank). peak_rss_bytes: the process's peak resident size
        (everything, Python and MPI included). No term grows with the total number of
        bodies N, only with this rank's share."""
        owned, ghosts = self._held
        contacts, incidences, exchange = self._step_arrays
        body_row = self._row_bytes[0] + 6 * 8                      # + the row of du
        contact_row = (self._row_bytes[1] if contact_row is None else contact_row) + 3 * 8
        return {"bodies": owned, "ghosts": ghosts, "contacts": contacts,
                "body_bytes": owned * body_row, "ghost_bytes": ghosts * body_row,
                "contact_bytes": contacts * contact_row + incidences * 2 * 8,
                "exchange_bytes": exchange, "partition_bytes": self.part.nbytes(),
                "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


class _OneCell:
    """The default reach: one cell for every body (cells at least a body's diameter)."""
    one, staged = True, False

    def cells(self, gid, radius, x, coarse=None):
        return np.ones(len(gid), np.int64)

    def coarse(self, gid, radius):
        return np.zeros(len(gid), bool)
