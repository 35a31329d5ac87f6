"""Connectors on body coordinates (Exudyn's CoordinateSpringDamperExt): the Model commands
(ConnectorCommands) and, at run time (Connectors), every step one scalar row of the connector
law per connector (laws/connector.py), its parameters from the force model
(connector_force.py), and after the step its state.

Rows. A connector's row acts on body A, m1's body (m0's when m1 is the ground), and body B, the
other one or none; its point is A's mass centre at the half step, so that it belongs, as a
contact does, to the rank that owns A. Its key is (gid of A, -2**40 - index): tables/keys.py's connector
namespace; a rigid stop's, the stop namespace. Both bodies lie within the connectors' reach (the largest distance
between a connector's bodies at the start, times a slack): the cells are at least twice that,
so the owner holds both bodies and rows of one colour never share a body.

State, per connector, in its row's `state` columns (so it follows the row from rank to rank,
is warm-started by key and checkpointed with the rows): q (the displacement
f1 q_m1 - f0 q_m0, integrated as q += h (v(t) + v(t+h)) / 2, which is the coordinates'
midpoint-rule displacement exactly), the friction mode (0 stick, else the slip force with its
sign), the last sticking position x_lsp, the limit-stop state (0, or the penetration past the
stop, signed). All zero at the start: sticking at q = 0.

The commands:

    x = model.coordinate(block, axis=(1, 0, 0))                  # translation along world x
    phi = model.coordinate(wheel, axis=(0, 0, 1), rotation=True, frame="body")
    model.connector(x, None, stiffness=1e4, damping=10, f_dynamic_friction=2.0,
                    sticking_stiffness=1e6, sticking_damping=1e3)

A coordinate ("marker") is a body's translation along an axis through its mass centre or its
rotation about an axis, the axis fixed in the world or in the body; None is the ground (a fixed
coordinate). Its value q_m is its displacement since the start (no reference value: zero at the
start), its rate v_m the body's velocity along (or angular velocity about) the axis. The
connector couples m0 and m1:

    q = f1 q_m1 - f0 q_m0,   v = f1 v_m1 - f0 v_m0,
    f_SD = k (q - x_off) + d (v - v_off) + f_friction + f_contact,

and, as in Exudyn (f_SD is a left-hand side force), acts with -f_SD f1 on m1 and +f_SD f0 on m0
(virtual work -f_SD dq): a positive stiffness restores. Parameters, Exudyn's names in
snake_case:

    stiffness k [N/m]              damping d [N s/m]             offset x_off [m]
    velocity_offset v_off [m/s]    factor0 f0, factor1 f1 [-]
    f_dynamic_friction [N] >= 0    f_static_friction_offset [N] >= 0
    sticking_stiffness [N/m] >= 0  sticking_damping [N s/m] >= 0 (bristles)
    exponential_decay_static [m/s] > 0 (Stribeck decay of the static offset)
    f_viscous_friction [N s/m]     friction_proportional_zone v_reg [m/s] >= 0
    limit_stops_upper, limit_stops_lower [m], limit_stops_stiffness [N/m] >= 0,
    limit_stops_damping [N s/m] >= 0, use_limit_stops, active_connector
    spring_force_user_function(t, index, displacement, velocity, stiffness, damping, offset,
        velocity_offset, f_dynamic_friction, f_static_friction_offset,
        exponential_decay_static, f_viscous_friction, friction_proportional_zone) -> f_SD

Friction as Exudyn defines it: v_reg > 0 the regularised Stribeck curve; v_reg = 0 the bristle
model (stick: a spring-damper k_mu, d_mu from the last sticking position; slip: the Stribeck
force), its state (friction mode, last sticking position, limit-stop state) kept per connector
and switched after each step (connector_force.py). friction="coulomb" (beyond Exudyn)
replaces the bristles by an exact set-valued Coulomb friction of bound f_dynamic_friction +
f_static_friction_offset (decaying with the speed as the Stribeck curve), no bristle stiffness;
limit_stops_model="rigid" (beyond Exudyn too) replaces the stops' spring-damper by two
unilateral rows (the Coulomb law with mu = 0, gaps s_upper - q and q - s_lower) with Newton's
restitution limit_stops_restitution in [0, 1].
Units are angular for rotations (rad, N m).
"""
import numpy as np

