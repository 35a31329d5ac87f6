"""The model's connectors at run time (Exudyn's CoordinateSpringDamperExt on body coordinates,
parsolve/model/connectors.py): every step one scalar row of the connector law per connector
(parsolve/laws/connector.py), and after the step its state.

Rows. A connector's row acts on body A, m1's body (m0's when m1 is the ground), and body B, the
other one or none; its point is A's mass centre at the half step, so that it belongs, as a
contact does, to the rank that owns A. Its key is (gid of A, CONNECTOR_KEYS - index), apart from
contacts' and joints'. Both bodies lie within the connectors' reach (the largest distance
between a connector's bodies at the start, times a slack): the cells are at least twice that,
so the owner holds both bodies and rows of one colour never share a body.

State, per connector, in its row's `state` columns (so it follows the row from rank to rank,
is warm-started by key and checkpointed with the rows): q (the displacement
f1 q_m1 - f0 q_m0, integrated as q += h (v(t) + v(t+h)) / 2, which is the coordinates'
midpoint-rule displacement exactly), the friction mode (0 stick, else the slip force with its
sign), the last sticking position x_lsp, the limit-stop state (0, or the penetration past the
stop, signed). All zero at the start: sticking at q = 0.

Time integration (the trapezoidal rule of the spring law, laws/spring.py): the force f_SD over
the step is taken at the step's mean displacement and rate,
    q_bar = q(t) + h/4 (v(t) + v), v_bar = (v(t) + v) / 2   (v = U_N at the step's end),
linearised about v = v(t): f_SD ~ F0 + s (v - v(t)), F0 = f_SD(q(t) + h/2 v(t), v(t)),
s = h/4 df/dq + 1/2 df/dv. The row's impulse R_N = -h f_SD gives a = -h (F0 - s v(t)) and
g = -h s: the stiffness and damping enter W and B implicitly. For a linear spring-damper that is
Newmark's average acceleration: unconditionally stable (no limit on k h^2 / m) and, undamped,
energy conserving. A negative slope (a Stribeck curve falling with speed, a negative stiffness)
is left explicit (s >= 0), so the local solve never divides by 1 - g W_NN <= 0. Where the
regularised Stribeck force alone could stop the rate within the step (|v(t)| <= h |f| W_NN), it
enters as a damper of its secant slope f(v(t)) / v(t): its impulse -h f(v(t)) v_bar / v(t)
opposes the mean rate, so friction alone never adds energy and a step cannot overshoot the steep
zone around v = 0 into a limit cycle; elsewhere by its tangent (second order).

Switching after the step, from q(t+h) and v(t+h), with Exudyn's rules (its PostNewtonStep,
taken once per step): stick turns to slip when |k_mu (q - x_lsp) + d_mu v| exceeds
f_dynamic_friction + f_static_friction_offset (mode = the Stribeck force at v); slip turns to
stick when v reverses against the mode, with x_lsp set so that the bristle force starts at the
last slip force; a sliding connector's x_lsp follows q. A limit stop acts during a step when q
predicted at its end, q(t) + h v(t), lies beyond it (Exudyn iterates the step until its state
agrees with the step's end); the state keeps the penetration.
"""
import numpy as np

from . import libm
from .dynamics.rotation import quat_to_matrix
from .errors import InputError, everywhere
from .interactions import Interactions
from .laws import connector, coulomb

CONNECTOR_KEYS = connector.COORDINATE_KEYS    # k2 = CONNECTOR_KEYS - index: apart from
STOP_KEYS = 2 * CONNECTOR_KEYS                # contacts and joints; a rigid stop's:
                                              # STOP_KEYS - 2 index - (0 upper, 1 lower)
REACH_SLACK = 1.5
Q, MODE, LSP, LIMIT = range(4)    # the state columns
# per connector and step (results' /connectors): f_SD is the step's mean force, -R_N / h
OUTPUTS = ("displacement", "velocity", "force", "friction_mode", "last_sticking_position",
           "limit_stop_state")
PARAMS = ("stiffness", "damping", "offset", "velocity_offset", "factor0", "factor1",
          "f_dynamic_friction", "f_static_friction_offset", "sticking_stiffness",
          "sticking_damping", "exponential_decay_static", "f_viscous_friction",
          "friction_proportional_zone", "limit_stops_upper", "limit_stops_lower",
          "limit_stops_stiffness", "limit_stops_damping")
