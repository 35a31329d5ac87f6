"""Masonry joints: per contact pair (two blocks, or a block and a fixed abutment) what a
masonry engineer reads, and the line of thrust.

For each joint, from its contact points (rows of one pair: A's id and B's code):
  points, open_points (normal force at most open_force: the joint has opened there),
  sliding_points (status sliding, when the frame gives it), state (0 closed, 1 hinged: some
  points open, 2 open: all), normal_force (sum of the points' normal forces), force (the
  total force on A, world frame), centre (the mean of the points), normal (the mean normal,
  unit, from B to A), opening (the largest gap of its points: > 0 open), and thrust: the point
  of the joint where the resultant acts, the centre of pressure sum f_n,i p_i / sum f_n,i (NaN
  on an open joint). The thrust points of the joints of an arch, in order, are its line of
  thrust (Heyman): the arch stands while each lies within its joint.
A joint's rows must be on one rank (serial, or routed by pair).
"""
import numpy as np

SLIDING = 2          # laws.codes.STATUS


def joints(ends, open_force=0.0):
    """The joints of the A-ends of `ends` (one per contact row), in key order: a dict of
    arrays, one row per joint."""
    at = np.flatnonzero(ends["first"])
    key = np.stack([ends["gid"][at], ends["partner"][at]], axis=1)
    o = np.lexsort((key[:, 1], key[:, 0]))
    at, key = at[o], key[o]
    new = np.ones(len(at), bool)
    new[1:] = np.any(key[1:] != key[:-1], axis=1)
    start = np.flatnonzero(new)
    j = np.cumsum(new) - 1
    nj = len(start)

    def total(values):
        values = np.asarray(values, float)
        out = np.zeros((nj,) + values.shape[1:])
        np.add.at(out, j, values)
        return out

    fn, p = ends["fn"][at], ends["point"][at]
    count = total(np.ones(len(at)))
    opened = total(fn <= open_force)
    status = ends.get("status")
    sliding = total(status[at] == SLIDING) if status is not None else np.zeros(nj)
    N = total(fn)
    normal = total(ends["normal"][at])
    normal /= np.maximum(np.linalg.norm(normal, axis=1), 1e-300)[:, None]
    thrust = np.divide(total(fn[:, None] * p), N[:, None], out=np.full((nj, 3), np.nan),
                       where=N[:, None] > 0)
    opening = np.full(nj, -np.inf)
    np.maximum.at(opening, j, ends["gap"][at])
    return {"a": key[start, 0] if nj else np.zeros(0, np.int64),
            "b": key[start, 1] if nj else np.zeros(0, np.int64),
            "points": count, "open_points": opened, "sliding_points": sliding,
            "state": np.where(opened == 0, 0, np.where(opened < count, 1, 2)).astype(np.int8),
            "normal_force": N, "force": total(ends["force"][at]),
            "centre": total(p) / np.maximum(count, 1)[:, None], "normal": normal,
            "opening": opening, "thrust": thrust}
