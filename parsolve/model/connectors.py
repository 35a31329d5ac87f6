"""Connectors on body coordinates (Exudyn's CoordinateSpringDamperExt): the commands of Model
(a mixin: Model keeps its list in self.connectors).

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
and switched after each step (parsolve/connectors.py). friction="coulomb" (beyond Exudyn)
replaces the bristles by an exact set-valued Coulomb friction of bound f_dynamic_friction +
f_static_friction_offset (decaying with the speed as the Stribeck curve), no bristle stiffness;
limit_stops_model="rigid" (beyond Exudyn too) replaces the stops' spring-damper by two
unilateral rows (the Coulomb law with mu = 0, gaps s_upper - q and q - s_lower) with Newton's
restitution limit_stops_restitution in [0, 1].
Units are angular for rotations (rad, N m).
"""
import numpy as np

from ..errors import InputError
from .checks import finite, unit

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


class ConnectorCommands:
    """The connector commands of parsolve.Model."""

    def coordinate(self, body, axis=(1.0, 0.0, 0.0), rotation=False, frame="world"):
        """A body coordinate: translation along `axis` (through the mass centre) or, with
        rotation=True, rotation about it; `axis` fixed in the world or, frame="body", in the
        body (given in its body frame)."""
        what = f"coordinate of body {body!r}"
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)) \
                or int(body) < 0:
            raise InputError(f"{what}: a body is given by its id (an integer >= 0)")
        if frame not in ("world", "body"):
            raise InputError(f"{what}: frame must be 'world' or 'body', got {frame!r}")
        return {"body": int(body), "axis": unit(f"{what}: axis", axis),
                "rotation": bool(rotation), "frame": frame}

    def connector(self, m0, m1, name=None, active_connector=True, use_limit_stops=False,
                  spring_force_user_function=None, friction="exudyn",
                  limit_stops_model="spring", limit_stops_restitution=0.0, **parameters):
        """A scalar spring-damper with friction and limit stops between coordinates m0 and m1
        (model.coordinate(...) or None for the ground); the parameters are listed in this
        module's docstring. Returns its name."""
        conns = self.__dict__.setdefault("connectors", [])
        taken = self.__dict__.setdefault("_connector_names", set())
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
        taken.add(name)
        return name

    def connectors_state(self):
        """What defines the connectors, for the model's fingerprint."""
        out = []
        for c in self.__dict__.get("connectors", []):
            s = {k: v for k, v in c.items() if k not in ("m0", "m1", "force")}
            for side in ("m0", "m1"):
                m = c[side]
                s[side] = None if m is None else {**m, "axis": np.asarray(m["axis"]).tolist()}
            if c["force"] is not None:
                s["force"] = getattr(c["force"], "__qualname__", repr(c["force"]))
            out.append(s)
        return out
