"""The run's report: running totals of the steps (Tally), the summary reduced over the ranks,
and its text. The summary is plain data (a dict of numbers and strings), equal on every rank,
so that what is printed, written to the results file and returned is one and the same."""
import numpy as np

from ..stepping.stepper import PHASES

MEMORY = ("body_bytes", "ghost_bytes", "contact_bytes", "exchange_bytes", "peak_rss_bytes")
PER_RANK = ("bodies", "ghosts", "local_contacts")


class Tally:
    """Totals of one run's history rows (equal on every rank), this rank's per-step counts
    of bodies, ghosts and contacts, and the guards' reports seen so far."""

    def __init__(self):
        self.iterations = self.newton = self.ksp = 0
        self.contacts = self.max_contacts = 0
        self.unconverged = 0
        self.max_residual = 0.0
        self.local, self.events = {}, {}           # outcome of the local solves, solver events
        self.per_rank = {key: [] for key in PER_RANK}
        self.guard_events = 0                      # every guard hit, counted
        self.reported = set()                      # the pairs and bodies reported once
        self.reported_lines = 0
        self.element_events = 0                    # the elements' events (bonds broken)

    def add(self, row, last, bodies, local_contacts):
        """Count history `row`; `last` is the stepper's per-step leftovers (Stepper.last)."""
        self.iterations += row["iterations"]
        self.newton += row["newton_iterations"]
        self.ksp += row["ksp_iterations"]
        self.contacts += row["contacts"]
        for key, value in zip(PER_RANK, (bodies, last["ghosts"], local_contacts)):
            self.per_rank[key].append(value)
        self.max_contacts = max(self.max_contacts, row["contacts"])
        if not row["converged"]:
            self.unconverged += 1
        self.max_residual = max(self.max_residual, row["residual"])
        for into, counts in ((self.local, last["local"]), (self.events, last["events"])):
            for name, c in counts.items():
                into[name] = into.get(name, 0) + int(c)


def summarise(comm, tally, row, steps, time, wall, bodies, history_steps, solver, phase,
              domain, contact_row, stopped_by, checkpoint, output):
    """The run summary: every figure reduced over the ranks (sums exact, times the maximum),
    then rank 0's copy on every rank. row: the last history row (None: no step);
    contact_row: the bytes of one contact row (Domain.memory)."""
    s = {
        "steps": int(steps), "time": time, "wall_seconds": comm.max(wall),
        "bodies": bodies, "ranks": comm.size, "repartitions": domain.repartitions,
        "contacts_mean": tally.contacts / max(1, history_steps),
        "contacts_max": tally.max_contacts,
        "iterations": tally.iterations, "unconverged_steps": tally.unconverged,
        "solver": getattr(solver, "name", type(solver).__name__),
        "tolerance": float(getattr(solver, "tol", float("nan"))),
        "max_iter": int(getattr(solver, "max_iter", 0) or 0),
        "newton_iterations": tally.newton, "ksp_iterations": tally.ksp,
        "final_residual": row["residual"] if row else 0.0,
        "max_residual": tally.max_residual, "stopped_by": stopped_by,
        "checkpoint": checkpoint, "output": output,
        "guard_warnings": len(tally.reported), "guard_events": tally.guard_events,
        "element_events": tally.element_events,
    }
    s.update({f"seconds_{p}": comm.max(v) for p, v in phase.items()})

    def spread(key, value):                        # min/avg/max over the ranks
        s[f"per_rank_{key}_min"] = comm.min(value)
        s[f"per_rank_{key}_avg"] = comm.sum(value) / comm.size
        s[f"per_rank_{key}_max"] = comm.max(value)

    for key in PER_RANK:
        spread(key, float(np.mean(tally.per_rank[key] or [0])))
    spread("work_seconds", domain.work_seconds)    # the balance: compute, waits excluded
    s.update({f"local_{n}": c for n, c in comm.sum_counts(tally.local).items()})
    s.update({f"event_{n}": c for n, c in sorted(tally.events.items())})
    memory = domain.memory(contact_row)            # bytes this rank holds (last step)
    for key in MEMORY:
        spread(key, memory[key])
    s["bytes_per_body"] = comm.max((memory["body_bytes"] + memory["ghost_bytes"])
                                   / max(1, memory["bodies"] + memory["ghosts"]))
    s["bytes_per_contact"] = comm.max(memory["contact_bytes"] / max(1, memory["contacts"]))
    return comm.bcast(s)


def format_summary(s):
    """The summary's text, as rank 0 prints it at the end of a run."""
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
    if s.get("element_events"):
        lines.append(f"  elements' events (results: events/NAME): {s['element_events']}")
    if s["guard_warnings"]:
        lines.append(f"  physics guards: {s['guard_warnings']} pairs or bodies reported (deep "
                     f"overlaps, bodies too fast for the step), {s['guard_events']} times in all")
    lines.append(f"  seconds per phase (max over ranks): {phases}")
    if s["ranks"] > 1:
        lines.insert(3, "  per rank (min/avg/max, mean over steps): " + ", ".join(
            f"{k.replace('local_', '')} {s[f'per_rank_{k}_min']:.0f}/"
            f"{s[f'per_rank_{k}_avg']:.0f}/{s[f'per_rank_{k}_max']:.0f}"
            for k in PER_RANK)
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
