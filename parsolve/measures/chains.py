"""Force chains: the contacts between bodies whose normal force exceeds a threshold (a
multiple of the mean normal force of the active body-body contacts: Radjai's strong network
at factor 1), as line segments from each contact point to the centres of its two bodies, with
the normal force, for ParaView's tubes."""
import numpy as np

from . import tables


def chains(ends, threshold):
    """The chain segments of this rank's ends (centres attached) whose normal force exceeds
    `threshold` [N]: points (2 n, 3) (contact point, body centre), lines (n, 2) point ids,
    force (n,) the normal force, gid (n,) the end's body."""
    at = np.flatnonzero((ends["fn"] > threshold) & ~tables.wall(ends))
    at = at[np.lexsort((ends["partner"][at], ends["gid"][at]))]
    points = np.empty((2 * len(at), 3))
    points[0::2] = ends["point"][at]
    points[1::2] = ends["x"][at]
    return {"points": points, "lines": np.arange(2 * len(at)).reshape(-1, 2),
            "force": ends["fn"][at], "gid": ends["gid"][at]}
