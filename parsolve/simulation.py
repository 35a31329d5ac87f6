"""The time stepper: seed 001's Contact Dynamics step, as data flowing through the stages.

  1. half step            dynamics.half_step                 q(t+h/2) = q(t) + h/2 u(t)
  2. detect               contact.detect                     contacts at q(t+h/2), warm start
  3. assemble             assembly.LocalDynamics             H, W = H M^-1 H^T, B
  4. solve                solvers.*                          C(B + W R, R) = 0
  5. update               dynamics.apply_velocity_change, half_step  u(t+h), q(t+h)
  6. output               io.ResultsWriter                   history row, frames
Every rank runs the same code on the bodies it holds; the parallel layer (parallel.Domain)
migrates bodies to their owners and makes ghosts before the step, keeps the contacts whose
point lies in this rank's subdomain, and hands the solver its exchange and sum functions. The
Gauss-Seidel order is the cell-parity colouring (parallel.colouring), the same for any number
of ranks, so the trajectory does not depend on it.
"""
import contextlib
import os
import signal
import threading
import time

import numpy as np

from . import dynamics
from .assembly import LocalDynamics
from .contact import detect
from . import faults, guards
from .errors import CollectiveError, InputError, everywhere
from .io.checkpoint import CheckpointPolicy
from .io.results import ResultsWriter, history_names, parts_dir
from .model.checks import finite, positive
from .parallel import Comm
from .parallel.colouring import cells_of, colours_of, sweep_order
from .parallel.domain import Domain
from .solvers import GaussSeidel
from .solvers.reference import project_rows, residual_from_parts

EXIT_SIGNAL = 3      # the exit code of a run ended by SIGTERM/SIGUSR1 after its checkpoint
GUARD_LINES = 10     # physics-guard warnings printed in a run (all are counted)
MEMORY = ("body_bytes", "ghost_bytes", "contact_bytes", "exchange_bytes", "peak_rss_bytes")


_CAUGHT = {"signal": 0}


def _on_signal(signum, frame):
    _CAUGHT["signal"] = signum


