"""Physics guards: states a time stepper cannot make right, reported by body.

Solfec stops on UNPHYSICAL_PENETRATION; here, by default, a warning names the bodies and the
run goes on (Simulation(guards="error") makes it an error, "off" skips the checks):
  - a deep overlap: a contact whose gap is below -max_overlap times the smaller radius of its
    two bodies (two bodies created in one place, a generator's overlap, a crushed stack);
  - a fast body: one that moved more than max_travel times its radius in one step, so that it
    may pass through a wall or a neighbour without a contact ever being seen (tunnelling),
    when an obstacle or another body lies within reach of its path (one alone cannot).
Each check returns (key, message) pairs for this rank's contacts or bodies; the run gathers
them and reports each key once.
"""
import numpy as np

from .. import dynamics
from ..tables.keys import CONTACT, pair_code
from ..tables.table import smallest

MAX_REPORTED = 10        # per rank and step: the count is exact, the list is a sample


def deep_overlaps(contacts, bodies, fraction, obstacle_names):
    """Contacts whose overlap exceeds `fraction` of the smaller radius: (count, reports)."""
    if not len(contacts) or smallest(contacts.gap) >= 0.0:  # no overlap at all
        return 0, []
    a, b = contacts.a, contacts.b
    ra = bodies.radius[a]
    rmin = np.minimum(ra, np.where(b >= 0, bodies.radius[np.maximum(b, 0)], ra))
    deep = np.flatnonzero((-contacts.gap > fraction * rmin) & (contacts.origin == CONTACT))
    reports = []
    for k in deep[:MAX_REPORTED]:
        other = (f"body {int(bodies.gid[b[k]])}" if b[k] >= 0 else
                 f"obstacle {obstacle_names[int(contacts.obstacle[k])]!r}")
        depth = -float(contacts.gap[k])
        reports.append(((int(contacts.k1[k]), int(pair_code(contacts.k2[k]))),
                        f"body {int(contacts.k1[k])} and {other} overlap by {depth:.3g} m, "
                        f"{depth / rmin[k]:.0%} of the smaller radius"))
    return len(deep), reports


def fast_bodies(gid, x0, x1, radius, fraction, step, bodies, start, obstacles, margin):
    """Bodies that moved more than `fraction` of their radius in one step and could pass
    through something: (count, reports, pending).

    A body alone in space cannot tunnel: a fast body is reported only when an obstacle or
    another body lies within reach of its swept path, i.e. closer to its start than its travel
    plus the other's travel plus both radii plus the margin (conservative: an obstacle's
    distance is a lower bound for a polyhedron, a half-space's is signed). gid, x0, x1,
    radius: the rank's owned bodies at the step's start and end; bodies, start: the bodies
    held (owned and ghosts) and their positions at the start. A body held here within reach
    settles it; the ghost layer is only as wide as a contact reaches, so a fast body with
    nothing within reach here is `pending` (gid, start, travel, radius): settled over the
    ranks by `pending_reach` against every rank's owned bodies, so that the warning does not
    depend on the rank count. Only the few fast bodies are checked."""
    travel, count = dynamics.travel(x0, x1, radius, fraction)
    if not count:
        return 0, [], None
    fast = np.flatnonzero(travel > fraction * radius)
    reach = travel[fast] + radius[fast] + margin
    hit = np.zeros(len(fast), bool)
    for k in range(len(obstacles)):
        hit |= obstacles.distance(k, x0[fast]) <= reach
    moved = np.linalg.norm(bodies.x - start, axis=1)
    for m in np.flatnonzero(~hit):
        i = fast[m]
        d = np.linalg.norm(start - x0[i], axis=1)
        hit[m] = np.any((d <= reach[m] + moved + bodies.radius) & (bodies.gid != gid[i]))
    settled = fast[hit]
    waiting = fast[~hit]
    pending = (gid[waiting], x0[waiting], travel[waiting], radius[waiting]) \
        if len(waiting) else None
    return len(settled), [fast_report(gid[i], travel[i], radius[i], step)
                          for i in settled[:MAX_REPORTED]], pending


def pending_reach(pending, gid, x0, x1, radius, margin, period=None):
    """For each pending fast body (gid, start, travel, radius), whether one of the bodies
    (gid, x0, x1, radius: a rank's owned bodies, start and end of the step) lies within its
    reach (fast_bodies); across a periodic boundary by the nearest image."""
    pgid, px, ptravel, pradius = pending
    moved = np.linalg.norm(x1 - x0, axis=1)
    out = np.zeros(len(pgid), bool)
    for m in range(len(pgid)):
        d = x0 - px[m]
        if period:
            ax, L = period.axes, period.length[period.axes]
            d[:, ax] -= L * np.round(d[:, ax] / L)
        out[m] = np.any((np.linalg.norm(d, axis=1)
                         <= ptravel[m] + pradius[m] + margin + moved + radius)
                        & (gid != pgid[m]))
    return out


def fast_report(gid, travel, radius, step):
    """The (key, message) of a fast body."""
    return ((int(gid),), f"body {int(gid)} moved {travel:.3g} m in one step of {step:g} s, "
            f"{travel / radius:.3g} times its radius (it can pass through walls and bodies: "
            "reduce the step)")
