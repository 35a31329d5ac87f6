"""The time stepper: Moreau-Jean's Contact Dynamics step, as data flowing through the stages.

  1. half step            dynamics.half_step                 q(t+h/2) = q(t) + h/2 u(t)
  2. detect               contact.detect                     contacts at q(t+h/2), warm start
  3. assemble             assembly.LocalDynamics             H, W = H M^-1 H^T, B
  4. solve                solvers.*                          C(B + W R, R) = 0
  5. update               dynamics.apply_velocity_change, half_step  u(t+h), q(t+h)
Every rank runs the same code on the bodies it holds; the parallel layer (parallel.Domain)
migrates bodies to their owners and makes ghosts before the step, keeps the contacts whose
point lies in this rank's subdomain, and hands the solver its exchange and sum functions. The
Gauss-Seidel order is the cell-parity colouring (parallel.colouring), the same for any number
of ranks, so the trajectory does not depend on it. The run around the steps (frames, files,
checkpoints, signals) is run.py's; the summary is report.py's.
"""
import contextlib
import time

import numpy as np

from .. import dynamics, elements, laws
from ..assembly import LocalDynamics
from ..assembly.operators import reaction_work
from ..contact import detect
from ..contact.broadphase import Skin
from ..contact.periodic import Period
from ..errors import InputError, everywhere
from ..parallel import Comm
from ..parallel.colouring import Levels
from ..parallel.domain import Domain
from ..parallel.operators import delassus_matrix, distributed_delassus
from ..parallel.reach import Reach
from ..platform import faults
from ..solvers import GaussSeidel, Problem
from ..solvers.residual import residual_from_parts
from ..tables.checks import positive
from ..tables.interactions import Interactions
from ..tables.table import in_order
from . import guards
from .projection import Projection

PHASES = ("integrate", "detect", "assemble", "solve", "update", "output", "migrate",
          "communication")
GUARDS = ("warn", "error", "off")
SKIN = 0.5                 # the broad phase's skin, in the smallest radius (broadphase.Skin)


def empty_contacts():
    return Interactions.empty()