from ..assembly.geometry import coordinate_rate, encode
from ..dynamics.rotation import quat_to_matrix
from ..errors import InputError, everywhere
from ..laws import connector, coulomb
from ..tables.checks import body_id, finite, unit
from ..tables.interactions import Interactions
from ..tables.keys import CONNECTOR, COORDINATE, NAMESPACES, STOP
from .base import Element, lookup
from .connector_force import LIMIT, LSP, MODE, ForceModel, Q

REACH_SLACK = 1.5
# per connector and step (results' /connectors): f_SD is the step's mean force, -R_N / h
OUTPUTS = ("displacement", "velocity", "force", "friction_mode", "last_sticking_position",
           "limit_stop_state")
PARAMETERS = {     # name: (default, sign: "real", "ureal" (>= 0), "preal" (> 0))
    "stiffness": (0.0, "real"), "damping": (0.0, "real"), "offset": (0.0, "real"),
    "velocity_offset": (0.0, "real"), "factor0": (1.0, "real"), "factor1": (1.0, "real"),
    "f_dynamic_friction": (0.0, "ureal"), "f_static_friction_offset": (0.0, "ureal"),
    "sticking_stiffness": (0.0, "ureal"), "sticking_damping": (0.0, "ureal"),
    "exponential_decay_static": (1e-3, "preal"), "f_viscous_friction": (0.0, "real"),
    "friction_proportional_zone": (0.0, "ureal"), "limit_stops_upper": (0.0, "real"),
    "limit_stops_lower": (0.0, "real"), "limit_stops_stiffness": (0.0, "ureal"),
    "limit_stops_damping": (0.0, "ureal"),
}
FRICTION = ("exudyn", "coulomb")
STOPS = ("spring", "rigid")
FRICTION = ("exudyn", "coulomb")
STOPS = ("spring", "rigid")


