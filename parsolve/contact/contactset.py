"""The contacts of one step, as arrays, in canonical order.

Body-side convention: a contact couples body A and body B (B may be an obstacle, index -1);
the normal points from B to A; U is the velocity of A's point relative to B's, in the local
frame (normal first); U_N > 0 separates; R is the impulse on A (B receives -R).

Each contact has a key (k1, k2) that depends only on global ids: k1 = gid of A,
k2 = (code of B) * 64 + feature, where the code of B is its gid + 2**20 for a body and its
obstacle index for an obstacle, and feature tells apart several points of one pair (box
vertices). Detection returns contacts sorted by key; the simulation then stores them in sweep
order (colour, then key; parallel/colouring.py). Neither depends on the partition, and a
contact that persists keeps its key (its reaction warm-starts the next solve).
"""
import numpy as np

OBSTACLE_CODES = 2 ** 20
FEATURES = 64

# Interaction kinds: every interaction is a row of dimension 3 in U = B + W R, whatever its
# kind; a kind selects the law C(U, R) = 0 its row obeys. Joints and connectors (seed 000)
# will be further kinds of rows in the same W, not a second system.
CONTACT = 0
KIND_NAMES = {CONTACT: "contact"}
DIMENSION = 3

FIELDS = {
    "a": ((), np.int64), "b": ((), np.int64), "obstacle": ((), np.int64),
    "k1": ((), np.int64), "k2": ((), np.int64),
    "point": ((3,), float), "frame": ((3, 3), float), "gap": ((), float),
    "mu": ((), float), "e": ((), float), "R": ((3,), float), "kind": ((), np.int8),
}


class ContactSet:
    def __init__(self, **arrays):
        n = len(arrays["a"]) if "a" in arrays else 0
        for name, (shape, dtype) in FIELDS.items():
            arr = arrays.get(name)
            setattr(self, name, np.zeros((n,) + shape, dtype) if arr is None
                    else np.ascontiguousarray(arr, dtype=dtype))

    def __len__(self):
        return len(self.a)

    @staticmethod
    def key2(b_gid, obstacle, feature):
        code = np.where(obstacle >= 0, obstacle, b_gid + OBSTACLE_CODES)
        return code * FEATURES + feature

    def take(self, index):
        return ContactSet(**{f: getattr(self, f)[index] for f in FIELDS})

    def canonical(self):
        return self.take(np.lexsort((self.k2, self.k1)))

    def warm_start(self, previous):
        """Copy the reactions of contacts that persist from `previous` (matched by key)."""
        if previous is None or len(previous) == 0 or len(self) == 0:
            return 0
        k1 = np.concatenate([previous.k1, self.k1])
        k2 = np.concatenate([previous.k2, self.k2])
        src = np.concatenate([np.zeros(len(previous), bool), np.ones(len(self), bool)])
        idx = np.concatenate([np.arange(len(previous)), np.arange(len(self))])
        o = np.lexsort((src, k2, k1))
        same = (k1[o][1:] == k1[o][:-1]) & (k2[o][1:] == k2[o][:-1])
        hit = same & ~src[o][:-1] & src[o][1:]
        old, new = idx[o][:-1][hit], idx[o][1:][hit]
        self.R[new] = previous.R[old]
        return len(new)
