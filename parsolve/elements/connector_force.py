"""The force model of the connectors (Exudyn's CoordinateSpringDamperExt): the spring-damper,
its friction (a regularised Stribeck curve, Exudyn's bristle model, or an exact Coulomb bound)
and its limit stops, linearised over a step into the connector law's (a, g, c)
(laws/connector.py), and the friction mode's switching after the step.

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

from ..errors import InputError
from ..platform import libm

Q, MODE, LSP, LIMIT = range(4)    # the state columns of a connector's row
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


class ForceModel:
    """The connectors' parameters (per connector, from their specs) and their force."""

    def __init__(self, specs):
        self.specs = specs
        n = len(specs)
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

    def switch(self, j, st, rows_param, R_N, v0, v1, q1, h):
        """Exudyn's switching after the step, from q(t+h) = q1 and v(t+h) = v1: the new
        friction mode, last sticking position and limit-stop state (n,) of connectors j with
        state st, their rows' param and impulses R_N."""
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
            par = rows_param[cou]
            s = R_N[cou] - par[:, 0] - par[:, 1] * v1[cou]
            inside = np.abs(s) < par[:, 2] * (1.0 - 1e-9)
            mode[cou] = np.where(inside & (np.abs(v1[cou]) <= 1e-9 * (1.0 + np.abs(v0[cou]))),
                                 0.0, -s / h)
        limit = np.zeros(len(j))
        lim = self.limits[j]
        if lim.any():
            up, lo = p["limit_stops_upper"][lim], p["limit_stops_lower"][lim]
            qq = q1[lim]
            limit[lim] = np.where(qq > up, qq - up, np.where(qq < lo, qq - lo, 0.0))
        return mode, lsp, limit