class Connectors(Element):
    """The connectors at run time: their rows each step and their state after it."""
    NAME = "connectors"
    OUTPUTS = OUTPUTS

    def __init__(self, specs):
        super().__init__(specs)
        n = len(self.specs)
        self.force = ForceModel(self.specs)
        # side A: m1 (m0 when m1 is the ground); side B: the other (or the ground)
        side = [("m1", "m0", 1.0) if s["m1"] is not None else ("m0", None, -1.0)
                for s in self.specs]
        self.a = np.array([s[side[j][0]]["body"] for j, s in enumerate(self.specs)], np.int64)
        self.b = np.array([s[side[j][1]]["body"] if side[j][1] and s[side[j][1]] else -1
                           for j, s in enumerate(self.specs)], np.int64)
        # signed, scaled axes: A's +f1 axis (or -f0 axis when A is m0), B's f0 axis
        self.dir = np.zeros((n, 2, 3))
        self.rot = np.zeros((n, 2), bool)
        self.body_frame = np.zeros((n, 2), bool)
        for j, s in enumerate(self.specs):
            first, second, sign = side[j]
            for k, (label, scale) in enumerate(((first, sign * s["params"]["factor1" if
                                                first == "m1" else "factor0"]),
                                               (second, s["params"]["factor0"]))):
                m = s[label] if label else None
                if m is None:
                    continue
                self.dir[j, k] = scale * np.asarray(m["axis"], float)
                self.rot[j, k] = m["rotation"]
                self.body_frame[j, k] = m["frame"] == "body"
        self.last = None          # this rank's outputs of the last step (index, OUTPUTS)

    def bodies(self):
        return np.unique(np.concatenate([self.a, self.b[self.b >= 0]])) if len(self) else \
            np.zeros(0, np.int64)

    linked = bodies

    def set_up(self, found):
        """The reach: the largest distance between a connector's bodies at the start, times
        a slack."""
        for s, a, b in zip(self.specs, self.a, self.b):
            for g in (a, b):
                if g >= 0 and g not in found:
                    raise everywhere(InputError(f"connector {s['name']!r}: a coordinate of "
                                                f"unknown body {g}"))
        reach = np.array([np.linalg.norm(found.x[found.at(a)] - found.x[found.at(b)])
                          if b >= 0 else 0.0 for a, b in zip(self.a, self.b)])
        self.reach = REACH_SLACK * float(reach.max()) if len(self) else 0.0

    @property
    def calls_user(self):
        return bool(self.force.user.any())

    # -- the rows -----------------------------------------------------------------------------
    def rows(self, held, t, h):
        """The rows (Interactions, state zero) of the connectors whose bodies `held` holds,
        at the half step; and (d, name): the largest distance between a row's bodies."""
        if not len(self):
            return Interactions.empty(), (0.0, "")
        ia, ib = lookup(held.gid, self.a), lookup(held.gid, self.b)
        use = np.flatnonzero((ia >= 0) & ((self.b < 0) | (ib >= 0)))
        n = len(use)
        if n == 0:
            return Interactions.empty(), (0.0, "")
        a, b = ia[use], ib[use]
        two = self.b[use] >= 0
        d = self.dir[use].copy()
        for k, idx in ((0, a), (1, b)):                  # body-frame axes turn with the body
            turn = self.body_frame[use, k] & (idx >= 0)
            if turn.any():
                R = quat_to_matrix(held.q[idx[turn]])
                d[turn, k] = np.einsum("nij,nj->ni", R, d[turn, k])
        point = held.x[a]
        offset = np.zeros((n, 3))
        offset[two] = held.x[b[two]] - point[two]
        far = np.linalg.norm(offset, axis=1)
        worst = int(np.argmax(far))
        frame = encode(d[:, 0], self.rot[use, 0], d[:, 1], self.rot[use, 1])
        rows = Interactions(n, a=a, b=b, obstacle=np.full(n, -1), k1=self.a[use],
                            k2=NAMESPACES[CONNECTOR].key(use), origin=np.full(n, CONNECTOR),
                            geometry=np.full(n, COORDINATE), point=point, offset=offset,
                            frame=frame, **connector.rows(np.zeros(n), np.zeros(n)))
        rigid = np.flatnonzero(self.force.rigid[use])
        if len(rigid):                  # two unilateral rows each (their gaps: stops_gaps)
            k = np.repeat(rigid, 2)
            side = np.tile([0, 1], len(rigid))
            sign = np.where(side == 0, -1.0, 1.0)              # U_N = -v (upper), +v (lower)
            stops = rows.take(k)
            stops.frame[:, :2] *= sign[:, None, None]
            stops.k2 = NAMESPACES[STOP].key(use[k], side)
            stops.origin[:] = STOP                      # inert until closed (_stop_gaps)
            rows = Interactions.concat([rows, stops])
        return rows, (float(far[worst]), f"connector {self.names[use[worst]]!r}")

    @staticmethod
    def index(rows):
        """(positions of connector rows in `rows`, their connector indices)."""
        sel = np.flatnonzero(rows.origin == CONNECTOR)
        return sel, NAMESPACES[CONNECTOR].index(rows.k2[sel])

    def rate(self, rows, sel, held):
        """v = f1 v_m1 - f0 v_m0 of the rows `sel` from the held bodies' velocities."""
        a, b = rows.a[sel], rows.b[sel]
        vb, wb = np.zeros((len(sel), 3)), np.zeros((len(sel), 3))
        two = b >= 0
        vb[two], wb[two] = held.v[b[two]], held.w[b[two]]
        return coordinate_rate(rows.frame[sel], held.v[a], held.w[a], vb, wb)

    def _stop_gaps(self, rows, sel, j, held, h):
        """The rigid stops' gaps at the half step, from their connector's state: s_upper - q
        and q - s_lower (rows of a connector and its stops share this rank: same point)."""
        stops = np.flatnonzero(rows.origin == STOP)
        if not len(stops):
            return
        js, side = NAMESPACES[STOP].index(rows.k2[stops]), NAMESPACES[STOP].sub(rows.k2[stops])
        where = np.full(len(self), -1)
        where[j] = sel
        mine = where[js]
        qm = rows.state[mine, Q] + 0.5 * h * self.rate(rows, mine, held)
        gap = np.where(side == 0, self.force.p["limit_stops_upper"][js] - qm,
                       qm - self.force.p["limit_stops_lower"][js])
        rows.gap[stops] = gap
        # a stop acts, as a contact is detected, where its gap at the half step is closed;
        # an open one is an inert row (the connector law with a = g = c = 0: R = 0)
        closed = gap <= 0.0
        law = connector.rows(np.zeros(len(stops)), np.zeros(len(stops)))
        shut = coulomb.rows(np.zeros(int(closed.sum())), self.force.restitution[js[closed]])
        for column in law:
            law[column][closed] = shut[column]
            getattr(rows, column)[stops] = law[column]

    @staticmethod
    def mobility(rows, sel, held):
        """J M^-1 J^T of the rows `sel`: the rate a unit impulse gives (W_NN)."""
        out = np.zeros(len(sel))
        for k, col in ((0, rows.a[sel]), (1, rows.b[sel])):
            d, on = rows.frame[sel, k], col >= 0
            rot = rows.frame[sel, 2, k] > 0.5
            idx = np.maximum(col, 0)
            lin = np.einsum("ni,ni->n", d, d) / held.mass[idx]
            local = np.einsum("nji,nj->ni", quat_to_matrix(held.q[idx]), d)   # R^T d
            ang = np.einsum("ni,ni->n", local * local, 1.0 / held.inertia[idx])
            out += np.where(on, np.where(rot, ang, lin), 0.0)
        return out

    # -- the law's parameters of one step -----------------------------------------------------
    def prepare(self, rows, held, t, h):
        """Fill the param (a, g, c) of the connector rows of `rows` (after the warm start,
        which brought their state) for the step [t, t + h]."""
        sel, j = self.index(rows)
        if not len(sel):
            return
        if self.force.rigid.any():
            self._stop_gaps(rows, sel, j, held, h)
        U0 = self.rate(rows, sel, held)
        law = connector.rows(*self.force.coefficients(j, rows.state[sel], U0, t, h,
                                                      self.mobility(rows, sel, held)))
        rows.kind[sel], rows.param[sel] = law["kind"], law["param"]

    # -- after the step -----------------------------------------------------------------------
    def update(self, rows, U0, U1, h, converged=True):
        """The new state of the connector rows of `rows` (this rank's) from the step's start
        and end rates U0, U1 (n_rows, 3) and their impulses; keeps (index, q, v, f) in last."""
        sel, j = self.index(rows)
        if not len(sel):
            self.last = (j, np.zeros((0, len(OUTPUTS))))
            return
        st = rows.state[sel]
        v0, v1 = U0[sel, 0], U1[sel, 0]
        q1 = st[:, Q] + 0.5 * h * (v0 + v1)
        force = -rows.R[sel, 0] / h                      # f_SD, the step's mean
        mode, lsp, limit = self.force.switch(j, st, rows.param[sel], rows.R[sel, 0], v0, v1,
                                             q1, h)
        rows.state[sel, Q], rows.state[sel, MODE] = q1, mode
        rows.state[sel, LSP], rows.state[sel, LIMIT] = lsp, limit
        self.last = (j, np.stack([q1, v1, force, mode, lsp, limit], axis=1))

    def outputs(self):
        return self.last if self.last is not None else \
            (np.zeros(0, np.int64), np.zeros((0, len(OUTPUTS))))


