"""The model's joints as constraint lines (Solfec's joints read as Blanding's exact constraints).

At the model's initial positions: a fixed point is a ball (3 lines through the point), a fixed
direction and a prescribed motion one line along their direction (a prescribed motion is a
rheonomic constraint: for the free motions it restrains its direction like a fixed one), a
rigid link one line through both points; a spring restrains nothing (it is a force). A
kinematic body is welded to the world (6 lines). The lines of a joint come from the rank that
owns its first body, keyed (JOINT, joint index, line), so every rank count gives the same set.
"""
import numpy as np

from .lines import GROUND, JOINT, ConstraintLines, ball, fixed, line_source


def _lines(spec):
    """(points, directions) of one joint spec, or None for a force element."""
    kind, p = spec["type"], np.asarray(spec["point"], float)
    if kind == "fix_point":
        return ball(p)
    if kind in ("fix_direction", "prescribe"):
        return p[None], np.asarray(spec["direction"], float)[None]
    if kind == "rigid_link":
        return p[None], (p - np.asarray(spec["other_point"], float))[None]
    return None                                                      # spring


@line_source
def joint_lines(model, held):
    """The lines of the joints and kinematic bodies whose first body this rank owns."""
    owned = set(held.gid[:held.n_owned].tolist())
    joints = model.elements.get("joints", [])
    parts = []
    for j, spec in enumerate(joints):
        made = _lines(spec) if spec["body"] in owned else None
        if made is not None:
            n = len(made[0])
            other = spec["other"] if spec["other"] >= 0 else GROUND
            parts.append(ConstraintLines.between(
                spec["body"], other, *made, spec["name"],
                key=[(JOINT, j, i) for i in range(n)]))
    for k, kin in enumerate(model.elements.get("kinematics", [])):
        g = kin["body"]
        if g in owned:
            r = int(np.flatnonzero(held.gid == g)[0])
            pts, dirs = fixed(held.x[r], span=max(float(held.radius[r]), 1e-3))
            parts.append(ConstraintLines.between(
                g, GROUND, pts, dirs, f"kinematic body {g}",
                key=[(JOINT, len(joints) + k, i) for i in range(len(pts))]))
    return ConstraintLines.concat(parts)