def catch_stop_signals():
    """SIGTERM and SIGUSR1 (SLURM's --signal) only set a flag from now on; the run loop reads
    it collectively after each step, so that every rank stops at the same step. Returns the
    previous handlers. `parsolve run` calls it before the script, so that a signal during the
    set-up is not fatal either."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGUSR1):
            previous[sig] = signal.signal(sig, _on_signal)
    return previous


@contextlib.contextmanager
def _signals_caught():
    previous = catch_stop_signals()
    try:
        yield _CAUGHT
    finally:
        for sig, h in previous.items():
            signal.signal(sig, h)


PHASES = ("integrate", "detect", "assemble", "solve", "update", "output", "migrate",
          "communication")


class Simulation:
    """A run of `model` with time step `step`.

    solver: a GaussSeidel (default tol 1e-8, 1000 sweeps); output: results file path
    ($PARSOLVE_OUTPUT, set by `parsolve run --output`, takes precedence; none: no file); frames: simulated seconds between frames (default: first and
    last only); progress: wall seconds between progress lines on rank 0 (0 disables);
    stop_file: a file whose appearance ends the run cleanly after the current step;
    verify_every: every so many steps with contacts (first included), the step's residual is
    recomputed from U = W R + B with W assembled as a PETSc matrix (0: never);
    balance_tolerance / balance: repartition when max/avg of the load per rank exceeds the
    tolerance; the load is "time" (default: each body's cost units, 1 + its contacts, scaled
    by its rank's measured seconds per unit), "contacts" (the units alone) or "bodies";
    checkpoint_every (steps) / checkpoint_seconds (wall clock) / checkpoint_keep / checkpoint_dir
    (default "checkpoints"): the checkpoint policy (a checkpoint is also written when a STOP
    file or SIGTERM/SIGUSR1 ends the run); restart: a checkpoint to continue from, or "auto"
    for the newest in checkpoint_dir if any. `parsolve run --restart/--checkpoint-*` set
    these through PARSOLVE_* environment variables, which take precedence.
    flush_seconds: wall seconds between closings of the results' segments (besides every
    checkpoint and the end): what a crash can lose at most (io/results.py).
    guards ("warn", "error" or "off"), max_overlap, max_travel: the physics guards
    (guards.py): contacts deeper than max_overlap times the smaller radius, bodies moving
    more than max_travel times their radius in a step.
    """

    def __init__(self, model, step, solver=None, output=None, frames=None, progress=5.0,
                 comm=None, stop_file="STOP", verify_every=100, quiet=False,
                 balance_tolerance=1.1, checkpoint_every=None, checkpoint_seconds=None,
                 checkpoint_keep=3, checkpoint_dir=None, restart=None, balance="time",
                 flush_seconds=300.0, guards="warn", max_overlap=0.2, max_travel=0.5):
        self.model = model
        self.h = float(positive("step", step))
        self.solver = solver or GaussSeidel()
        # `parsolve run --output` (PARSOLVE_OUTPUT) overrides what the script asks for
        self.output = os.environ.get("PARSOLVE_OUTPUT") or output
        self.frame_interval = None if frames is None else float(positive("frames", frames))
        self.progress = float(progress)
        self.comm = comm if comm is not None else Comm()
        self.stop_file = stop_file
        env = os.environ.get
        self.restart = env("PARSOLVE_RESTART") or restart
        self.checkpoints = CheckpointPolicy(
            directory=env("PARSOLVE_CHECKPOINT_DIR") or checkpoint_dir or "checkpoints",
            every=env("PARSOLVE_CHECKPOINT_EVERY") or checkpoint_every,
            seconds=env("PARSOLVE_CHECKPOINT_SECONDS") or checkpoint_seconds,
            keep=env("PARSOLVE_CHECKPOINT_KEEP") or checkpoint_keep)
        self.verify_every = int(verify_every)
        self._verified = 0
        self.quiet = quiet
        self.flush_seconds = float(positive("flush_seconds", flush_seconds))
        if guards not in ("warn", "error", "off"):
            raise InputError(f"guards must be 'warn', 'error' or 'off', got {guards!r}")
        self.guards = guards
        self.max_overlap = float(positive("max_overlap", max_overlap))
        self.max_travel = float(positive("max_travel", max_travel))
        self._guard = (0, [])
        with self.comm.collective():
            local = model.build(self.comm)
            self.mu_table, self.e_table = model.materials.tables()
            rmin = self.comm.min(float(local.radius.min()) if len(local) else np.inf)
            rmax = self.comm.max(float(local.radius.max()) if len(local) else 0.0)
            self.margin = (model.contact_margin if model.contact_margin is not None
                           else 1e-6 * rmin)
            # cells of the broad phase, the colouring and the partition: >= a body's diameter
            self.cell = 2.0 * rmax + self.margin
            lo = self.comm.allreduce_array(local.x.min(axis=0) if len(local) else
                                           np.full(3, np.inf), "min")
            hi = self.comm.allreduce_array(local.x.max(axis=0) if len(local) else
                                           np.full(3, -np.inf), "max")
            axis = int(np.argmax(hi - lo))
            self.domain = Domain(self.comm, self.cell, axis, balance_tolerance, balance)
            self.owned = self.domain.setup(local)
        self.n_bodies = self.comm.sum(self.owned.n_owned)
        self.time = 0.0
        self.step_count = 0
        self.contacts = None
        self.history = []
        self.phase = dict.fromkeys(PHASES, 0.0)
        # the energy balance E(0) + W_loads = E(t) + D: E(0) at the start, then cumulative
        # work of the loads and energy dissipated by the contacts (checkpointed)
        self.energy = None
        # called as hook(simulation, local_dynamics) after each assembly (e.g. FCLIB export)
        self.local_dynamics_hook = None
        if env("PARSOLVE_FCLIB_STEP"):                  # parsolve run --fclib-step N
            from .io.fclib import export_step

            with self.comm.collective():
                export_step(self, env("PARSOLVE_FCLIB_OUT"), env("PARSOLVE_FCLIB_STEP"))

    # -- one step ----------------------------------------------------------------------------
    @property
    def bodies(self):
        """The bodies this rank owns (BodySet sorted by id)."""
        return self.owned

    def step(self):
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
        x0, w0 = b.x[:b.n_owned].copy(), b.w[:b.n_owned].copy()
        t_mig = clock()
        dynamics.half_step(b, h, upto=len(b))
        t1 = clock()
        faults.point("detect", step, rank)
        contacts = detect(b, self.model.obstacles, self.mu_table, self.e_table, self.margin)
        contacts = contacts.take(np.nonzero(dom.owns(contacts.point))[0])
        cells = cells_of(contacts.point, self.cell)
        order, colours = sweep_order(colours_of(cells), contacts.k1, contacts.k2)
        contacts, cells = contacts.take(order), cells[order]   # stored in sweep order
        contacts.warm_start(previous)
        t2 = clock()
        v_free, w_free, Jinv = dynamics.free_velocity(b, h, self.model.gravity)
        ld = LocalDynamics(contacts, b, v_free, w_free, Jinv, h, self.comm)
        if self.local_dynamics_hook is not None:
            self.local_dynamics_hook(self, ld)
        t3 = clock()
        faults.point("solve", step, rank)
        du = np.zeros((len(b), 6))
        schedule = dom.schedule(b, ld.inc_body, ld.con, colours, cells, du)
        # a solver with a global operator (Newton) assembles W over the ranks itself
        operator = ({"domain": dom, "held": b}
                    if getattr(self.solver, "distributed_operator", False) else {})
        report = self.solver.solve_coupled(ld, contacts.R, du, schedule, sums=dom.sums,
                                           **operator)
        residual = report.residual
        petsc_residual = np.nan
        if self.verify_every and self._verified % self.verify_every == 0:
            petsc_residual = self._petsc_residual(ld, b, contacts.R)
        self._verified += 1
        t4 = clock()
        faults.point("update", step, rank)
        dynamics.apply_velocity_change(b, v_free, w_free, du, upto=len(b))
        dynamics.half_step(b, h, upto=len(b))
        # the reactions' work R . (U(t) + U(t+h)) / 2: minus the energy the contacts dissipate
        contact_work = 0.5 * np.einsum("ki,ki->k", contacts.R,
                                       ld.U_before + ld.velocity_after(b))
        ld.destroy()
        self.owned = b.take(np.arange(b.n_owned))
        if self.guards != "off":
            n_deep, deep = guards.deep_overlaps(contacts, b, self.max_overlap,
                                                self.model.obstacles.names)
            o = self.owned
            n_fast, fast = guards.fast_bodies(o.gid, o.x - x0, o.radius, self.max_travel, h)
            self._guard = (n_deep + n_fast, deep + fast)
        t5 = clock()
        self.contacts = contacts
        self.time = (self.step_count + 1) * h
        self.step_count += 1
        comm_time = dom.seconds - comm0
        # the load of the next balance check: work without waits, units 1 + contacts per body
        units = 1.0 + np.bincount(ld.inc_body, minlength=len(b))[:b.n_owned]
        dom.record_work((t5 - t0) - comm_time, units)
        for name, dt in zip(PHASES, (t1 - t_mig, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            self.phase[name] += dt
        self.phase["migrate"] += t_mig - t0
        self.phase["communication"] += comm_time
        o = self.owned
        load_work = (np.einsum("ni,ni->n", o.force, o.x - x0)        # constant loads' work
                     + 0.5 * h * np.einsum("ni,ni->n", o.torque, w0 + o.w))
        ke, pe, work, dissipated = self.energies(load_work, -contact_work)
        e = self.energy
        e["work_loads"] += work
        e["dissipated"] += dissipated
        row = {"step": self.step_count, "time": self.time,
               "contacts": self.comm.sum(len(contacts)),
               "iterations": report.iterations, "residual": residual,
               "newton_iterations": getattr(report, "newton_iterations", 0),
               "ksp_iterations": getattr(report, "ksp_iterations", 0),
               **{f"event_{k}": int(v) for k, v in report.events.items()},
               "converged": int(report.converged), "kinetic_energy": ke,
               "petsc_residual": petsc_residual,
               "potential_energy": pe, "work_loads": e["work_loads"],
               "dissipated": e["dissipated"],
               "energy_error": e["initial"] + e["work_loads"] - ke - pe - e["dissipated"],
               "t_integrate": t1 - t_mig + t5 - t4, "t_detect": t2 - t1, "t_assemble": t3 - t2,
               "t_solve": t4 - t3, "t_update": t5 - t4, "t_output": 0.0,
               "t_migrate": t_mig - t0, "t_communication": comm_time}
        self._local, self._events = report.local, report.events
        self._du = du[:b.n_owned]
        self._ghosts = len(b) - b.n_owned
        return row

    # -- state for checkpoints ---------------------------------------------------------------
    def snapshot(self):
        """What this rank must save for the run to continue exactly: its owned bodies (every
        BodySet field), the contacts it owns (keys, points, reactions: the warm start) and the
        clock. Arrays are local; rows are identified by body ids and contact keys."""
        from .model.bodies import FIELDS

        o = self.owned
        c = self.contacts if self.contacts is not None else _empty_contacts()
        return {"bodies": {f: getattr(o, f)[:o.n_owned].copy() for f in FIELDS},
                "contacts": {"k1": c.k1.copy(), "k2": c.k2.copy(), "point": c.point.copy(),
                             "R": c.R.copy()},
                "step": self.step_count, "time": self.time, "energy": dict(self.energy or {})}

    def restore(self, bodies, contacts, step, time, energy=None):
        """Continue from a snapshot read on any number of ranks: `bodies` (dict of BodySet
        fields) and `contacts` (k1, k2, point, R) are any slice of the saved rows on this rank;
        the domain sends bodies to their owners and the contacts follow at the next step."""
        from .contact import ContactSet
        from .model.bodies import BodySet

        with self.comm.collective():
            local = BodySet(len(bodies["gid"]), **bodies)
            self.owned = self.domain.setup(local)
            n = self.comm.sum(self.owned.n_owned)
            if n != self.n_bodies:
                raise InputError(f"restart: {n} bodies saved, the model has {self.n_bodies}")
        self.contacts = self.domain.scatter_contacts(
            ContactSet(a=np.zeros(len(contacts["k1"]), np.int64), **contacts))
        self.step_count, self.time = int(step), float(time)
        self.energy = dict(energy) if energy else None

    def energies(self, *signed):
        """(kinetic, potential) energy of all bodies, then the sum of each array of `signed`
        (per-body or per-contact terms of this rank), all summed independently of the ranks
        in one reduction (exact sums take non-negative columns: a signed term is split)."""
        o = self.owned
        pot = -o.mass * (o.x @ self.model.gravity)
        columns = [o.kinetic_energy(), pot] + list(signed)
        rows = max(len(c) for c in columns)
        table = np.zeros((rows, 2 * len(columns)))
        for k, c in enumerate(columns):
            table[:len(c), 2 * k], table[:len(c), 2 * k + 1] = np.maximum(c, 0), np.maximum(-c, 0)
        sums = self.domain.sums(table)
        return tuple(float(sums[2 * k] - sums[2 * k + 1]) for k in range(len(columns)))

    def _petsc_residual(self, ld, held, R):
        """The step's residual from U = W R + B with W assembled as one PETSc matrix over all
        ranks from the incidences (parallel: assembly.petsc_delassus): an independent check
        of the body-coupled form the sweeps use. Kept in the history as petsc_residual."""
        from .assembly.petsc_delassus import distributed_delassus

        W, _ = distributed_delassus(ld, self.domain, held)
        x, y = W.createVecs()
        x.setArray(R.reshape(-1))
        W.mult(x, y)
        U = y.getArray().reshape(-1, 3) + ld.B
        parts = np.stack([
            np.sum((R - project_rows(R, U, ld.mu)) ** 2, axis=1), np.sum(ld.B ** 2, axis=1),
            np.sum(R ** 2, axis=1), np.sum(U ** 2, axis=1)], axis=1)
        out = residual_from_parts(self.domain.sums(parts))
        for obj in (x, y, W):
            obj.destroy()
        return out

    # -- the run -----------------------------------------------------------------------------
    def run(self, duration):
        """Run to the simulated time `duration` (from the restart point when restarting).

        Ends early, after writing a checkpoint, on a STOP file (returns normally) or on
        SIGTERM/SIGUSR1 (raises SystemExit(EXIT_SIGNAL) once the files are closed). An error
        raised on every rank alike (bad state, a guard in error mode) closes the results
        first, so nothing written is lost."""
        duration = float(finite("duration", duration))
        if duration < 0:
            raise InputError(f"duration must be >= 0, got {duration}")
        inherited = self._restart(self.restart) if self.restart else None
        nsteps = max(0, int(round(duration / self.h)) - self.step_count)
        writer = None
        with self.comm.collective():
            if self.output:
                writer = ResultsWriter(
                    self._output_path(), self.comm, self.model, self.owned, self.h,
                    parts=parts_dir(self.output), leg=self.step_count, inherited=inherited,
                    names=history_names(getattr(self.solver, "event_names", ())))
        sensors = self._sensors_ready() if writer is not None else []
        if writer is not None and writer.missing and self.comm.root and not self.quiet:
            print(f"[parsolve] warning: results parts {', '.join(writer.missing)} of the "
                  "earlier legs are gone: the history has a gap before this leg", flush=True)
        try:
            with _signals_caught() as caught:
                return self._loop(nsteps, writer, caught, sensors)
        except BaseException as exc:
            if writer is not None and getattr(exc, "collective", False):
                writer.close()                   # every rank is here: close collectively
            raise

    def _loop(self, nsteps, writer, caught, sensors):
        start = time.perf_counter()
        last_print, last_k = start, 0
        next_frame = self.time
        if writer is not None:
            writer.frame(self.step_count, self.time, self.owned,
                         self.contacts if self.contacts is not None else _empty_contacts())
            if self.frame_interval:
                next_frame = self.time + self.frame_interval
            if self.step_count == 0:                  # a restart's first sample is its leg's
                self._sample(sensors, writer)
        tot = {"iterations": 0, "contacts": 0, "max_contacts": 0, "unconverged": 0,
               "max_residual": 0.0, "local": {}, "events": {}, "guards": 0, "reported": set()}
        last_flush = time.time()
        row, stopped_by, checkpoint_path = None, "", ""
        for k in range(nsteps):
            row = self.step()
            t_out = time.perf_counter()
            faults.point("output", self.step_count, self.comm.rank)
            if not np.isfinite(row["kinetic_energy"]):       # a reduced sum: equal everywhere
                raise everywhere(InputError(f"step {self.step_count}: the state became NaN "
                                            "or infinite"))
            # one reduction a step decides every collective branch: signals (any rank),
            # the STOP file and the wall clocks (rank 0's), the guards (any rank)
            root = self.comm.root
            signal_no, stop_file, ckpt_time, flush_time, guard = self.comm.allreduce_array(
                np.array([caught["signal"],
                          root and bool(self.stop_file and os.path.exists(self.stop_file)),
                          root and self.checkpoints.due_by_time(),
                          root and time.time() - last_flush >= self.flush_seconds,
                          self._guard[0]], np.int64), "max")
            if guard:
                self._report_guards(tot)
            last = k == nsteps - 1
            stopped_by = "signal" if signal_no else ("STOP file" if stop_file else "")
            if writer is not None:
                if self.frame_interval and (self.time >= next_frame - 1e-12 * self.h or
                                            last or stopped_by):
                    writer.frame(self.step_count, self.time, self.owned, self.contacts)
                    next_frame += self.frame_interval
                elif not self.frame_interval and (last or stopped_by):
                    writer.frame(self.step_count, self.time, self.owned, self.contacts)
            checkpoint = stopped_by or ckpt_time or self.checkpoints.due_by_step(self.step_count)
            row["t_output"] = time.perf_counter() - t_out
            self.phase["output"] += row["t_output"]
            self.history.append(row)
            self._tally(tot, row)
            if writer is not None:
                writer.record(row)
                self._sample(sensors, writer)
                if checkpoint or flush_time:          # the history so far survives a crash
                    parts = writer.close_segment()
                    last_flush = time.time()
            if checkpoint:
                checkpoint_path = self.checkpoints.write(
                    self, parts if writer is not None else ())
            now = time.perf_counter()
            if self.progress > 0 and self.comm.root and not self.quiet and \
                    now - last_print >= self.progress:
                rate = (now - start) / (k + 1)
                current = (now - last_print) / (k + 1 - last_k)
                last_print, last_k = now, k + 1
                print(f"[parsolve] step {self.step_count}/{self.step_count - k - 1 + nsteps}"
                      f" t={self.time:.6g} s contacts={row['contacts']} "
                      f"iterations={row['iterations']} residual={row['residual']:.2e} "
                      f"{1e3 * current:.2f} ms/step now, {1e3 * rate:.2f} mean, ETA "
                      f"{rate * (nsteps - k - 1):.0f} s", flush=True)
            if stopped_by:
                break
        summary = self._summary(tot, row, time.perf_counter() - start, stopped_by,
                                checkpoint_path)
        faults.point("close", self.step_count, self.comm.rank)
        if writer is not None:
            writer.close(summary)
        if self.comm.root and not self.quiet:
            print(format_summary(summary), flush=True)
        self.summary = summary
        if stopped_by == "signal":
            caught["signal"] = 0                      # consumed: a later run starts afresh
            raise SystemExit(EXIT_SIGNAL)
        return summary

    def _sensors_ready(self):
        """The model's sensors, checked collectively (obstacles by name, bodies exist)."""
        sensors = self.model.sensors
        with self.comm.collective():
            for s in sensors:
                s.resolve(self.model.obstacles.names)
        for s in sensors:
            if s.bodies is not None:
                n = self.owned.n_owned
                found = self.comm.sum(int(np.isin(self.owned.gid[:n], s.bodies).sum()))
                if found != len(s.bodies):
                    raise everywhere(InputError(f"sensor {s.name!r}: {len(s.bodies) - found} "
                                                "of its bodies are not in the model"))
        self._sensor_started = set()
        return sensors

    def _sample(self, sensors, writer):
        """Every sensor due at this step: this rank's rows, gathered on rank 0, written."""
        du = getattr(self, "_du", None)
        if du is None or len(du) != self.owned.n_owned:
            du = np.zeros((self.owned.n_owned, 6))
        contacts = self.contacts if self.contacts is not None else _empty_contacts()
        for s in sensors:
            if self.step_count % s.every:
                continue
            rows = self.comm.gather_rows(s.local_rows(self.owned, du, contacts, self.h))
            sample = None
            with self.comm.collective():              # a user's callable may fail on rank 0
                if self.comm.root:
                    sample = s.finish(rows, self.time)
            group = f"sensors/{s.name}"
            if s.name not in self._sensor_started:    # the shapes are known from one sample
                shapes = self.comm.bcast({q: v.shape for q, v in sample.items()}
                                         if self.comm.root else None)
                writer.add_series(group, s.columns({q: np.zeros(v) for q, v in shapes.items()}),
                                  s.attrs())
                self._sensor_started.add(s.name)
            writer.record(dict(step=self.step_count, time=self.time, **(sample or {})), group)

    def _report_guards(self, tot):
        """Gather the guards' reports; rank 0 warns once per pair or body; "error" mode
        raises on every rank alike."""
        counts, reports = zip(*self.comm.allgather(self._guard))
        tot["guards"] += sum(counts)
        new = [(key, text) for part in reports for key, text in part
               if key not in tot["reported"]]
        tot["reported"].update(key for key, _ in new)
        if self.guards == "error":
            raise everywhere(InputError(f"step {self.step_count}: unphysical state: "
                                        + "; ".join(text for _, text in new[:5])))
        if self.comm.root and not self.quiet:           # at most GUARD_LINES lines a run
            shown = tot["reported_lines"] = tot.get("reported_lines", 0)
            for _, text in new[:max(0, GUARD_LINES - shown)]:
                print(f"[parsolve] warning: step {self.step_count}: {text}", flush=True)
            tot["reported_lines"] += len(new)
            if shown < GUARD_LINES <= tot["reported_lines"]:
                print("[parsolve] warning: further physics-guard warnings are only counted "
                      "in the run summary", flush=True)

    def _tally(self, tot, row):
        tot["iterations"] += row["iterations"]
        tot["newton"] = tot.get("newton", 0) + row["newton_iterations"]
        tot["ksp"] = tot.get("ksp", 0) + row["ksp_iterations"]
        tot["contacts"] += row["contacts"]
        for key, value in (("bodies", self.owned.n_owned), ("ghosts", self._ghosts),
                           ("local_contacts", len(self.contacts))):
            tot.setdefault(key, []).append(value)
        tot["max_contacts"] = max(tot["max_contacts"], row["contacts"])
        if not row["converged"]:
            tot["unconverged"] += 1
            if tot["unconverged"] <= 5 and self.comm.root and not self.quiet:
                print(f"[parsolve] warning: step {row['step']}: the solver did not converge "
                      f"(residual {row['residual']:.2e} > tol after {row['iterations']} "
                      "iterations)" + ("; further warnings only in the history and summary"
                                       if tot["unconverged"] == 5 else ""), flush=True)
        tot["max_residual"] = max(tot["max_residual"], row["residual"])
        for into, counts in ((tot["local"], self._local), (tot["events"], self._events)):
            for name, c in counts.items():
                into[name] = into.get(name, 0) + int(c)

    def _summary(self, tot, row, wall, stopped_by, checkpoint_path):
        """The run summary: every figure reduced over the ranks (sums exact, times the
        maximum), then rank 0's copy on every rank, so that what is printed, written to the
        results file and returned is one and the same."""
        summary = {
            "steps": int(self.step_count), "time": self.time,
            "wall_seconds": self.comm.max(wall),
            "bodies": self.n_bodies, "ranks": self.comm.size,
            "repartitions": self.domain.repartitions,
            "contacts_mean": tot["contacts"] / max(1, len(self.history)),
            "contacts_max": tot["max_contacts"],
            "iterations": tot["iterations"], "unconverged_steps": tot["unconverged"],
            "solver": getattr(self.solver, "name", type(self.solver).__name__),
            "tolerance": float(getattr(self.solver, "tol", float("nan"))),
            "max_iter": int(getattr(self.solver, "max_iter", 0) or 0),
            "newton_iterations": tot.get("newton", 0), "ksp_iterations": tot.get("ksp", 0),
            "final_residual": row["residual"] if row else 0.0,
            "max_residual": tot["max_residual"], "stopped_by": stopped_by,
            "checkpoint": checkpoint_path, "output": self._output_path() if self.output else "",
            "guard_warnings": len(tot["reported"]), "guard_events": tot["guards"],
        }
        summary.update({f"seconds_{p}": self.comm.max(v) for p, v in self.phase.items()})
        for key in ("bodies", "ghosts", "local_contacts"):
            mean = float(np.mean(tot.get(key, [0])))
            summary[f"per_rank_{key}_min"] = self.comm.min(mean)
            summary[f"per_rank_{key}_avg"] = self.comm.sum(mean) / self.comm.size
            summary[f"per_rank_{key}_max"] = self.comm.max(mean)
        work = self.domain.work_seconds                  # the balance: compute, waits excluded
        summary.update(per_rank_work_seconds_min=self.comm.min(work),
                       per_rank_work_seconds_avg=self.comm.sum(work) / self.comm.size,
                       per_rank_work_seconds_max=self.comm.max(work))
        summary.update({f"local_{n}": c for n, c in self.comm.sum_counts(tot["local"]).items()})
        summary.update({f"event_{n}": c for n, c in sorted(tot["events"].items())})
        memory = self.domain.memory()                  # bytes this rank holds (last step)
        for key in MEMORY:
            summary[f"per_rank_{key}_min"] = self.comm.min(memory[key])
            summary[f"per_rank_{key}_avg"] = self.comm.sum(memory[key]) / self.comm.size
            summary[f"per_rank_{key}_max"] = self.comm.max(memory[key])
        summary["bytes_per_body"] = self.comm.max(
            (memory["body_bytes"] + memory["ghost_bytes"])
            / max(1, memory["bodies"] + memory["ghosts"]))
        summary["bytes_per_contact"] = self.comm.max(
            memory["contact_bytes"] / max(1, memory["contacts"]))
        return self.comm.bcast(summary)

    def _restart(self, path):
        """Continue from checkpoint `path` (or the newest, for "auto"); returns the results
        segments that hold the history up to it, or None for a fresh start."""
        from .io import checkpoint

        candidates = [path]
        if path == "auto":                       # the newest intact one: a damaged file
            candidates = checkpoint.existing(self.checkpoints.directory,   # does not end a
                                             self.checkpoints.name)[::-1]  # job chain
            if not candidates:                   # nothing to continue from: a fresh start
                if self.comm.root and not self.quiet:
                    print(f"[parsolve] --restart auto: no checkpoint in "
                          f"{self.checkpoints.directory}/, starting afresh", flush=True)
                return None
        for k, path in enumerate(candidates):
            try:
                bodies, contacts, step, t, attrs = checkpoint.read(path, self.comm,
                                                                   self.model.fingerprint())
                break
            except (checkpoint.CorruptCheckpoint, CollectiveError) as exc:
                # read's errors are collective: the ranks that found the damage raise
                # CorruptCheckpoint, the others a CollectiveError; a checkpoint of another
                # model (a FileFormatError everywhere alike) is never skipped
                if k == len(candidates) - 1:
                    raise
                if self.comm.root and not self.quiet:
                    print(f"[parsolve] warning: --restart auto: skipping a damaged checkpoint:"
                          f" {exc}", flush=True)
        old_h = float(attrs["step_size"])
        if old_h != self.h:
            # reactions are impulses over a step: the warm start scales with the step, and
            # the step count restarts from the checkpoint's time on the new step
            contacts["R"] = contacts["R"] * (self.h / old_h)
            if self.comm.root and not self.quiet:
                print(f"[parsolve] warning: {path} was written with step {old_h:g} s, this "
                      f"run uses {self.h:g} s: continuing with the new step (the warm start "
                      "scaled; the trajectory is no longer the one of either step)", flush=True)
            step = int(round(t / self.h))
        self.restore(bodies, contacts, step, t, attrs.get("energy"))
        self.restarted_from = path
        if self.comm.root and not self.quiet:
            print(f"[parsolve] restarting from {path} at step {step}, t = {t:.6g} s",
                  flush=True)
        return attrs["results_parts"]

    def _output_path(self):
        """The results file; a restarted run writes NAME.restart-STEP.h5 so that the results
        of the run it continues are kept."""
        if not getattr(self, "restarted_from", None):
            return self.output
        stem, ext = os.path.splitext(self.output)
        if not hasattr(self, "_restart_output"):
            self._restart_output = f"{stem}.restart-{self.step_count:09d}{ext or '.h5'}"
        return self._restart_output