class ConnectorCommands:
    """The connector commands of parsolve.Model (the specs in model.elements["connectors"])."""

    def coordinate(self, body, axis=(1.0, 0.0, 0.0), rotation=False, frame="world"):
        """A body coordinate: translation along `axis` (through the mass centre) or, with
        rotation=True, rotation about it; `axis` fixed in the world or, frame="body", in the
        body (given in its body frame)."""
        what = f"coordinate of body {body!r}"
        body = body_id(what, body)
        if frame not in ("world", "body"):
            raise InputError(f"{what}: frame must be 'world' or 'body', got {frame!r}")
        return {"body": body, "axis": unit(f"{what}: axis", axis),
                "rotation": bool(rotation), "frame": frame}

    def connector(self, m0, m1, name=None, active_connector=True, use_limit_stops=False,
                  spring_force_user_function=None, friction="exudyn",
                  limit_stops_model="spring", limit_stops_restitution=0.0, **parameters):
        """A scalar spring-damper with friction and limit stops between coordinates m0 and m1
        (model.coordinate(...) or None for the ground); the parameters are listed in this
        module's docstring. Returns its name."""
        conns = self.elements.setdefault(Connectors.NAME, [])
        taken = {c["name"] for c in conns}
        name = name or f"connector {len(conns)}"
        what = f"connector {name!r}"
        if name in taken:
            raise InputError(f"{what}: the name is taken")
        unknown = sorted(set(parameters) - set(PARAMETERS))
        if unknown:
            raise InputError(f"{what}: unknown parameter {unknown[0]!r} (known: "
                             f"{', '.join(PARAMETERS)})")
        p = {}
        for key, (default, sign) in PARAMETERS.items():
            v = float(finite(f"{what}: {key}", parameters.get(key, default)))
            if sign == "ureal" and v < 0:
                raise InputError(f"{what}: {key} must be >= 0, got {v:g}")
            if sign == "preal" and v <= 0:
                raise InputError(f"{what}: {key} must be > 0, got {v:g}")
            p[key] = v
        if limit_stops_model not in STOPS:
            raise InputError(f"{what}: limit_stops_model must be one of {STOPS}, got "
                             f"{limit_stops_model!r}")
        e = float(finite(f"{what}: limit_stops_restitution", limit_stops_restitution))
        if not 0.0 <= e <= 1.0:
            raise InputError(f"{what}: limit_stops_restitution must lie in [0, 1], got {e:g}")
        if friction not in FRICTION:
            raise InputError(f"{what}: friction must be one of {FRICTION}, got {friction!r}")
        if use_limit_stops and p["limit_stops_lower"] > p["limit_stops_upper"]:
            raise InputError(f"{what}: limit_stops_lower {p['limit_stops_lower']:g} > "
                             f"limit_stops_upper {p['limit_stops_upper']:g}")
        dry = p["f_dynamic_friction"] > 0 or p["f_static_friction_offset"] > 0
        if friction == "exudyn" and dry and p["friction_proportional_zone"] == 0 \
                and p["sticking_stiffness"] <= 0:
            raise InputError(f"{what}: the bristle model (friction_proportional_zone = 0 with "
                             "dry friction) needs sticking_stiffness > 0")
        if spring_force_user_function is not None and not callable(spring_force_user_function):
            raise InputError(f"{what}: spring_force_user_function must be callable")
        sides = []
        for label, m, f in (("m0", m0, p["factor0"]), ("m1", m1, p["factor1"])):
            if m is not None and not (isinstance(m, dict) and "body" in m):
                raise InputError(f"{what}: {label} must be model.coordinate(...) or None "
                                 f"(the ground), got {m!r}")
            sides.append(None if m is None or f == 0.0 else dict(m))
        if sides[0] is None and sides[1] is None:
            raise InputError(f"{what}: both coordinates are the ground (or have factor 0)")
        if sides[0] and sides[1] and sides[0]["body"] == sides[1]["body"]:
            raise InputError(f"{what}: both coordinates are of body {sides[0]['body']}; "
                             "a connector joins two bodies or a body and the ground")
        conns.append({"name": name, "m0": sides[0], "m1": sides[1], "params": p,
                      "active": bool(active_connector), "limits": bool(use_limit_stops),
                      "force": spring_force_user_function, "friction": friction,
                      "stops": limit_stops_model, "restitution": e})
        return name


def state(model):
    """What defines the connectors, for the model's fingerprint."""
    out = []
    for c in model.elements.get(Connectors.NAME, []):
        s = {k: v for k, v in c.items() if k not in ("m0", "m1", "force")}
        for side in ("m0", "m1"):
            m = c[side]
            s[side] = None if m is None else {**m, "axis": np.asarray(m["axis"]).tolist()}
        if c["force"] is not None:
            s["force"] = getattr(c["force"], "__qualname__", repr(c["force"]))
        out.append(s)
    return out
