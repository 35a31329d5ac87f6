"""Physics guards: states a time stepper cannot make right, reported by body.

Solfec stops on UNPHYSICAL_PENETRATION; here, by default, a warning names the bodies and the
run goes on (Simulation(guards="error") makes it an error, "off" skips the checks):
  - a deep overlap: a contact whose gap is below -max_overlap times the smaller radius of its
    two bodies (two bodies created in one place, a generator's overlap, a crushed stack);
  - a fast body: one that moved more than max_travel times its radius in one step, so that it
    may pass through a wall or a neighbour without a contact ever being seen (tunnelling).
Each check returns (key, message) pairs for this rank's contacts or bodies; the run gathers
them and reports each key once.
"""
import numpy as np

from ..tables.keys import CONTACT, pair_code

MAX_REPORTED = 10        # per rank and step: the count is exact, the list is a sample


def deep_overlaps(contacts, bodies, fraction, obstacle_names):
    """Contacts whose overlap exceeds `fraction` of the smaller radius: (count, reports)."""
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


def fast_bodies(gid, displacement, radius, fraction, step):
    """Bodies that moved more than `fraction` of their radius in one step: (count, reports)."""
    travel = np.linalg.norm(displacement, axis=1)
    fast = np.flatnonzero(travel > fraction * radius)
    return len(fast), [((int(gid[i]),), f"body {int(gid[i])} moved {travel[i]:.3g} m in one "
                        f"step of {step:g} s, {travel[i] / radius[i]:.3g} times its radius "
                        "(it can pass through walls and bodies: reduce the step)")
                       for i in fast[:MAX_REPORTED]]