class Stepper:
    """The state of a run of `model` with time step `step` (owned bodies, the last step's
    contacts, clock, energy balance) and the step that advances it.

    solver: a GaussSeidel (default tol 1e-8, 1000 sweeps); comm: a parallel.Comm (default:
    one over MPI_COMM_WORLD); verify_every: every so many steps with contacts (first
    included), the step's residual is recomputed from U = W R + B with W assembled as a PETSc
    matrix (0: never); balance_tolerance / balance: the Domain's repartition rule; guards
    ("warn", "error" or "off"), max_overlap, max_travel: the physics guards (guards.py).
    local_dynamics_hook(stepper, local_dynamics) and every callable of `observers` are
    called after each assembly (a test's probe, the FCLIB export).
    """

    def __init__(self, model, step, solver=None, comm=None, verify_every=100,
                 balance_tolerance=1.1, balance="time", guards="warn", max_overlap=0.2,
                 max_travel=0.5, projection=None):
        self.model = model
        # projection on constraints after each step (projection.py): off by default
        self.projection = Projection() if projection is True else (projection or None)
        self.h = float(positive("step", step))
        self.solver = solver or GaussSeidel()
        self.comm = comm if comm is not None else Comm()
        self.verify_every = int(verify_every)
        self._verified = 0
        if guards not in GUARDS:
            raise InputError(f"guards must be 'warn', 'error' or 'off', got {guards!r}")
        self.guards = guards
        self.max_overlap = float(positive("max_overlap", max_overlap))
        self.max_travel = float(positive("max_travel", max_travel))
        with self.comm.collective():
            self._set_up(balance_tolerance, balance)
        self.n_bodies = self.comm.sum(self.owned.n_owned)
        self.time = 0.0
        self.step_count = 0
        self.contacts = None
        self.history = []
        self.phase = dict.fromkeys(PHASES, 0.0)
        # the energy balance E(0) + W_loads = E(t) + D: E(0) at the start, then cumulative
        # work of the loads and energy dissipated by the contacts (checkpointed)
        self.energy = None
        self.local_dynamics_hook = None
        self.observers = []
        # what the last step leaves for the run's report: local-solve outcomes, solver
        # events, du of the owned bodies, ghost count, guards (count, [(key, text)], pending),
        # the elements' events (by NAME: (n, EVENTS) on every rank)
        self.last = {"local": {}, "events": {}, "du": None, "ghosts": 0, "guard": (0, [], None),
                     "element_events": {}}

    def _set_up(self, balance_tolerance, balance):
        """The model's bodies on this rank, the contact margin, the cell (at least a body's
        diameter: broad phase, colouring and partition) and the domain that owns them."""
        comm = self.comm
        with comm.collective():               # a generator (user code) may fail on one rank
            local, found, counts = self.model.part(comm.rank, comm.size)
        self.model.check(comm.first_duplicate(local.gid),      # the model-wide checks
                         comm.allreduce_array(found.astype(np.int64), "max").astype(bool),
                         comm.allreduce_array(counts.astype(np.int64), "sum"))
        self.mu_table, self.e_table = self.model.materials.tables()
        self.rolling_tables = self.model.materials.rolling_tables()
        self.c_table = self.model.materials.compliance_table(self.h)
        rmin = self.rmin = self.comm.min(float(local.radius.min()) if len(local) else np.inf)
        rmax = self.comm.max(float(local.radius.max()) if len(local) else 0.0)
        self.margin = (self.model.contact_margin if self.model.contact_margin is not None
                       else 1e-6 * rmin)
        # the broad phase's pairs kept over steps while no body moves half the skin
        self.skin = Skin(self.margin, SKIN * rmin if np.isfinite(rmin) else 0.0)
        # the elements (replicated): their rows' reach enlarges the cells if it exceeds a
        # body's; the initial state of the bodies they refer to, gathered once for all
        self.elements = elements.make(self.model)
        wanted = np.unique(np.concatenate([e.bodies() for e in self.elements]).astype(np.int64))
        mine = np.isin(local.gid, wanted)
        fields = ("gid", "x", "q", "radius", "material")
        parts = self.comm.allgather({f: getattr(local, f)[mine] for f in fields}) \
            if len(wanted) else []
        found = elements.Found(*(np.concatenate([q[f] for q in parts]) if parts else
                                 np.zeros((0,) + local.FIELDS[f][0], local.FIELDS[f][1])
                                 for f in fields))
        for e in self.elements:
            e.set_up(found)
        # periodic axes: centres wrapped into the period, cells stretched to divide it
        self.period = period = Period(self.model.periods)
        if period:
            if self.projection is not None:
                raise InputError("projection on constraints does not take periodic "
                                 "boundaries yet: leave one of them out")
            local.x[:] += period.wrap(local.x)
        self.owned = self._domain(local, rmax, balance_tolerance, balance)
        wanted = [e.touching() for e in self.elements]
        if any(t is not None for t in wanted):     # the contacts touching at the start
            table = self._touching(max(t for t in wanted if t is not None))
            for e, t in zip(self.elements, wanted):
                if t is not None:
                    e.touched(table)
            if max(2.0 * e.reach for e in self.elements) + self.margin > self.cell:
                self.domain.free()                 # rows that reach farther: larger cells
                self.owned = self._domain(self.owned, rmax, balance_tolerance, balance)

    def _domain(self, local, rmax, balance_tolerance, balance):
        """The cells (at least a body's diameter and twice the elements' reach), the
        colouring's levels and the domain that owns the bodies `local` (any split): the
        owned bodies."""
        period, rmin = self.period, self.rmin
        self.cell = max([2.0 * rmax] + [2.0 * e.reach for e in self.elements]) + self.margin
        top = period.fit(self.cell) if period else self.cell
        # the colouring's cells, from the largest (top) down to the smallest bodies'
        self.levels = Levels(top, rmin + 0.5 * self.margin, period.origin(),
                             period.cells(top))
        linked = np.unique(np.concatenate([e.linked() for e in self.elements])
                           .astype(np.int64))              # bodies with element rows
        reach = Reach(self.levels, self.margin, linked, period)
        # an element without specs nor rows does nothing (bonds found later have specs)
        self.elements = [e for e in self.elements if len(e) or len(e.specs)]
        self._stages = elements.stages(self.elements)      # who takes part in each hook
        self._events = [e for e in self.elements if e.EVENTS]      # and who has events
        self._rheonomic = any(e.RHEONOMIC for e in self.elements)
        lo = self.comm.allreduce_array(local.x.min(axis=0) if len(local) else
                                       np.full(3, np.inf), "min")
        hi = self.comm.allreduce_array(local.x.max(axis=0) if len(local) else
                                       np.full(3, -np.inf), "max")
        axis = int(np.argmax(hi - lo))
        self.domain = Domain(self.comm, self.levels.finest, axis, balance_tolerance, balance,
                             reach=reach, row_reach=1 if reach.one else
                             (1 << (self.levels.nlevels - 2)) + 1, origin=period.origin(),
                             periodic=period.cells(self.levels.finest),
                             images=period.images if period else None)
        return self.domain.setup(local)

    def _touching(self, tolerance):
        """The contacts whose gap is at most `tolerance` (or the contact margin, the larger) at
        the start, each detected on the rank that owns it and gathered on every rank in key
        order (the same table on any number of ranks): Element.touched's."""
        if tolerance > 0.5 * self.rmin:
            raise InputError(f"the tolerance of touching contacts {tolerance:g} m exceeds half "
                             f"the smallest radius {self.rmin:g} m")
        tolerance = max(tolerance, self.margin)
        b = self.domain.with_ghosts(self.owned)
        rows = self._detect(b, tolerance, 0.0, rolling=False)
        rows = rows.take(np.flatnonzero(rows.gap <= tolerance))
        rows = self._own(rows, b)[0]
        obst = self.model.obstacles
        has_b = rows.b >= 0
        part = {"k1": rows.k1, "k2": rows.k2, "obstacle": rows.obstacle,
                "b": np.where(has_b, b.gid[np.maximum(rows.b, 0)], -1),
                "point": rows.point, "normal": rows.frame[:, 0], "gap": rows.gap,
                "mu": rows.param[:, 0], "material_a": b.material[rows.a],
                "material_b": np.where(has_b, b.material[np.maximum(rows.b, 0)],
                                       obst.material[np.maximum(rows.obstacle, 0)]
                                       if len(obst) else -1),
                "x_a": b.x[rows.a], "q_a": b.q[rows.a],
                "x_b": np.where(has_b[:, None], b.x[np.maximum(rows.b, 0)], 0.0),
                "q_b": np.where(has_b[:, None], b.q[np.maximum(rows.b, 0)], 0.0)}
        parts = self.comm.allgather(part)
        table = {k: np.concatenate([p[k] for p in parts]) for k in part}
        order = np.lexsort((table["k2"], table["k1"]))
        return {"margin": self.margin, **{k: v[order] for k, v in table.items()}}

    @property
    def bodies(self):
        """The bodies this rank owns (BodySet sorted by id)."""
        return self.owned

    def step(self):
        """Advance one step; returns its history row (every figure equal on every rank)."""
        h, dom = self.h, self.domain
        clock = time.perf_counter
        t0 = clock()
        comm0 = dom.seconds
        rank, step = self.comm.rank, self.step_count + 1
        faults.point("step", step, rank)
        if self.energy is None:                       # the balance starts from this state
            ke, pe = self.energies()
            self.energy = {"initial": ke + pe, "work_loads": 0.0, "dissipated": 0.0}
        owned = dom.migrate(self.owned)
        b = dom.with_ghosts(owned)
        previous = dom.share_contacts(self.contacts)
        for e in self._stages["start"]:             # driven bodies: v(t) from their signals
            e.start(b, self.time)
        start = b.x.copy()                            # the held bodies' (the guards)
        x0, w0 = start[:b.n_owned], b.w[:b.n_owned].copy()
        t_mig = clock()
        dynamics.half_step(b, h, upto=len(b))
        t1 = clock()
        faults.point("detect", step, rank)
        contacts = self._detect(b, self.margin, self.time + 0.5 * h)
        made = [e.rows(b, self.time, h) for e in self.elements]
        if made:                                      # the elements' rows beside the contacts
            self._check_reach([stretch for _, stretch in made])
            parts = [rows for rows in [contacts] + [rows for rows, _ in made] if len(rows)]
            # one part alone is taken as it is: every part is made afresh for this step
            contacts = parts[0] if len(parts) == 1 else Interactions.concat(parts)
        contacts = self._keep(contacts, b)            # no row between two driven sides
        contacts, colours, cells = self._own(contacts, b)      # stored in sweep order
        contacts.warm_start(previous)
        for e in self._stages["prepare"]:             # the laws' parameters from the state
            with self.comm.collective() if e.calls_user else contextlib.nullcontext():
                e.prepare(contacts, b, self.time, h)
        laws.link(contacts)                           # rows that read a partner's reaction
        t2 = clock()
        v_free, w_free, Jinv, inv_mass = dynamics.free_velocity(b, h, self.model.gravity)
        for e in self._stages["drive"]:               # loads of time, driven bodies
            e.drive(b, self.time, h, v_free, w_free, Jinv, inv_mass)
        wall = (self._wall(contacts, self.time),       # rheonomic rows
                self._wall(contacts, self.time + h))
        ld = LocalDynamics(contacts, b, v_free, w_free, Jinv, h, t=self.time,
                           inv_mass=inv_mass, wall=wall)
        for hook in (self.local_dynamics_hook, *self.observers):
            if hook is not None:
                hook(self, ld)
        t3 = clock()
        faults.point("solve", step, rank)
        # -- the solve: the solver's input and its call ------------------------------------
        du = np.zeros((len(b), 6))
        schedule = dom.schedule(b, ld.inc_body, ld.con, colours, cells, du)
        # W through the bodies; as one PETSc matrix over the ranks when a solver asks
        problem = Problem.coupled(ld, du, schedule, sums=dom.sums,
                                  operator=lambda: distributed_delassus(ld, dom, b),
                                  keys=(contacts.k1, contacts.k2))
        report = self.solver.solve(problem, contacts.R)
        # ------------------------------------------------------------------------------------
        residual = report.residual
        petsc_residual = np.nan
        n_rows = self.comm.sum(len(contacts))        # over all ranks: the same branch on each
        if self.verify_every and n_rows:
            if self._verified % self.verify_every == 0:
                petsc_residual = self._petsc_residual(ld, b, contacts.R)
            self._verified += 1
        t4 = clock()
        faults.point("update", step, rank)
        dynamics.apply_velocity_change(b, v_free, w_free, du, upto=len(b))
        dynamics.half_step(b, h, upto=len(b))
        # the reactions' work R . (U(t) + U(t+h)) / 2: minus the energy the contacts dissipate
        U_after = ld.velocity_after(b)
        contact_work = reaction_work(contacts.R, ld.U_before, U_after)
        for e in self._stages["update"]:              # their rows' state after the step
            e.update(contacts, ld.U_before, U_after, h, report.converged)
        happened = {e.NAME: self._occurred(e, e.events()) for e in self._eventful()}
        projected = (0, 0.0, 0.0)
        if self.projection is not None:               # positions onto the constraints
            projected = self._project(b, contacts, U_after, inv_mass)
        # the owned rows (views of the held ones; on one rank they are all there is)
        self.owned = o = b if b.n_owned == len(b) else b.take(slice(0, b.n_owned))
        wrap = self.period.wrap(o.x) if self.period else None
        guard = (0, [], None)
        if self.guards != "off":
            n_deep, deep = guards.deep_overlaps(contacts, b, self.max_overlap,
                                                self.model.obstacles.names)
            n_fast, fast, pending = guards.fast_bodies(
                o.gid, x0, o.x, o.radius, self.max_travel, h, b, start, self.model.obstacles,
                self.margin)
            guard = (n_deep + n_fast, deep + fast, pending)
        t5 = clock()
        self.contacts = contacts
        self.time = (self.step_count + 1) * h
        self.step_count += 1
        comm_time = dom.seconds - comm0
        # the load of the next balance check: work without waits, units 1 + contacts per body
        units = 1.0 + np.bincount(ld.inc_body, minlength=len(b))[:b.n_owned] \
            if self.comm.size > 1 else None
        dom.record_work((t5 - t0) - comm_time, units)
        for name, dt in zip(PHASES, (t1 - t_mig, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            self.phase[name] += dt
        self.phase["migrate"] += t_mig - t0
        self.phase["communication"] += comm_time
        signed = [dynamics.loads_work(o, x0, w0, h), -contact_work]     # constant loads' work
        for e in self._stages["work"]:                # the work of loads given in time
            work = e.work(o, x0, w0, self.time - 0.5 * h, h)
            if work is not None:
                signed[0] = signed[0] + work
        if self.period:                # centres back into the period; the jump of -m g.x
            o.x += wrap                # counts as the loads' work (the balance holds)
            signed[0] = signed[0] - o.mass * (wrap @ self.model.gravity)
        if self._rheonomic:                           # moving sides' work
            signed.append(np.zeros(0) if wall[0] is None else
                          reaction_work(contacts.R, wall[0], wall[1]))
        ke, pe, work, dissipated, *driven = self.energies(*signed)
        work += sum(driven)
        e = self.energy
        e["work_loads"] += work
        e["dissipated"] += dissipated
        self.last = {"local": report.local, "events": report.events, "du": du[:b.n_owned],
                     "ghosts": len(b) - b.n_owned, "guard": guard, "start": x0,
                     "projection": projected, "element_events": happened}
        return {"step": self.step_count, "time": self.time,
                "contacts": n_rows,
                "iterations": report.iterations, "residual": residual,
                "newton_iterations": report.newton_iterations,
                "projection_sweeps": projected[0], "projection_violation": projected[2],
                "ksp_iterations": report.ksp_iterations,
                **{f"event_{k}": int(v) for k, v in report.events.items()},
                "converged": int(report.converged), "kinetic_energy": ke,
                "petsc_residual": petsc_residual,
                "potential_energy": pe, "work_loads": e["work_loads"],
                "dissipated": e["dissipated"],
                "energy_error": e["initial"] + e["work_loads"] - ke - pe - e["dissipated"],
                "t_integrate": t1 - t_mig + t5 - t4, "t_detect": t2 - t1, "t_assemble": t3 - t2,
                "t_solve": t4 - t3, "t_update": t5 - t4, "t_output": 0.0,
                "t_migrate": t_mig - t0, "t_communication": comm_time}

    def _detect(self, b, margin, t, rolling=True):
        """The contacts of the held bodies b at their positions, within `margin`, with the
        moving obstacles where they are at time t (and across periodic boundaries); with
        their rolling rows unless rolling is False."""
        tables = self.rolling_tables if rolling else None
        if self.period:
            return self._across(b, margin, t, tables)
        return detect(b, self._obstacles(t), self.mu_table, self.e_table, margin, tables,
                      self.skin, self.c_table)

    def _across(self, b, margin, t, tables):
        """_detect with periodic images (periodic.py): the images near a boundary join the
        bodies; a row is kept where its body A is itself, B taken as the body with its offset
        minus the image's shift."""
        index, shift = self.period.images(b.x, float(np.max(self.levels.top)))
        obstacles = self._obstacles(t)
        if not len(index):                      # nothing near a boundary
            return detect(b, obstacles, self.mu_table, self.e_table, margin, tables,
                          c_table=self.c_table)
        images = b.take(index)
        images.x = images.x + shift
        n = len(b)
        rows = detect(type(b).concat([b.take(np.arange(n)), images]), obstacles,
                      self.mu_table, self.e_table, margin, tables, c_table=self.c_table)
        image = rows.b >= n
        k = np.where(image, rows.b - n, 0)
        keep = (rows.a < n) & ~(image & (index[k] == rows.a))
        rows.offset[image] = -shift[k[image]]
        rows.b[image] = index[k[image]]
        return rows.take(np.flatnonzero(keep))

    def _own(self, rows, b):
        """(rows, colours, cells): the rows this rank owns (by the colouring's cells), in
        sweep order, each colour's range and each row's cell (parallel.colouring.Levels)."""
        if not len(rows) and self.comm.size == 1:   # none to order (the check below is
            cells = np.zeros((0, 4), np.int64)       # collective on several ranks)
            return rows, self.levels.order(cells, rows.k1, rows.k2)[1], cells
        cells = self.levels.row_cells(rows, b, self.margin)
        if self.comm.size > 1:                    # on one rank every row is this rank's
            owner = self.domain.owner_of_cells(self.levels.anchor(cells))
            if self.levels.nlevels > 1:
                self._check_held(rows, owner)
            mine = np.flatnonzero(owner == self.comm.rank)
            rows, cells = rows.take(mine), cells[mine]
        order, colours = self.levels.order(cells, rows.k1, rows.k2)
        if in_order(order):                      # in sweep order already: nothing to move
            return rows, colours, cells
        return rows.take(order), colours, cells[order]

    def _check_held(self, rows, owner):
        """Collective: every row's owner holds its bodies (parsolve/reach.py makes it so for
        the rows of a step); a row whose cell lies beyond its bodies' reach would be lost, so
        it is refused by name on every rank instead."""
        dom = self.domain
        bad = ~dom.held_by(rows.a, owner) | ((rows.b >= 0) & ~dom.held_by(
            np.maximum(rows.b, 0), owner))
        count = self.comm.sum(int(bad.sum()))
        if not count:
            return
        k = np.flatnonzero(bad)
        first = (int(rows.k1[k[0]]), int(rows.k2[k[0]])) if len(k) else (-1, -1)
        worst = max(self.comm.allgather(first))
        raise everywhere(InputError(
            f"{count} row(s) (the first: key {worst}) lie in a colouring cell whose owner "
            "does not hold their bodies: a gap far beyond the contact margin (projection "
            "with bodies of several sizes?); run on one rank or without projection"))

    def _obstacles(self, t):
        """The obstacles where the elements place them at time t."""
        obstacles = self.model.obstacles
        for e in self._stages["obstacles"]:
            obstacles = e.obstacles(obstacles, t)
        return obstacles

    def _wall(self, rows, t):
        """The moving sides' velocities (n, 3) of `rows` at t, local frame, or None."""
        walls = [w for w in (e.wall(rows, t) for e in self._stages["wall"]) if w is not None]
        return None if not walls else walls[0] if len(walls) == 1 else sum(walls)

    def _keep(self, rows, b):
        """rows without those the elements drop (between two driven sides: nothing there
        can move, so their W would be zero)."""
        keep = [k for k in (e.keep(rows, b) for e in self._stages["keep"]) if k is not None]
        if not keep:
            return rows
        return rows.take(np.flatnonzero(np.logical_and.reduce(keep)))

    def _check_reach(self, stretches):
        """Collective: an element whose bodies moved farther than half a cell from its row's
        point (a spring stretched, say, to 1.5 times its first reach) would break the ghost
        layer and the colouring: refused by name on every rank."""
        worst = max(stretches)
        half_cell = 0.5 * self.cell
        if self.comm.max(worst[0]) <= half_cell:
            return
        d, name = max(self.comm.allgather(worst))
        raise everywhere(InputError(
            f"{name}: a body moved {d:.6g} m from its row's point, beyond the reach "
            f"{half_cell:.6g} m the cells were built for (1.5 times the elements' longest at "
            "the start); shorten it or start it nearer to its rest length"))

    def _project(self, b, contacts, U_end, inv_mass):
        """Projection on the constraints at the step's end (projection.py): (sweeps,
        residual, the largest violation before, over all ranks)."""
        t, h, dom = self.time, self.h, self.domain
        constraints = self._keep(Interactions.concat(
            [e.constraints(b, t, h) for e in self.elements]), b)
        worst = self.comm.max(self.projection.violation(contacts, U_end, constraints, h))
        threshold = self.projection.threshold
        if worst <= (1e-4 * self.rmin if threshold is None else threshold):
            return 0, 0.0, worst
        # the contacts at the end positions (exact gaps) within twice the worst violation: a
        # correction that large reaches pairs the step's margin did not see (pushing two
        # voussoirs apart closes the joints beyond them)
        near = self._keep(self._detect(b, self.margin + 2.0 * worst, t + h, rolling=False), b)
        rows, colours, cells = self._own(Interactions.concat([near, constraints]), b)
        return self.projection.apply(
            b, rows, h, inv_mass, dom.sums,
            lambda ld, du: dom.schedule(b, ld.inc_body, ld.con, colours, cells, du), worst)

    # -- the elements' events ------------------------------------------------------------------
    def _eventful(self):
        """The elements with events (EVENTS) and specs."""
        return [e for e in self._events if len(e)]

    def _occurred(self, element, events):
        """Collective: every rank's `events` of `element`, gathered in the order of their
        first column, handed to its `occurred` on every rank; returns them."""
        parts = [p for p in self.comm.allgather(np.asarray(events, float)) if len(p)]
        got = np.concatenate(parts) if parts else np.zeros((0, len(element.EVENTS)))
        got = got[np.argsort(got[:, 0], kind="stable")]
        element.occurred(got)
        return got

    # -- the elements' outputs -----------------------------------------------------------------
    def _reporting(self):
        """The elements with outputs of their own (a results series each)."""
        return [e for e in self.elements if e.OUTPUTS]

    def outputs(self, element, everywhere=True):
        """The outputs of the last step of `element` (one of self.elements, or its NAME), by
        element index (NaN for one without rows): {output: (n,)} on every rank, or
        (everywhere=False, the results' writer) on rank 0 only (None elsewhere)."""
        if isinstance(element, str):
            element = next(e for e in self.elements if e.NAME == element)
        j, vals = element.outputs()
        rows = {"j": np.asarray(j, np.int64), "v": vals}
        got = self.comm.gather_rows(rows) if not everywhere else \
            {k: np.concatenate([p[k] for p in self.comm.allgather(rows)]) for k in rows}
        if got is None:
            return None
        out = np.full((len(element), len(element.OUTPUTS)), np.nan)
        out[got["j"]] = got["v"]
        return {name: out[:, k].copy() for k, name in enumerate(element.OUTPUTS)}

    # -- state for checkpoints ---------------------------------------------------------------
    def snapshot(self):
        """What this rank must save for the run to continue exactly: its owned bodies (every
        BodySet field), the contacts it owns (keys, points, reactions: the warm start) and the
        clock. Arrays are local; rows are identified by body ids and contact keys. The columns
        are the tables' PERSISTENT ones."""
        o = self.owned
        c = self.contacts if self.contacts is not None else empty_contacts()
        return {"bodies": {f: a[:o.n_owned].copy() for f, a in o.columns(o.PERSISTENT).items()},
                "contacts": {f: a.copy() for f, a in c.columns(c.PERSISTENT).items()},
                "step": self.step_count, "time": self.time, "energy": dict(self.energy or {})}

    def restore(self, bodies, contacts, step, time, energy=None):
        """Continue from a snapshot read on any number of ranks: `bodies` (dict of BodySet
        fields) and `contacts` (Interactions' persistent columns) are any slice of the saved
        rows on this rank; the domain sends bodies to their owners and the contacts follow at
        the next step."""
        from ..tables.bodies import BodySet
        from ..tables.interactions import Interactions

        with self.comm.collective():
            local = BodySet(len(bodies["gid"]), **bodies)
            self.owned = self.domain.setup(local)
            n = self.comm.sum(self.owned.n_owned)
            if n != self.n_bodies:
                raise InputError(f"restart: {n} bodies saved, the model has {self.n_bodies}")
        self.contacts = self.domain.scatter_contacts(Interactions(**contacts))
        for e in self._eventful():                    # states the rows record
            self._occurred(e, e.resumed(self.contacts))
        self.step_count, self.time = int(step), float(time)
        self.energy = dict(energy) if energy else None

    # -- reduced figures ---------------------------------------------------------------------
    def energies(self, *signed):
        """(kinetic, potential) energy of all bodies, then the sum of each array of `signed`
        (per-body or per-contact terms of this rank), all summed independently of the ranks
        in one reduction (exact sums take non-negative columns: a signed term is split)."""
        kinetic, pot = dynamics.energies(self.owned, self.model.gravity)
        columns = [kinetic, pot] + list(signed)
        sums = self.domain.signed_sums(columns).tolist()
        return tuple(sums[2 * k] - sums[2 * k + 1] for k in range(len(columns)))

    def _petsc_residual(self, ld, held, R):
        """The step's residual from U = W R + B with W assembled as one PETSc matrix over all
        ranks from the incidences (parallel.operators): an independent check of the
        body-coupled form the sweeps use. Kept in the history as petsc_residual."""
        W, _, csr = distributed_delassus(ld, self.domain, held)
        if W is None:                            # one rank: its rows are all of W
            W = delassus_matrix(*csr, self.comm.petsc())
        x, y = W.createVecs()
        x.setArray(R.reshape(-1))
        W.mult(x, y)
        U = y.getArray().reshape(-1, 3) + ld.B
        parts = np.stack([
            np.sum(laws.residual_vector(ld.kind, ld.param, R, U) ** 2, axis=1),
            np.sum(ld.B ** 2, axis=1),
            np.sum(R ** 2, axis=1), np.sum(U ** 2, axis=1)], axis=1)
        out = residual_from_parts(self.domain.sums(parts))
        for obj in (x, y, W):
            obj.destroy()
        return out
