"""The run: steps to a simulated time with frames, sensors, checkpoints, a STOP file, signals,
progress lines and the summary (PyClaw's Controller around its Solver).

Options arrive as arguments. `parsolve run --output/--restart/--checkpoint-*/--fclib-*` give
Overrides, which take precedence over what the script asks for: the command line sets
COMMAND_LINE before it runs the script, and a Simulation made without `overrides=` uses it.
"""
import contextlib
import dataclasses
import json
import os
import signal
import threading
import time

import numpy as np

from ..errors import InputError, StorageError, everywhere
from ..io.checkpoint import CheckpointPolicy
from ..io.results import ResultsWriter, history_names, parts_dir
from ..platform import faults
from ..stepping import guards
from ..stepping.stepper import Stepper, empty_contacts
from ..tables.checks import finite, positive
from ..parallel.measures import Meeting
from .report import Tally, format_summary, summarise
from .restart import leg_output, resume

EXIT_SIGNAL = 3      # the exit code of a run ended by SIGTERM/SIGUSR1 after its checkpoint
GUARD_LINES = 10     # physics-guard warnings printed in a run (all are counted)
EVENT_LINES = 20     # elements' events (a bond's break) printed in a run (all are written)
UNCONVERGED_LINES = 5


@dataclasses.dataclass(frozen=True)
class Overrides:
    """Run options given on the command line; each one that is not None replaces the
    script's. fclib_step/fclib_out: export that step's contact problem (io/fclib.py);
    frames: simulated seconds between frames (0: none)."""
    output: str | None = None
    restart: str | None = None
    checkpoint_every: int | None = None
    checkpoint_seconds: float | None = None
    checkpoint_keep: int | None = None
    checkpoint_dir: str | None = None
    fclib_step: int | None = None
    fclib_out: str | None = None
    frames: float | None = None

    def over(self, name, value):
        """The option `name`: this override if given, else `value` (the script's)."""
        mine = getattr(self, name)
        return value if mine is None else mine


COMMAND_LINE = Overrides()          # `parsolve run` replaces it before it runs the script

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


def run(model, duration, step, **options):
    """Run `model` for `duration` simulated seconds with time step `step` (Model.run's
    entry point); `options` are Simulation's. Returns the run summary. The Simulation's MPI
    objects are freed after a run that ends normally (after an error or a signal the
    process ends)."""
    sim = Simulation(model, step=step, **options)
    summary = sim.run(duration)
    sim.free()
    return summary