def _empty_contacts():
    from .contact import ContactSet

    return ContactSet(a=np.zeros(0, np.int64))


def format_summary(s):
    phases = " ".join(f"{p} {s[f'seconds_{p}']:.3f}" for p in PHASES)
    local = " ".join(f"{k[6:]} {v}" for k, v in s.items() if k.startswith("local_"))
    lines = [
        "[parsolve] run summary",
        f"  steps {s['steps']}  simulated time {s['time']:.6g} s  wall {s['wall_seconds']:.2f} s"
        + (f"  (ended by {s['stopped_by']})" if s["stopped_by"] else ""),
        f"  bodies {s['bodies']}  contacts mean {s['contacts_mean']:.1f} max {s['contacts_max']}",
        f"  solver {s['solver']}: iterations {s['iterations']}"
        + (f" (Newton steps {s['newton_iterations']}, KSP iterations {s['ksp_iterations']})"
           if s["newton_iterations"] else "")
        + f"  unconverged steps {s['unconverged_steps']}"
        f"  residual final {s['final_residual']:.2e} max {s['max_residual']:.2e}",
        f"  local solves: {local or 'none'}",
    ]
    events = " ".join(f"{k[6:]} {v}" for k, v in s.items() if k.startswith("event_"))
    if events:
        lines.append(f"  solver events: {events}")
    if s["guard_warnings"]:
        lines.append(f"  physics guards: {s['guard_warnings']} pairs or bodies reported (deep "
                     f"overlaps, bodies too fast for the step), {s['guard_events']} times in all")
    lines += [
        f"  seconds per phase (max over ranks): {phases}",
    ]
    if s["ranks"] > 1:
        lines.insert(3, "  per rank (min/avg/max, mean over steps): " + ", ".join(
            f"{k.replace('local_', '')} {s[f'per_rank_{k}_min']:.0f}/"
            f"{s[f'per_rank_{k}_avg']:.0f}/{s[f'per_rank_{k}_max']:.0f}"
            for k in ("bodies", "ghosts", "local_contacts"))
            + f", work seconds {s['per_rank_work_seconds_min']:.2f}/"
            f"{s['per_rank_work_seconds_avg']:.2f}/{s['per_rank_work_seconds_max']:.2f}"
            + f"; ranks {s['ranks']}, repartitions {s['repartitions']}")
    if "per_rank_body_bytes_max" in s:
        lines.append("  memory per rank (min/avg/max MiB): " + ", ".join(
            f"{k[:-6]} {s[f'per_rank_{k}_min'] / 2**20:.1f}/{s[f'per_rank_{k}_avg'] / 2**20:.1f}/"
            f"{s[f'per_rank_{k}_max'] / 2**20:.1f}" for k in MEMORY)
            + f"; {s['bytes_per_body']:.0f} B per body, {s['bytes_per_contact']:.0f} B per contact")
    if s["output"]:
        lines.append(f"  results: {s['output']}")
    if s["checkpoint"]:
        lines.append(f"  last checkpoint: {s['checkpoint']}")
    return "\n".join(lines)
