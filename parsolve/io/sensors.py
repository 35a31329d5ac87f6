"""Sensors: cheap time series of chosen bodies and contact pairs (Solfec's HISTORY, Exudyn's
sensors), written to /sensors/NAME of the results file.

    model.sensor("ball", bodies=[0], quantities=("x", "v"), every=10)
    model.sensor("height", bodies=ids, quantities={"z": lambda s: s["x"][:, 2]})
    model.sensor("on floor", pairs=[(0, "floor"), (3, 7)], quantities=("force", "points"))
    model.sensor("drive", joints=["plate"], quantities=("force",))

Body quantities (world frame, SI): x, q, v, w, contact_force and contact_torque (the mean
force and torque of all contacts on the body over the step, from M du / h), or a callable of
the sampled state (a dict of those arrays for the sensor's bodies, sorted by id, and "t")
returning one value or a row per body. Pair quantities: force (the mean contact force on the
pair's first body over the step, summed over its contact points in key order) and points
(their count). Joint quantities: force (the mean reaction on the joint's first body over the
step, world frame; a name given to `guide` selects its joints, one row each). Every `every`
steps, each rank contributes only the rows asked for, and rank 0 gathers them: the cost does
not grow with the model.

/sensors/NAME/step, time: one entry per sample; /sensors/NAME/<quantity>: (samples, rows, k);
the group's attrs "bodies" (ids) or "pairs" (JSON) name the rows.
"""
import json

import numpy as np

from ..errors import InputError
from ..tables.keys import CONTACT, JOINT, NAMESPACES, OBSTACLE_CODES, pair_code

BODY_QUANTITIES = {"x": 3, "q": 4, "v": 3, "w": 3, "contact_force": 3, "contact_torque": 3}
PAIR_QUANTITIES = {"force": 3, "points": 1}
JOINT_QUANTITIES = {"force": 3}


