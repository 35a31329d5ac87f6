"""The interactions of one step: every row of U = B + W R, whatever its law, in canonical order.

Every interaction (a contact, a joint's or a connector's row) is a 3-D row, as in Solfec: its
local frame has the normal (or the joint's first direction) first. A point row acts at `point`
on body A and at point + offset on body B (offset zero for a contact, minus the image's shift
across a periodic boundary; a joint's second point). `kind` selects the law C(U, R) = 0 the row
obeys (parsolve.laws), and only the law's `rows()` writes its `param` (PARAMS columns, zero
where a law uses fewer); `state` holds a law's per-row internal state (STATES columns: a
connector's displacement, friction mode, last sticking position and limit-stop state).
`origin` and `geometry` say what made the row and how H takes its velocity (tables/keys.py,
which also declares the keys).

Body-side convention: a row couples body A and body B (B may be an obstacle, index -1);
the normal points from B to A; U is the velocity of A's point relative to B's, in the local
frame; U_N > 0 separates; R is the impulse on A (B receives -R).

Detection returns contacts sorted by key; the stepper then stores rows in sweep order (colour,
then key; parallel/colouring.py). Neither depends on the partition.
"""
import numpy as np

from .table import Table, same

PARAMS = 4          # per-row law parameters (Coulomb: mu, e)
STATES = 4          # per-row law state

FIELDS = {
    "a": ((), np.int64), "b": ((), np.int64), "obstacle": ((), np.int64),
    "k1": ((), np.int64), "k2": ((), np.int64),
    "origin": ((), np.int8), "geometry": ((), np.int8),
    "point": ((3,), float), "offset": ((3,), float), "frame": ((3, 3), float),
    "gap": ((), float),
    "kind": ((), np.int8), "param": ((PARAMS,), float), "state": ((STATES,), float),
    "R": ((3,), float),
}


class Interactions(Table):
    """The rows one rank owns. PERSISTENT: what a restart and a row changing rank need (the
    key and origin, the point that decides the owner, the warm start and the law's state)."""
    FIELDS = FIELDS
    PERSISTENT = ("k1", "k2", "origin", "point", "R", "state")

    def canonical(self):
        return self.take(np.lexsort((self.k2, self.k1)))

    def warm_start(self, previous):
        """Copy the reactions and law states of rows that persist from `previous` (matched by
        key)."""
        if previous is None or len(previous) == 0 or len(self) == 0:
            return 0
        if same(previous.k1, self.k1) and same(previous.k2, self.k2):   # the same rows
            self.R[:] = previous.R
            self.state[:] = previous.state
            return len(self)
        old, new = self.persisting(previous)
        self.R[new] = previous.R[old]
        self.state[new] = previous.state[old]
        return len(new)

    def persisting(self, previous):
        """(old, new): the rows of `previous` and of this table with the same keys, paired."""
        k1 = np.concatenate([previous.k1, self.k1])
        k2 = np.concatenate([previous.k2, self.k2])
        src = np.concatenate([np.zeros(len(previous), bool), np.ones(len(self), bool)])
        idx = np.concatenate([np.arange(len(previous)), np.arange(len(self))])
        o = np.lexsort((src, k2, k1))
        equal = (k1[o][1:] == k1[o][:-1]) & (k2[o][1:] == k2[o][:-1])
        hit = equal & ~src[o][:-1] & src[o][1:]
        return idx[o][:-1][hit], idx[o][1:][hit]