class Simulation(Stepper):
    """A run of `model` with time step `step`: a Stepper and the loop around its steps.

    solver: a GaussSeidel (default tol 1e-8, 1000 sweeps); output: results file path (none:
    no file); frames: simulated seconds between frames (default: first and last only; 0: no
    frames, the history, sensors, checkpoints and summary as usual);
    progress: wall seconds between progress lines on rank 0 (0 disables); stop_file: a file
    whose appearance ends the run cleanly after the current step; verify_every: every so many
    steps with contacts (first included), the step's residual is recomputed from U = W R + B
    with W assembled as a PETSc matrix (0: never); balance_tolerance / balance: repartition
    when max/avg of the load per rank exceeds the tolerance; the load is "time" (default:
    each body's cost units, 1 + its contacts, scaled by its rank's measured seconds per
    unit), "contacts" (the units alone) or "bodies"; checkpoint_every (steps) /
    checkpoint_seconds (wall clock) / checkpoint_keep / checkpoint_dir (default
    "checkpoints"): the checkpoint policy (a checkpoint is also written when a STOP file or
    SIGTERM/SIGUSR1 ends the run); restart: a checkpoint to continue from, or "auto" for the
    newest in checkpoint_dir if any. flush_seconds: wall seconds between closings of the
    results' segments (besides every checkpoint and the end): what a crash can lose at most
    (io/results.py). guards ("warn", "error" or "off"), max_overlap, max_travel: the physics
    guards (guards.py): contacts deeper than max_overlap times the smaller radius, bodies
    moving more than max_travel times their radius in a step. overrides: Overrides that take
    precedence over these arguments (default: COMMAND_LINE, those of `parsolve run`).
    projection: True (or a parsolve.stepping.projection.Projection) projects positions onto the
    constraints after each step (off by default: one more solve per step).
    """

    def __init__(self, model, step, solver=None, output=None, frames=None, progress=5.0,
                 comm=None, stop_file="STOP", verify_every=100, quiet=False,
                 balance_tolerance=1.1, checkpoint_every=None, checkpoint_seconds=None,
                 checkpoint_keep=3, checkpoint_dir=None, restart=None, balance="time",
                 flush_seconds=300.0, guards="warn", max_overlap=0.2, max_travel=0.5,
                 projection=None, overrides=None):
        o = COMMAND_LINE if overrides is None else overrides
        self.output = o.over("output", output)
        frames = o.over("frames", frames)
        if frames is not None and float(finite("frames", frames)) < 0:
            raise InputError(f"frames: must be >= 0 (0: no frames), got {float(frames):g}")
        self.frame_interval = None if frames is None else float(frames)   # 0: no frames
        self.progress = float(progress)
        self.stop_file = stop_file
        self.restart = o.over("restart", restart)
        self.checkpoints = CheckpointPolicy(
            directory=o.over("checkpoint_dir", checkpoint_dir) or "checkpoints",
            every=o.over("checkpoint_every", checkpoint_every),
            seconds=o.over("checkpoint_seconds", checkpoint_seconds),
            keep=o.over("checkpoint_keep", checkpoint_keep))
        self.quiet = quiet
        self.restarted_from = None           # the checkpoint this run continues
        self.results = self.output           # the results file of this leg
        self.flush_seconds = float(positive("flush_seconds", flush_seconds))
        self._own_comm = comm is None
        super().__init__(model, step, solver, comm, verify_every, balance_tolerance, balance,
                         guards, max_overlap, max_travel, projection)
        if o.fclib_step is not None:
            from ..io.fclib import export_step

            with self.comm.collective():
                export_step(self, o.fclib_out or f"step{o.fclib_step}.fclib.h5", o.fclib_step)

    def free(self):
        """Free the run's MPI objects (the domain's, and the Comm if the run made it):
        collective, and the last call on this Simulation."""
        self.domain.free()
        if self._own_comm:
            self.comm.free()

    def _say(self, text):
        """A line on rank 0 (unless quiet)."""
        if self.comm.root and not self.quiet:
            print(f"[parsolve] {text}", flush=True)

    def run(self, duration):
        """Run to the simulated time `duration` (from the restart point when restarting).

        Ends early, after writing a checkpoint, on a STOP file (returns normally) or on
        SIGTERM/SIGUSR1 (raises SystemExit(EXIT_SIGNAL) once the files are closed). An error
        raised on every rank alike (bad state, a guard in error mode) closes the results
        first, so nothing written is lost."""
        duration = float(finite("duration", duration))
        if duration < 0:
            raise InputError(f"duration must be >= 0, got {duration}")
        inherited = None
        resumed = resume(self, self.restart, self._say) if self.restart else None
        if resumed is not None:
            self.restarted_from, inherited = resumed
            self._restart_step = self.step_count
            self.results = leg_output(self.output, self.step_count) if self.output else None
        nsteps = max(0, int(round(duration / self.h)) - self.step_count)
        writer = None
        try:
            # the writer's errors are collective or a rank's own failed write (the other
            # ranks may be inside HDF5 then): not wrapped in a collective check
            if self.output:
                writer = ResultsWriter(
                    self.results, self.comm, self.model, self.owned, self.h,
                    parts=parts_dir(self.output), leg=self.step_count, inherited=inherited,
                    names=history_names(getattr(self.solver, "event_names", ())),
                    moving=self._obstacles(self.time).moving)
        except StorageError as exc:
            raise self._storage_failed(exc, None) from None
        sensors = self._sensors_ready() if writer is not None else []
        if writer is not None:                   # an element's outputs: one row per step
            for e in self._reporting():
                writer.add_series(e.NAME, [("step", np.int64, ()), ("time", float, ())] +
                                  [(name, float, (len(e),)) for name in e.OUTPUTS],
                                  {"names": json.dumps(e.names)})
            for e in self._eventful():           # its events: one row per event
                writer.add_series(f"events/{e.NAME}", [("step", np.int64, ()),
                                                       ("time", float, ())] +
                                  [(name, float, ()) for name in e.EVENTS])
        if writer is not None and writer.missing:
            self._say(f"warning: results parts {', '.join(writer.missing)} of the earlier "
                      "legs are gone: the history has a gap before this leg")
        try:
            with _signals_caught() as caught:
                return self._loop(nsteps, writer, caught, sensors)
        except StorageError as exc:
            if writer is not None and getattr(exc, "collective", False):
                writer.abandon()                 # every rank is here: give up the segment
            raise self._storage_failed(exc, writer) from None
        except BaseException as exc:
            if writer is not None and getattr(exc, "collective", False):
                writer.close()                   # every rank is here: close collectively
            raise

    def _storage_failed(self, exc, writer):
        """The StorageError of a failed write, saying what the run kept (the same on every
        rank): the results up to the last step the index holds, the last checkpoint. Raised
        on every rank alike, or (a failure inside HDF5's collective calls) on this rank
        alone, which the command line prints before it ends the job with 2."""
        kept = []
        if self.results:
            if writer is not None and writer.kept is not None:
                step, segment = writer.kept
                kept.append(f"{self.results} holds the results up to step {step} (its last "
                            f"complete segment: {os.path.join(writer.parts, segment)})")
            else:
                kept.append(f"no results ({self.results} indexes no step of this run)")
        last = self.checkpoints.last or (
            (self.restarted_from, self._restart_step) if self.restarted_from else None)
        if last is not None:
            kept.append(f"the last checkpoint is {last[0]} (step {last[1]})")
        else:
            kept.append("no checkpoint was written")
        then = "continue with --restart auto" if last is not None else "run again"
        error = StorageError(f"{exc} at step {self.step_count}. Kept: {'; '.join(kept)}. Free "
                             f"some room, then {then}", path=exc.path)
        # a rank's own failure inside HDF5 stays its own: the command line ends the job
        return everywhere(error) if getattr(exc, "collective", False) else error

    def _loop(self, nsteps, writer, caught, sensors):
        start = time.perf_counter()
        progress = [start, 0]                         # time and step of the last line
        next_frame = self.time
        framing = writer is not None and self.frame_interval != 0
        if writer is not None:
            if framing:
                writer.frame(self.step_count, self.time, self.owned,
                             self.contacts if self.contacts is not None else empty_contacts(),
                             self._obstacles(self.time))
            if self.frame_interval:
                next_frame = self.time + self.frame_interval
            if self.step_count == 0:                  # a restart's first sample is its leg's
                self._sample(sensors, writer)
        tally = Tally()
        last_flush = time.time()
        row, stopped_by, checkpoint_path = None, "", ""
        for k in range(nsteps):
            row = self.step()
            t_out = time.perf_counter()
            faults.point("output", self.step_count, self.comm.rank)
            if not np.isfinite(row["kinetic_energy"]):       # a reduced sum: equal everywhere
                raise everywhere(InputError(f"step {self.step_count}: the state became NaN "
                                            "or infinite"))
            signal_no, stop_file, ckpt_time, flush_time, guard = self._poll(caught, last_flush)
            if guard:
                self._report_guards(tally)
            last = k == nsteps - 1
            stopped_by = "signal" if signal_no else ("STOP file" if stop_file else "")
            if framing:
                if self.frame_interval and (self.time >= next_frame - 1e-12 * self.h or
                                            last or stopped_by):
                    writer.frame(self.step_count, self.time, self.owned, self.contacts,
                                 self._obstacles(self.time))
                    next_frame += self.frame_interval
                elif not self.frame_interval and (last or stopped_by):
                    writer.frame(self.step_count, self.time, self.owned, self.contacts,
                                 self._obstacles(self.time))
            checkpoint = stopped_by or ckpt_time or self.checkpoints.due_by_step(self.step_count)
            row["t_output"] = time.perf_counter() - t_out
            self.phase["output"] += row["t_output"]
            self.history.append(row)
            self._count(tally, row)
            if writer is not None:
                writer.record(row)
                self._sample(sensors, writer)
                for e in self._reporting():
                    writer.record(dict(step=self.step_count, time=self.time,
                                       **(self.outputs(e, everywhere=False) or {})), e.NAME)
                for name, events in self.last["element_events"].items():
                    for event in events:
                        writer.record(dict(step=self.step_count, time=self.time,
                                           **dict(zip(self._events_of(name), event))),
                                      f"events/{name}")
                if checkpoint or flush_time:          # the history so far survives a crash
                    parts = writer.close_segment()
                    last_flush = time.time()
            self._say_events(tally)
            if checkpoint:
                checkpoint_path = self.checkpoints.write(
                    self, parts if writer is not None else ())
            self._progress(row, k, nsteps, start, progress)
            if stopped_by:
                break
        summary = summarise(
            self.comm, tally, row, self.step_count, self.time, time.perf_counter() - start,
            self.n_bodies, len(self.history), self.solver, self.phase, self.domain,
            empty_contacts().row_bytes(), stopped_by, checkpoint_path,
            self.results or "")
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

    def _poll(self, caught, last_flush):
        """One reduction a step decides every collective branch: (signal, STOP file,
        checkpoint time, flush time, guard hits); signals and guards from any rank, the STOP
        file and the wall clocks from rank 0."""
        root = self.comm.root
        return self.comm.allreduce_array(
            np.array([caught["signal"],
                      root and bool(self.stop_file and os.path.exists(self.stop_file)),
                      root and self.checkpoints.due_by_time(),
                      root and time.time() - last_flush >= self.flush_seconds,
                      self.last["guard"][0] + (self.last["guard"][2] is not None)],
                     np.int64), "max")

    def _count(self, tally, row):
        tally.add(row, self.last, self.owned.n_owned, len(self.contacts))
        if not row["converged"] and tally.unconverged <= UNCONVERGED_LINES:
            self._say(f"warning: step {row['step']}: the solver did not converge (residual "
                      f"{row['residual']:.2e} > tol after {row['iterations']} iterations)"
                      + ("; further warnings only in the history and summary"
                         if tally.unconverged == UNCONVERGED_LINES else ""))

    def _progress(self, row, k, nsteps, start, last):
        """A progress line every `progress` wall seconds: last = [time, step] of the previous."""
        now = time.perf_counter()
        if not (self.progress > 0 and now - last[0] >= self.progress):
            return
        rate = (now - start) / (k + 1)
        current = (now - last[0]) / (k + 1 - last[1])
        last[:] = now, k + 1
        self._say(f"step {self.step_count}/{self.step_count - k - 1 + nsteps}"
                  f" t={self.time:.6g} s contacts={row['contacts']} "
                  f"iterations={row['iterations']} residual={row['residual']:.2e} "
                  f"{1e3 * current:.2f} ms/step now, {1e3 * rate:.2f} mean, ETA "
                  f"{rate * (nsteps - k - 1):.0f} s")

    def _events_of(self, name):
        return next(e.EVENTS for e in self.elements if e.NAME == name)

    def _say_events(self, tally):
        """The elements' events of the last step as progress lines on rank 0 (at most
        EVENT_LINES a run; all are in the results and counted in the summary)."""
        for name, events in self.last["element_events"].items():
            element = next(e for e in self.elements if e.NAME == name)
            for event in events:
                tally.element_events += 1
                if tally.element_events <= EVENT_LINES:
                    self._say(f"step {self.step_count} t={self.time:.6g} s: "
                              f"{element.describe(event)}")
                if tally.element_events == EVENT_LINES:
                    self._say("further events only in the results (events/NAME) and the "
                              "summary")

    def _report_guards(self, tally):
        """Gather the guards' reports; rank 0 warns once per pair or body, at most
        GUARD_LINES lines a run; "error" mode raises on every rank alike. Fast bodies with
        nothing within reach on their own rank are settled against every rank's bodies."""
        counts, reports, pending = zip(*self.comm.allgather(self.last["guard"]))
        pending = [p for p in pending if p is not None]
        reports = [r for part in reports for r in part]
        if pending:
            pending = tuple(np.concatenate(column) for column in zip(*pending))
            o = self.owned
            near = guards.pending_reach(pending, o.gid, self.last["start"], o.x, o.radius,
                                        self.margin, self.period)
            near = self.comm.allreduce_array(near.astype(np.int64), "max").astype(bool)
            gid, _, travel, radius = (column[near] for column in pending)
            counts += (len(gid),)
            reports += [guards.fast_report(*f, self.h)
                        for f in zip(gid[:guards.MAX_REPORTED], travel, radius)]
        tally.guard_events += sum(counts)
        if not sum(counts):
            return
        new = [(key, text) for key, text in reports if key not in tally.reported]
        tally.reported.update(key for key, _ in new)
        if self.guards == "error":
            raise everywhere(InputError(f"step {self.step_count}: unphysical state: "
                                        + "; ".join(text for _, text in new[:5])))
        shown = tally.reported_lines
        for _, text in new[:max(0, GUARD_LINES - shown)]:
            self._say(f"warning: step {self.step_count}: {text}")
        tally.reported_lines += len(new)
        if shown < GUARD_LINES <= tally.reported_lines:
            self._say("warning: further physics-guard warnings are only counted in the run "
                      "summary")

    # -- sensors -----------------------------------------------------------------------------
    def _sensors_ready(self):
        """The model's sensors, checked collectively (obstacles by name, bodies exist)."""
        sensors = self.model.sensors
        with self.comm.collective():
            for s in sensors:
                s.resolve(self.model.obstacles.names,
                          [j["name"] for j in self.model.elements.get("joints", [])])
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
        du = self.last["du"]
        if du is None or len(du) != self.owned.n_owned:
            du = np.zeros((self.owned.n_owned, 6))
        contacts = self.contacts if self.contacts is not None else empty_contacts()
        for s in sensors:
            if self.step_count % s.every:
                continue
            if getattr(s, "region", None) is not None:      # measures: equal on every rank
                sample = s.sample(self.owned, contacts, self.h, Meeting(self.comm))
            else:
                rows = self.comm.gather_rows(s.local_rows(self.owned, du, contacts, self.h))
                sample = None
                with self.comm.collective():          # a user's callable may fail on rank 0
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