class Sensor:
    def __init__(self, name, bodies=None, pairs=None, quantities=None, every=1, joints=None):
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise InputError(f"sensor {name!r}: a name is a non-empty string without '/'")
        if sum(x is not None for x in (bodies, pairs, joints)) != 1:
            raise InputError(f"sensor {name!r}: give bodies=, pairs= or joints= (one of them)")
        self.name, self.every = name, int(every)
        if self.every < 1:
            raise InputError(f"sensor {name!r}: every must be >= 1, got {every}")
        known = (BODY_QUANTITIES if bodies is not None else
                 PAIR_QUANTITIES if pairs is not None else JOINT_QUANTITIES)
        quantities = quantities or (("x", "v") if bodies is not None else tuple(known))
        items = quantities.items() if isinstance(quantities, dict) else \
            [(q, None) for q in quantities]
        self.quantities = {}
        for q, fn in items:
            if fn is None and q not in known:
                raise InputError(f"sensor {name!r}: unknown quantity {q!r}: choose from "
                                 f"{', '.join(known)} or give a callable")
            if fn is not None and (not callable(fn) or bodies is None):
                raise InputError(f"sensor {name!r}: quantity {q!r}: a callable is for body "
                                 "sensors")
            self.quantities[str(q)] = fn
        self.joints = None if joints is None else [str(j) for j in (
            [joints] if isinstance(joints, str) else joints)]
        if joints is not None:
            self.bodies = self.pairs = None
            if not self.joints:
                raise InputError(f"sensor {name!r}: no joints")
        elif bodies is not None:
            self.bodies = np.unique(np.asarray(bodies, np.int64).ravel())
            if len(self.bodies) == 0:
                raise InputError(f"sensor {name!r}: no bodies")
            self.pairs = None
        else:
            self.bodies = None
            self.pairs = [(int(a), b if isinstance(b, str) else int(b)) for a, b in pairs]
            if not self.pairs:
                raise InputError(f"sensor {name!r}: no pairs")

    @property
    def rows(self):
        if self.joints is not None:
            return len(self._index)
        return len(self.bodies) if self.bodies is not None else len(self.pairs)

    def attrs(self):
        if self.joints is not None:
            return {"joints": json.dumps(self._names)}
        return ({"bodies": self.bodies} if self.bodies is not None else
                {"pairs": json.dumps(self.pairs)})

    def resolve(self, obstacle_names, joint_names=()):
        """Pair keys (A's id, B's code) as contacts carry them, obstacles by name; joints by
        name (or a guide's name: its joints "NAME.i")."""
        if self.joints is not None:
            joint_names = list(joint_names)
            self._index, self._names = [], []
            for want in self.joints:
                hit = [k for k, n in enumerate(joint_names)
                       if n == want or n.startswith(want + ".")]
                if not hit:
                    raise InputError(f"sensor {self.name!r}: no joint named {want!r}")
                self._index += hit
                self._names += [joint_names[k] for k in hit]
            self._index = np.array(self._index, np.int64)
            self._row_of = {int(j): r for r, j in enumerate(self._index)}   # by joint
            return
        if self.pairs is None:
            return
        keys = []
        for a, b in self.pairs:
            if isinstance(b, str):
                if b not in obstacle_names:
                    raise InputError(f"sensor {self.name!r}: no obstacle named {b!r} (the "
                                     f"model has {', '.join(map(repr, obstacle_names))})")
                keys.append((a, obstacle_names.index(b), 1.0))
            else:
                lo, hi = min(a, b), max(a, b)
                keys.append((lo, hi + OBSTACLE_CODES, 1.0 if a == lo else -1.0))
        self._keys = np.array([(k1, code) for k1, code, _ in keys], np.int64)
        self._sign = np.array([s for _, _, s in keys])

    def local_rows(self, owned, du, contacts, h):
        """This rank's share of a sample: rows of the bodies or contacts it owns."""
        if self.bodies is not None:
            n = owned.n_owned
            at = np.flatnonzero(np.isin(owned.gid[:n], self.bodies))
            mine = owned.take(at)                # the sampled rows only: cost of the sensor
            return {"gid": mine.gid, "x": mine.x, "q": mine.q, "v": mine.v, "w": mine.w,
                    "contact_force": mine.mass[:, None] * du[at, :3] / h,
                    "contact_torque": np.einsum("nij,nj->ni", mine.inertia_world(),
                                                du[at, 3:]) / h}
        if self.joints is not None:
            joint = np.flatnonzero(contacts.origin == JOINT)
            index = NAMESPACES[JOINT].index(contacts.k2[joint])
            c = joint[np.isin(index, self._index)]
            p = np.array([self._row_of[int(j)] for j in NAMESPACES[JOINT].index(
                contacts.k2[c])], np.int64)
            force = np.einsum("kji,kj->ki", contacts.frame[c], contacts.R[c]) / h
            return {"pair": p.astype(np.int64), "k2": contacts.k2[c], "force": force}
        code = np.where(contacts.origin == CONTACT, pair_code(contacts.k2), -1)
        match = (contacts.k1[:, None] == self._keys[None, :, 0]) & \
            (code[:, None] == self._keys[None, :, 1])
        c, p = np.nonzero(match)
        force = np.einsum("kji,kj->ki", contacts.frame[c], contacts.R[c]) / h
        return {"pair": p.astype(np.int64), "k2": contacts.k2[c], "force": force}

    def finish(self, rows, t):
        """Rank 0: the sample from every rank's rows, in an order independent of the ranks."""
        if self.bodies is not None:
            o = np.argsort(rows["gid"])
            state = {k: v[o] for k, v in rows.items()}
            state["t"] = t
            if len(o) != len(self.bodies):
                missing = sorted(set(self.bodies) - set(state["gid"]))
                raise InputError(f"sensor {self.name!r}: no body {missing[0]}")
            out = {}
            for q, fn in self.quantities.items():
                value = state[q] if fn is None else fn(state)
                out[q] = np.asarray(value, float).reshape(self.rows, -1)
            return out
        o = np.lexsort((rows["k2"], rows["pair"]))
        pair, force = rows["pair"][o], rows["force"][o]
        total = np.zeros((self.rows, 3))
        for k in range(len(pair)):                   # in key order: the same sum on any P
            total[pair[k]] += force[k]
        if self.joints is not None:
            return {"force": total}
        out = {"force": total * self._sign[:, None],
               "points": np.bincount(pair, minlength=self.rows).astype(float)[:, None]}
        return {q: out[q] for q in self.quantities}

    def columns(self, probe):
        """(name, dtype, trailing shape) of the sensor's datasets; `probe` is one sample."""
        return [("step", np.int64, ()), ("time", float, ())] + \
            [(q, float, probe[q].shape) for q in self.quantities]