USER_ARGS = ("stiffness", "damping", "offset", "velocity_offset", "f_dynamic_friction",
             "f_static_friction_offset", "exponential_decay_static", "f_viscous_friction",
             "friction_proportional_zone")


def stribeck(v, fd, fso, fv, vexp, vreg):
    """Exudyn's Stribeck curve and its slope d/dv (sign(0) = 0, as Exudyn's SignReal)."""
    v, fd, fso, fv, vexp, vreg = np.broadcast_arrays(*(np.asarray(x, float) for x in
                                                       (v, fd, fso, fv, vexp, vreg)))
    inside = (np.abs(v) <= vreg) & (vreg != 0)
    safe = np.where(vreg != 0, vreg, 1.0)
    s = np.sign(v)
    over = np.abs(v) - vreg
    decay = libm.exp(-over / vexp)
    f = np.where(inside, (fd + fso) * v / safe, s * (fd + fso * decay + fv * over))
    df = np.where(inside, (fd + fso) / safe, -fso / vexp * decay + fv)
    return f, df


class Connectors:
    def __init__(self, specs, local, comm):
        """specs: Model.connectors; local: this rank's BodySet (any slice); comm: the run's."""
        self.specs = list(specs)
        n = len(self.specs)
        self.names = [s["name"] for s in self.specs]
        self.p = {k: np.array([s["params"][k] for s in self.specs]) for k in PARAMS}
        self.active = np.array([s["active"] for s in self.specs], bool)
        self.limits = np.array([s["limits"] for s in self.specs], bool)
        self.rigid = self.limits & np.array([s.get("stops") == "rigid" for s in self.specs],
                                            bool)
        self.restitution = np.array([s.get("restitution", 0.0) for s in self.specs])
        self.coulomb = np.array([s["friction"] == "coulomb" for s in self.specs], bool)
        self.user = np.array([s["force"] is not None for s in self.specs], bool)
        p = self.p
        dry = (p["f_dynamic_friction"] > 0) | (p["f_static_friction_offset"] > 0) if n else \
            np.zeros(0, bool)
        self.stribeck = ((p["friction_proportional_zone"] != 0) & ~self.coulomb) if n else \
            np.zeros(0, bool)                            # exact Coulomb: no regularisation
        self.bristle = dry & ~self.stribeck & ~self.coulomb
        self.coulomb &= dry
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
        want = np.unique(np.concatenate([self.a, self.b[self.b >= 0]])) if n else \
            np.zeros(0, np.int64)
        mine = np.isin(local.gid, want)
        parts = comm.allgather({"gid": local.gid[mine], "x": local.x[mine]}) if n else []
        gid = np.concatenate([q["gid"] for q in parts]) if parts else np.zeros(0, np.int64)
        x = np.concatenate([q["x"] for q in parts]) if parts else np.zeros((0, 3))
        where = {int(g): k for k, g in enumerate(gid)}
        for j, s in enumerate(self.specs):
            for g in (self.a[j], self.b[j]):
                if g >= 0 and int(g) not in where:
                    raise everywhere(InputError(f"connector {s['name']!r}: a coordinate of "
                                                f"unknown body {g}"))
        reach = np.array([np.linalg.norm(x[where[int(self.a[j])]] - x[where[int(self.b[j])]])
                          if self.b[j] >= 0 else 0.0 for j in range(n)])
        self.max_reach = REACH_SLACK * float(reach.max()) if n else 0.0
        self.last = None          # this rank's outputs of the last step (index, OUTPUTS)

    def __len__(self):
        return len(self.specs)

    # -- the rows -----------------------------------------------------------------------------
    def rows(self, held):
        """The rows (Interactions, state zero) of the connectors whose bodies `held` holds,
        at the half step; and (d, name): the largest distance between a row's bodies."""
        if not len(self):
            return Interactions.empty(), (0.0, "")
        ia, ib = _lookup(held.gid, self.a), _lookup(held.gid, self.b)
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
        frame = connector.encode(d[:, 0], self.rot[use, 0], d[:, 1], self.rot[use, 1])
        rows = Interactions(n, a=a, b=b, obstacle=np.full(n, -1), k1=self.a[use],
                            k2=CONNECTOR_KEYS - use.astype(np.int64), point=point,
                            offset=offset, frame=frame, kind=np.full(n, connector.KIND, np.int8))
        rigid = np.flatnonzero(self.rigid[use])
        if len(rigid):                  # two unilateral rows each (their gaps: stops_gaps)
            k = np.repeat(rigid, 2)
            side = np.tile([0, 1], len(rigid))
            sign = np.where(side == 0, -1.0, 1.0)              # U_N = -v (upper), +v (lower)
            stops = rows.take(k)
            stops.frame[:, :2] *= sign[:, None, None]
            stops.k2 = STOP_KEYS - 2 * use[k].astype(np.int64) - side
            stops.kind[:] = connector.KIND              # inert until closed (_stop_gaps)
            stops.param[:] = 0.0
            rows = Interactions.concat([rows, stops])
        return rows, (float(far[worst]), self.names[use[worst]])

    def check_reach(self, stretch, half_cell, comm):
        """Collective: a connector whose bodies moved apart farther than half a cell is
        refused by name on every rank (the ghost layer and the colouring rely on it)."""
        if comm.max(stretch[0]) <= half_cell:
            return
        d, name = max(comm.allgather(stretch))
        raise everywhere(InputError(
            f"connector {name!r}: its bodies moved {d:.6g} m apart, beyond the reach "
            f"{half_cell:.6g} m the cells were built for (1.5 times the longest at the start)"))

    @staticmethod
    def index(rows):
        """(positions of connector rows in `rows`, their connector indices)."""
        sel = np.flatnonzero((rows.k2 <= CONNECTOR_KEYS) & (rows.k2 > STOP_KEYS))
        return sel, (CONNECTOR_KEYS - rows.k2[sel]).astype(np.int64)

    def rate(self, rows, sel, held):
        """v = f1 v_m1 - f0 v_m0 of the rows `sel` from the held bodies' velocities."""
        a, b = rows.a[sel], rows.b[sel]
        vb, wb = np.zeros((len(sel), 3)), np.zeros((len(sel), 3))
        two = b >= 0
        vb[two], wb[two] = held.v[b[two]], held.w[b[two]]
        return connector.rate(rows.frame[sel], held.v[a], held.w[a], vb, wb)

    def _stop_gaps(self, rows, sel, j, held, h):
        """The rigid stops' gaps at the half step, from their connector's state: s_upper - q
        and q - s_lower (rows of a connector and its stops share this rank: same point)."""
        stops = np.flatnonzero(rows.k2 <= STOP_KEYS)
        if not len(stops):
            return
        code = STOP_KEYS - rows.k2[stops]
        js, side = code // 2, code % 2
        where = np.full(len(self), -1)
        where[j] = sel
        mine = where[js]
        qm = rows.state[mine, Q] + 0.5 * h * self.rate(rows, mine, held)
        gap = np.where(side == 0, self.p["limit_stops_upper"][js] - qm,
                       qm - self.p["limit_stops_lower"][js])
        rows.gap[stops] = gap
        # a stop acts, as a contact is detected, where its gap at the half step is closed;
        # an open one is an inert row (the connector law with a = g = c = 0: R = 0)
        closed = gap <= 0.0
        rows.kind[stops] = np.where(closed, coulomb.KIND, connector.KIND)
        rows.param[stops] = 0.0
        rows.param[stops, 1] = np.where(closed, self.restitution[js], 0.0)

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
    def linearise(self, rows, held, t, h):
        """Fill the param (a, g, c) of the connector rows of `rows` (after the warm start,
        which brought their state) for the step [t, t + h]."""
        sel, j = self.index(rows)
        if not len(sel):
            return
        if self.rigid.any():
            self._stop_gaps(rows, sel, j, held, h)
        U0 = self.rate(rows, sel, held)
        a, g, c = self.coefficients(j, rows.state[sel], U0, t, h, self.mobility(rows, sel, held))
        rows.param[sel] = 0.0
        rows.param[sel, 0], rows.param[sel, 1], rows.param[sel, 2] = a, g, c

    def coefficients(self, j, state, U0, t, h, w=None):
        """(a, g, c) of connectors j with state (n, 4), start rate U0 and mobility w."""
        p = {k: v[j] for k, v in self.p.items()}
        q0 = state[:, Q]
        qm = q0 + 0.5 * h * U0                           # q at the half step
        F = p["stiffness"] * (qm - p["offset"]) + p["damping"] * (U0 - p["velocity_offset"])
        Kq, Kv = p["stiffness"].copy(), p["damping"].copy()
        c = np.zeros(len(j))
        fd, fso = p["f_dynamic_friction"], p["f_static_friction_offset"]
        fv, vexp, vreg = p["f_viscous_friction"], p["exponential_decay_static"], \
            p["friction_proportional_zone"]
        reg = self.stribeck[j]
        if reg.any():                                    # regularised Stribeck
            f, df = stribeck(U0[reg], fd[reg], fso[reg], fv[reg], vexp[reg], vreg[reg])
            F[reg] += f
            # near v = 0 (the force alone could stop the rate within the step): a damper of
            # its secant slope f(v0) / v0, so it cannot overshoot the zone; else its tangent
            u = U0[reg]
            near = (np.abs(u) <= h * np.abs(f) * (w[reg] if w is not None else np.inf)) & \
                (u != 0)
            Kv[reg] += np.where(near, f / np.where(u != 0, u, 1.0), df)
        bri = self.bristle[j]
        if bri.any():
            mode, lsp = state[bri, MODE], state[bri, LSP]
            stick = mode == 0
            kmu, dmu = p["sticking_stiffness"][bri], p["sticking_damping"][bri]
            f, df = stribeck(U0[bri], fd[bri], fso[bri], fv[bri], vexp[bri], 0.0)
            F[bri] += np.where(stick, kmu * (qm[bri] - lsp) + dmu * U0[bri],
                               np.sign(mode) * np.abs(f))
            Kq[bri] += np.where(stick, kmu, 0.0)
            Kv[bri] += np.where(stick, dmu, np.where(np.sign(mode) == np.sign(U0[bri]), df,
                                                     0.0))
        cou = self.coulomb[j]
        if cou.any():                                    # exact Coulomb (beyond Exudyn)
            speed = np.abs(U0[cou])
            stuck = state[cou, MODE] == 0
            c[cou] = h * (fd[cou] + fso[cou] * np.where(stuck, 1.0,
                                                        libm.exp(-speed / vexp[cou])))
            Kv[cou] += fv[cou]
        lim = self.limits[j] & ~self.rigid[j]
        if lim.any():
            qe = q0[lim] + h * U0[lim]                   # q predicted at the step's end
            up, lo = p["limit_stops_upper"][lim], p["limit_stops_lower"][lim]
            stop = np.where(qe > up, up, np.where(qe < lo, lo, np.nan))
            on = ~np.isnan(stop)
            kl, dl = p["limit_stops_stiffness"][lim], p["limit_stops_damping"][lim]
            F[lim] += np.where(on, kl * (qm[lim] - np.where(on, stop, 0.0)) + dl * U0[lim], 0.0)
            Kq[lim] += np.where(on, kl, 0.0)
            Kv[lim] += np.where(on, dl, 0.0)
        for k in np.flatnonzero(self.user[j]):           # the user's force replaces it all
            F[k], Kq[k], Kv[k] = self._user(int(j[k]), t + 0.5 * h, qm[k], U0[k], h)
        off = ~self.active[j]
        F[off], Kq[off], Kv[off], c[off] = 0.0, 0.0, 0.0, 0.0
        s = np.maximum(0.25 * h * Kq + 0.5 * Kv, 0.0)   # a falling slope stays explicit
        return -h * (F - s * U0), -h * s, c

    def _user(self, j, t, q, v, h):
        """(F, dF/dq, dF/dv) of connector j's user function at (q, v), the slopes by central
        differences; a raise or a non-finite value is an InputError naming the connector."""
        s = self.specs[j]
        fn, p = s["force"], s["params"]
        args = [p[k] for k in USER_ARGS]
        eq, ev = 1e-6 * max(abs(q), 1e-6), 1e-6 * max(abs(v), 1e-6)
        try:
            vals = [float(fn(t, j, q + x, v + y, *args))
                    for x, y in ((0, 0), (eq, 0), (-eq, 0), (0, ev), (0, -ev))]
        except Exception as exc:
            raise InputError(f"connector {s['name']!r}: spring_force_user_function raised at "
                             f"t = {t:g}, q = {q:g}: {exc!r}") from None
        if not np.isfinite(vals).all():
            raise InputError(f"connector {s['name']!r}: spring_force_user_function returned "
                             f"{vals[0]} at t = {t:g}, q = {q:g}, v = {v:g}")
        return vals[0], (vals[1] - vals[2]) / (2 * eq), (vals[3] - vals[4]) / (2 * ev)

    # -- after the step -----------------------------------------------------------------------
    def update(self, rows, U0, U1, h):
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
        p = {k: v[j] for k, v in self.p.items()}
        mode, lsp = st[:, MODE].copy(), st[:, LSP].copy()
        bri = self.bristle[j] & self.active[j] & ~self.user[j]
        if bri.any():
            fd, fso = p["f_dynamic_friction"][bri], p["f_static_friction_offset"][bri]
            kmu, dmu = p["sticking_stiffness"][bri], p["sticking_damping"][bri]
            f_slip, _ = stribeck(v1[bri], fd, fso, p["f_viscous_friction"][bri],
                                 p["exponential_decay_static"][bri], 0.0)
            m, x = mode[bri], lsp[bri]
            qq, vv = q1[bri], v1[bri]
            stick = m == 0
            f_stick = kmu * (qq - x) + dmu * vv
            breaks = stick & (np.abs(f_stick) > fd + fso)
            back = ~stick & (vv * m < 0)
            slide = ~stick & ~back
            new_m = np.where(breaks | slide, f_slip, np.where(back, 0.0, m))
            new_x = np.where(back, qq - (m - vv * dmu) / np.where(kmu > 0, kmu, 1.0),
                             np.where(slide, qq, x))
            mode[bri], lsp[bri] = new_m, new_x
        cou = self.coulomb[j] & self.active[j] & ~self.user[j]
        if cou.any():                                    # the set-valued part's force
            par = rows.param[sel][cou]
            s = rows.R[sel[cou], 0] - par[:, 0] - par[:, 1] * v1[cou]
            inside = np.abs(s) < par[:, 2] * (1.0 - 1e-9)
            mode[cou] = np.where(inside & (np.abs(v1[cou]) <= 1e-9 * (1.0 + np.abs(v0[cou]))),
                                 0.0, -s / h)
        limit = np.zeros(len(sel))
        lim = self.limits[j]
        if lim.any():
            up, lo = p["limit_stops_upper"][lim], p["limit_stops_lower"][lim]
            qq = q1[lim]
            limit[lim] = np.where(qq > up, qq - up, np.where(qq < lo, qq - lo, 0.0))
        rows.state[sel, Q], rows.state[sel, MODE] = q1, mode
        rows.state[sel, LSP], rows.state[sel, LIMIT] = lsp, limit
        self.last = (j, np.stack([q1, v1, force, mode, lsp, limit], axis=1))

    def columns(self):
        """The results' /connectors columns: step, time and each output (n,)."""
        return [("step", np.int64, ()), ("time", float, ())] + \
            [(name, float, (len(self),)) for name in OUTPUTS]

    def gather(self, comm, everywhere=True):
        """Every connector's outputs (OUTPUTS) of the last step, by index: on every rank, or
        (everywhere=False, the results' writer) on rank 0 only (None elsewhere)."""
        j, vals = self.last if self.last is not None else \
            (np.zeros(0, np.int64), np.zeros((0, len(OUTPUTS))))
        rows = {"j": np.asarray(j, np.int64), "v": vals}
        got = comm.gather_rows(rows) if not everywhere else \
            {k: np.concatenate([p[k] for p in comm.allgather(rows)]) for k in rows}
        if got is None:
            return None
        out = np.full((len(self), len(OUTPUTS)), np.nan)
        out[got["j"]] = got["v"]
        return {name: out[:, k].copy() for k, name in enumerate(OUTPUTS)}


def _lookup(gid, wanted):
    """Index in `gid` of each of `wanted` (-1 where absent or negative)."""
    order = np.argsort(gid, kind="stable")
    pos = np.minimum(np.searchsorted(gid[order], wanted), max(len(gid) - 1, 0))
    found = (len(gid) > 0) & (wanted >= 0)
    found = found & (gid[order][pos] == wanted) if len(gid) else np.zeros(len(wanted), bool)
    return np.where(found, order[pos] if len(gid) else -1, -1)
