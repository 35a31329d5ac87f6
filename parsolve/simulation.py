"""The time stepper: seed 001's Contact Dynamics step, as data flowing through the stages.

  1. half step            dynamics.half_step                 q(t+h/2) = q(t) + h/2 u(t)
  2. detect               contact.detect                     contacts at q(t+h/2), warm start
  3. assemble             assembly.LocalDynamics             H, W = H M^-1 H^T, B
  4. solve                solvers.*                          C(B + W R, R) = 0
  5. update               dynamics.apply_velocity_change, half_step  u(t+h), q(t+h)
  6. output               io.ResultsWriter                   history row, frames
Every rank runs the same code on the bodies it holds (domain decomposition: issue 4).
"""
import os
import sys
import time

import numpy as np

from . import dynamics
from .assembly import LocalDynamics
from .contact import detect
from .errors import InputError
from .io.results import ResultsWriter
from .model.checks import finite, positive
from .parallel import Comm
from .solvers import GaussSeidel
from .solvers.reference import residual_from_velocity

PHASES = ("integrate", "detect", "assemble", "solve", "update", "output")


class Simulation:
    """A run of `model` with time step `step`.

    solver: a GaussSeidel (default tol 1e-8, 1000 sweeps); output: results file path
    ($PARSOLVE_OUTPUT, set by `parsolve run --output`, takes precedence; none: no file); frames: simulated seconds between frames (default: first and
    last only); progress: wall seconds between progress lines on rank 0 (0 disables);
    stop_file: a file whose appearance ends the run cleanly after the current step;
    verify_every: every so many steps with contacts (first included), the step's residual is
    recomputed from U = W R + B with W assembled as a PETSc matrix (0: never).
    """

    def __init__(self, model, step, solver=None, output=None, frames=None, progress=5.0,
                 comm=None, stop_file="STOP", verify_every=100, quiet=False):
        self.model = model
        self.h = float(positive("step", step))
        self.solver = solver or GaussSeidel()
        # `parsolve run --output` (PARSOLVE_OUTPUT) overrides what the script asks for
        self.output = os.environ.get("PARSOLVE_OUTPUT") or output
        self.frame_interval = None if frames is None else float(positive("frames", frames))
        self.progress = float(progress)
        self.comm = comm if comm is not None else Comm()
        self.stop_file = stop_file
        self.verify_every = int(verify_every)
        self._verified = 0
        self.quiet = quiet
        with self.comm.collective():
            if self.comm.size > 1:
                raise InputError(
                    f"this parsolve runs on 1 rank (got {self.comm.size}): the domain "
                    "decomposition is not in yet; run with mpirun -n 1")
            self.bodies = model.build()
            self.mu_table, self.e_table = model.materials.tables()
            self.margin = (model.contact_margin if model.contact_margin is not None
                           else 1e-6 * float(self.bodies.radius.min()))
        self.time = 0.0
        self.step_count = 0
        self.contacts = None
        self.history = []
        self.phase = dict.fromkeys(PHASES, 0.0)
        # called as hook(simulation, local_dynamics) after each assembly (e.g. FCLIB export)
        self.local_dynamics_hook = None

    # -- one step ----------------------------------------------------------------------------
    def step(self):
        h, b = self.h, self.bodies
        clock = time.perf_counter
        t0 = clock()
        dynamics.half_step(b, h)
        t1 = clock()
        contacts = detect(b, self.model.obstacles, self.mu_table, self.e_table, self.margin)
        contacts.warm_start(self.contacts)
        t2 = clock()
        v_free, w_free, Jinv = dynamics.free_velocity(b, h, self.model.gravity)
        ld = LocalDynamics(contacts, b, v_free, w_free, Jinv, h, self.comm)
        if self.local_dynamics_hook is not None:
            self.local_dynamics_hook(self, ld)
        t3 = clock()
        du = ld.velocity_change(contacts.R)              # consistent with the warm start
        report = self.solver.solve_coupled(ld, contacts.R, du)
        residual = report.residual
        if len(contacts) and self.verify_every and self._verified % self.verify_every == 0:
            residual = self._petsc_residual(ld, contacts.R)
        self._verified += bool(len(contacts))
        t4 = clock()
        dynamics.apply_velocity_change(b, v_free, w_free, du)
        dynamics.half_step(b, h)
        ld.destroy()
        t5 = clock()
        self.contacts = contacts
        self.time = (self.step_count + 1) * h
        self.step_count += 1
        for name, dt in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            self.phase[name] += dt
        row = {"step": self.step_count, "time": self.time, "contacts": len(contacts),
               "iterations": report.iterations, "residual": residual,
               "converged": int(report.converged),
               "kinetic_energy": float(b.kinetic_energy().sum()),
               "potential_energy": float(-np.sum(b.mass * (b.x @ self.model.gravity))),
               "t_integrate": t1 - t0 + t5 - t4, "t_detect": t2 - t1, "t_assemble": t3 - t2,
               "t_solve": t4 - t3, "t_update": t5 - t4, "t_output": 0.0}
        self._local = report.local
        return row

    def _petsc_residual(self, ld, R):
        """The step's residual from U = W R + B applied by the PETSc matrix assembled from the
        linked-interaction rows (an independent check of the sweeps' body-coupled form)."""
        W = ld.petsc()
        x, y = W.createVecs()
        x.setArray(R.reshape(-1))
        W.mult(x, y)
        U = y.getArray().reshape(-1, 3) + ld.B
        out = residual_from_velocity(R, U, ld.B, ld.mu)
        x.destroy()
        y.destroy()
        return out

    # -- the run -----------------------------------------------------------------------------
    def run(self, duration):
        duration = float(finite("duration", duration))
        if duration < 0:
            raise InputError(f"duration must be >= 0, got {duration}")
        nsteps = int(round(duration / self.h))
        writer = None
        with self.comm.collective():
            if self.output:
                writer = ResultsWriter(self.output, self.comm, self.model, self.bodies, self.h)
        start = time.perf_counter()
        last_print = start
        next_frame = 0.0
        stopped = False
        if writer is not None:
            writer.frame(0, 0.0, self.bodies, _empty_contacts())
            if self.frame_interval:
                next_frame = self.frame_interval
        tot = {"iterations": 0, "contacts": 0, "max_contacts": 0, "unconverged": 0,
               "max_residual": 0.0, "local": {}}
        row = None
        for k in range(nsteps):
            row = self.step()
            t_out = time.perf_counter()
            if not np.isfinite(row["kinetic_energy"]):
                raise InputError(f"step {self.step_count}: the state became NaN or infinite")
            last = k == nsteps - 1
            self.stop_requested = bool(self.stop_file and os.path.exists(self.stop_file))
            if writer is not None:
                if self.frame_interval and (self.time >= next_frame - 1e-12 * self.h or last
                                            or self.stop_requested):
                    writer.frame(self.step_count, self.time, self.bodies, self.contacts)
                    next_frame += self.frame_interval
                elif not self.frame_interval and (last or self.stop_requested):
                    writer.frame(self.step_count, self.time, self.bodies, self.contacts)
            row["t_output"] = time.perf_counter() - t_out
            self.phase["output"] += row["t_output"]
            if writer is not None:
                writer.record(row)
            self.history.append(row)
            tot["iterations"] += row["iterations"]
            tot["contacts"] += row["contacts"]
            tot["max_contacts"] = max(tot["max_contacts"], row["contacts"])
            if not row["converged"]:
                tot["unconverged"] += 1
                if tot["unconverged"] <= 5 and self.comm.root and not self.quiet:
                    print(f"[parsolve] warning: step {row['step']}: the solver did not converge "
                          f"(residual {row['residual']:.2e} > tol after {row['iterations']} "
                          "iterations)" + ("; further warnings only in the history and summary"
                                           if tot["unconverged"] == 5 else ""), flush=True)
            tot["max_residual"] = max(tot["max_residual"], row["residual"])
            for name, c in self._local.items():
                tot["local"][name] = tot["local"].get(name, 0) + c
            now = time.perf_counter()
            if self.progress > 0 and self.comm.root and not self.quiet and \
                    now - last_print >= self.progress:
                last_print = now
                rate = (now - start) / (k + 1)
                print(f"[parsolve] step {k + 1}/{nsteps} t={self.time:.6g} s "
                      f"contacts={row['contacts']} iterations={row['iterations']} "
                      f"residual={row['residual']:.2e} {1e3 * rate:.2f} ms/step "
                      f"ETA {rate * (nsteps - k - 1):.0f} s", flush=True)
            if self.stop_requested:
                stopped = True
                break
        wall = time.perf_counter() - start
        summary = {
            "steps": int(self.step_count), "time": self.time, "wall_seconds": wall,
            "bodies": len(self.bodies),
            "contacts_mean": tot["contacts"] / max(1, len(self.history)),
            "contacts_max": tot["max_contacts"],
            "iterations": tot["iterations"], "unconverged_steps": tot["unconverged"],
            "final_residual": row["residual"] if row else 0.0,
            "max_residual": tot["max_residual"], "stopped_by_file": stopped,
            "output": self.output or "",
        }
        summary.update({f"seconds_{p}": v for p, v in self.phase.items()})
        summary.update({f"local_{n}": c for n, c in tot["local"].items()})
        if writer is not None:
            writer.close(summary)
        if self.comm.root and not self.quiet:
            print(format_summary(summary), flush=True)
        self.summary = summary
        return summary


def _empty_contacts():
    from .contact import ContactSet

    return ContactSet(a=np.zeros(0, np.int64))


def format_summary(s):
    phases = " ".join(f"{p} {s[f'seconds_{p}']:.3f}" for p in PHASES)
    local = " ".join(f"{k[6:]} {v}" for k, v in s.items() if k.startswith("local_"))
    lines = [
        "[parsolve] run summary",
        f"  steps {s['steps']}  simulated time {s['time']:.6g} s  wall {s['wall_seconds']:.2f} s"
        + ("  (ended by STOP file)" if s["stopped_by_file"] else ""),
        f"  bodies {s['bodies']}  contacts mean {s['contacts_mean']:.1f} max {s['contacts_max']}",
        f"  solver iterations {s['iterations']}  unconverged steps {s['unconverged_steps']}"
        f"  residual final {s['final_residual']:.2e} max {s['max_residual']:.2e}",
        f"  local solves: {local or 'none'}",
        f"  seconds per phase: {phases}",
    ]
    if s["output"]:
        lines.append(f"  results: {s['output']}")
    return "\n".join(lines)
