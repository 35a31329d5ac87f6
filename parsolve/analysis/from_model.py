"""The constraint analysis of a model, also on many ranks.

The model is built and partitioned as for a run (Simulation); each rank makes the lines it is
responsible for: the registered sources' bilateral lines (joints, lines.line_source) and,
with contacts=True, one unilateral line per contact it owns, detected once at the initial
positions. Rank 0 gathers the lines touching the bodies asked for (all lines when none are)
and those bodies' centres and radii (the charts' references and least lengths), and analyses them: the same rows in the
same (key) order whatever the number of ranks, so the same answer.
"""
from dataclasses import dataclass

import numpy as np

from ..contact import detect
from ..errors import InputError
from ..parallel import Comm
from .lines import GROUND, LINE_SOURCES, ConstraintLines, contact_lines
from .mobility import analyse_body, analyse_system, coupled
from .screws import RTOL, user_twist

MAX_SYSTEM_BODIES = 200      # a mechanism's dense SVD beyond this many bodies is not tried


@dataclass
class ModelAnalysis:
    bodies: list                 # BodyAnalysis, by body id
    system: object               # SystemAnalysis of the coupled bodies, or None
    unconstrained: int           # bodies without any line, not listed (6 free motions each)
    contacts: bool               # contacts were included
    note: str = ""

    def as_dict(self):
        return {"bodies": [b.as_dict() for b in self.bodies],
                "system": None if self.system is None else self.system.as_dict(),
                "unconstrained_bodies": self.unconstrained, "contacts": self.contacts,
                "note": self.note}


def analyse_model(model, step, bodies=None, contacts=False, check=None, rtol=RTOL,
                  comm=None, sources=None):
    """Collective. The ModelAnalysis of `model` (built with time step `step`) on rank 0, None
    on the others. bodies: ids to analyse (default: every body with a line); check: a motion
    as for screws.user_twist (its point defaults to each body's centre); sources: line
    sources (default: the registered ones)."""
    from ..run import Simulation

    own = comm is None
    comm = Comm() if own else comm
    try:
        sim = Simulation(model, step=step, comm=comm, quiet=True, output=None, progress=0,
                         verify_every=0)
        held = sim.domain.with_ghosts(sim.owned)
        with comm.collective():
            asked = None if bodies is None else np.unique(np.asarray(bodies, np.int64))
            lines = _local_lines(model, sim, held, contacts, sources)
            if asked is not None:
                lines = lines.touching(asked)
            centres = _centres(held, lines, asked)
        rows = comm.gather_rows(lines.rows())
        centres = comm.gather_rows(centres)
        result = None
        with comm.collective():
            if comm.root:
                result = _analyse(ConstraintLines.from_rows(rows).canonical(), centres, asked,
                                  sim.n_bodies, contacts, check, rtol)
        return result
    finally:
        if own:
            comm.free()


def _local_lines(model, sim, held, contacts, sources):
    parts = [source(model, held) for source in (LINE_SOURCES if sources is None else sources)]
    if contacts:
        found = detect(held, model.obstacles, sim.mu_table, sim.e_table, sim.margin)
        found = found.take(np.nonzero(sim.domain.owns(found.point))[0])
        parts.append(contact_lines(found, held, model.obstacles.names))
    return ConstraintLines.concat(parts)


def _centres(held, lines, asked):
    """(gid, x, radius) of the held bodies on this rank's lines and of the owned bodies
    asked for."""
    on_lines = np.isin(held.gid, np.concatenate([lines.a, lines.b]))
    mine = np.arange(len(held)) < held.n_owned
    if asked is not None:
        on_lines |= mine & np.isin(held.gid, asked)
    return {"gid": held.gid[on_lines], "x": held.x[on_lines],
            "radius": held.radius[on_lines]}


def _analyse(lines, centres, asked, n_bodies, contacts, check, rtol):
    gid, first = np.unique(centres["gid"], return_index=True)
    reference = dict(zip(gid.tolist(), centres["x"][first]))
    size = dict(zip(gid.tolist(), centres["radius"][first].tolist()))
    if asked is None:
        targets = np.setdiff1d(np.union1d(lines.a, lines.b), [GROUND])
    else:
        missing = [int(g) for g in asked if int(g) not in reference]
        if missing:
            raise InputError(f"unknown body {missing[0]}: the model has no body with this id")
        targets = asked
    targets = [int(g) for g in targets]
    for g in targets:            # a body no rank held with its lines: the lines' centroid
        if g not in reference:
            reference[g] = lines.point[lines.of_body(g)[0]].mean(axis=0)
    results = [analyse_body(lines, g, reference[g],
                            None if check is None else user_twist(check, reference[g]), rtol,
                            size.get(g))
               for g in targets]
    system, note = None, ""
    if len(targets) > 1 and coupled(lines, targets):
        if len(targets) <= MAX_SYSTEM_BODIES:
            system = analyse_system(lines, targets, reference, rtol, size)
        else:
            note = (f"{len(targets)} coupled bodies: the mechanism's dense analysis stops at "
                    f"{MAX_SYSTEM_BODIES}; ask for fewer with --body")
    unconstrained = n_bodies - len(targets) if asked is None else 0
    return ModelAnalysis(results, system, int(unconstrained), bool(contacts), note)
