"""The connector (Exudyn's CoordinateSpringDamperExt) against Exudyn itself, and its cost.

    .venv/bin/python bench/bench_connector.py [--exudyn /tmp/exu] [--quick]

1. Cases of a 1 kg mass on a coordinate connector to the ground, h = 1e-4, run by parsolve
   and by Exudyn (PyPI `exudyn`, installed by the bench only: `pip install --target /tmp/exu
   exudyn`; run in a subprocess with PYTHONPATH=/tmp/exu, its own numpy; generalized-alpha with
   spectral radius 1, i.e. the trapezoidal rule, and its discontinuous iterations): a linear
   spring-damper (against the analytic solution too), regularised Stribeck and bristle friction
   driven by a harmonic force, limit stops hit by a moving mass, and the exact Coulomb option
   (beyond Exudyn) against Exudyn's bristles. Table: max |dq| (absolute and relative to
   max |q|), the times of stick <-> slip transitions and of limit-stop hits, each side's.
2. The stability of the implicit spring: k h^2 / m from 0.1 to 1e4, energy after 1000 steps.
3. Time per step of 10^5 connectors (pairs of spheres in zero gravity, no contacts) against
   the same bodies without connectors.
Writes bench/results/connector.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import parsolve as ps                                       # noqa: E402
from parsolve.run import Simulation                  # noqa: E402

EXUDYN_CASE = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import exudyn as exu
from exudyn.itemInterface import *
case = json.loads(sys.argv[1])
SC = exu.SystemContainer(); mbs = SC.AddSystem()
nG = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0]))
n = mbs.AddNode(NodePoint(referenceCoordinates=[0, 0, 0], initialVelocities=[case["v0"], 0, 0]))
mbs.AddObject(MassPoint(physicsMass=case["mass"], nodeNumber=n))
mG = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nG, coordinate=0))
m1 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0))
nD = mbs.AddNode(NodeGenericData(numberOfDataCoordinates=3, initialCoordinates=[0, 0, 0]))
P = case["params"]
kw = dict(stiffness=P.get("stiffness", 0), damping=P.get("damping", 0),
          fDynamicFriction=P.get("f_dynamic_friction", 0),
          fStaticFrictionOffset=P.get("f_static_friction_offset", 0),
          stickingStiffness=P.get("sticking_stiffness", 0),
          stickingDamping=P.get("sticking_damping", 0),
          exponentialDecayStatic=P.get("exponential_decay_static", 1e-3),
          fViscousFriction=P.get("f_viscous_friction", 0),
          frictionProportionalZone=P.get("friction_proportional_zone", 0),
          limitStopsUpper=P.get("limit_stops_upper", 0),
          limitStopsLower=P.get("limit_stops_lower", 0),
          limitStopsStiffness=P.get("limit_stops_stiffness", 0),
          limitStopsDamping=P.get("limit_stops_damping", 0),
          useLimitStops=case.get("use_limit_stops", False))
c = mbs.AddObject(CoordinateSpringDamperExt(markerNumbers=[mG, m1], nodeNumber=nD, **kw))
F0, w = case.get("F0", 0.0), case.get("omega", 0.0)
if F0:
    mbs.AddLoad(LoadCoordinate(markerNumber=m1, load=0,
                               loadUserFunction=lambda mbs, t, load: F0 * np.sin(w * t)))
out = exu.OutputVariableType
sq = mbs.AddSensor(SensorObject(objectNumber=c, storeInternal=True,
                                outputVariableType=out.Displacement))
sd = mbs.AddSensor(SensorNode(nodeNumber=nD, storeInternal=True,
                              outputVariableType=out.Coordinates))
mbs.Assemble()
ss = exu.SimulationSettings()
h, T = case["h"], case["T"]
ss.timeIntegration.numberOfSteps = int(round(T / h))
ss.timeIntegration.endTime = T
ss.timeIntegration.verboseMode = 0
ss.timeIntegration.generalizedAlpha.spectralRadius = 1.0
ss.timeIntegration.discontinuous.maxIterations = 10
ss.solutionSettings.writeSolutionToFile = False
ss.solutionSettings.sensorsWritePeriod = h
mbs.SolveDynamic(ss)
q = mbs.GetSensorStoredData(sq); d = mbs.GetSensorStoredData(sd)
print(json.dumps({"t": q[:, 0].tolist(), "q": q[:, 1].tolist(), "mode": d[:, 1].tolist(),
                  "limit": d[:, 3].tolist(), "version": exu.__version__}))
'''

H = 1e-4
CASES = {
    "spring-damper": dict(mass=1.0, v0=1.0, T=2.0, params=dict(stiffness=400.0, damping=2.0)),
    "stribeck": dict(mass=1.0, v0=0.0, T=1.0, F0=5.0, omega=4 * np.pi,
                     params=dict(stiffness=50.0, f_dynamic_friction=2.0,
                                 f_static_friction_offset=1.0, exponential_decay_static=0.01,
                                 f_viscous_friction=0.5, friction_proportional_zone=1e-3)),
    "bristle": dict(mass=1.0, v0=0.0, T=1.0, F0=5.0, omega=4 * np.pi,
                    params=dict(stiffness=50.0, f_dynamic_friction=2.0,
                                f_static_friction_offset=1.0, sticking_stiffness=1e5,
                                sticking_damping=600.0, exponential_decay_static=0.01)),
    "limit stops": dict(mass=1.0, v0=1.0, T=1.0, use_limit_stops=True,
                        params=dict(stiffness=0.0, damping=0.1, limit_stops_upper=0.05,
                                    limit_stops_lower=-0.05, limit_stops_stiffness=1e5,
                                    limit_stops_damping=20.0)),
}
# beyond Exudyn: the exact Coulomb option, against Exudyn's bristle case
COULOMB = ("bristle", "coulomb")


def run_exudyn(case, path):
    env = dict(os.environ, PYTHONPATH=path)
    spec = {k: v for k, v in case.items()}
    spec["h"] = H
    out = subprocess.run([sys.executable, "-c", EXUDYN_CASE, json.dumps(spec)], env=env,
                         capture_output=True, text=True, cwd="/tmp", timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    d = json.loads(out.stdout.strip().splitlines()[-1])
    return {k: np.asarray(v) if k != "version" else v for k, v in d.items()}


def run_parsolve(case, friction="exudyn", h=H, **extra):
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("s", "s", friction=0.0)
    b = m.sphere((0, 0, 0), 0.05, "s", mass=case["mass"], velocity=(case["v0"], 0, 0))
    x = m.coordinate(b, (1, 0, 0))
    m.connector(None, x, use_limit_stops=case.get("use_limit_stops", False),
                friction=friction, **case["params"], **extra)
    if case.get("F0"):
        F0, w = case["F0"], case["omega"]
        m.connector(None, x, spring_force_user_function=lambda t, *a: -F0 * np.sin(w * t),
                    name="harmonic force")
    sim = Simulation(m, step=h, progress=0, quiet=True, verify_every=0,
                     solver=ps.GaussSeidel(tol=1e-12, max_iter=200))
    n = int(round(case["T"] / h))
    out = {"t": np.zeros(n + 1), "q": np.zeros(n + 1), "mode": np.zeros(n + 1),
           "limit": np.zeros(n + 1)}
    start = time.perf_counter()
    for k in range(1, n + 1):
        sim.step()
        g = sim.outputs("connectors")
        out["t"][k], out["q"][k] = sim.time, g["displacement"][0]
        out["mode"][k], out["limit"][k] = g["friction_mode"][0], g["limit_stop_state"][0]
    out["seconds"] = time.perf_counter() - start
    return out


def switches(t, state):
    """Times where a state turns from zero to non-zero or back: ("on"/"off", t)."""
    on = state != 0
    k = np.flatnonzero(on[1:] != on[:-1]) + 1
    return [("on" if on[i] else "off", float(t[i])) for i in k]


def reversals(t, q):
    """Times where the rate dq/dt changes sign (a stop's hit, a friction reversal)."""
    s = np.sign(np.round(np.diff(q), 15))
    nz = np.flatnonzero(s)
    k = nz[1:][s[nz[1:]] != s[nz[:-1]]]
    return [float(t[i]) for i in k]


def compare(name, ours, theirs, what="mode"):
    n = min(len(ours["q"]), len(theirs["q"]))
    dq = np.abs(ours["q"][:n] - theirs["q"][:n])
    a, b = switches(ours["t"], ours[what]), switches(theirs["t"], theirs[what])
    paired = [(x[1], y[1]) for x, y in zip(a, b) if x[0] == y[0]]
    ra, rb = reversals(ours["t"], ours["q"]), reversals(theirs["t"], theirs["q"])
    return {"case": name, "max_dq": float(dq.max()),
            "reversals": {"parsolve": [round(x, 5) for x in ra[:6]],
                          "exudyn": [round(x, 5) for x in rb[:6]]},
            "max_dq_relative": float(dq.max() / np.abs(theirs["q"][:n]).max()),
            "transitions": {"parsolve": len(a), "exudyn": len(b)},
            "first_times": {"parsolve": [round(x[1], 5) for x in a[:6]],
                            "exudyn": [round(x[1], 5) for x in b[:6]]},
            "max_transition_shift": (float(max(abs(x - y) for x, y in paired))
                                     if paired else None),
            "parsolve_seconds": ours.get("seconds")}


def analytic_spring(case, t):
    k, d, m, v0 = case["params"]["stiffness"], case["params"]["damping"], case["mass"], case["v0"]
    w0 = np.sqrt(k / m)
    z = d / (2 * np.sqrt(k * m))
    wd = w0 * np.sqrt(1 - z * z)
    return v0 * np.exp(-z * w0 * t) * np.sin(wd * t) / wd, v0 / wd


def stability():
    """A 1 kg mass on a spring, 1000 steps at k h^2 / m = s: energy ratio and max |q| / A."""
    rows = []
    for s in (0.1, 1.0, 10.0, 100.0, 1e4):
        k, h = 100.0, np.sqrt(s / 100.0)
        m = ps.Model(gravity=(0, 0, 0))
        m.surface("s", "s", friction=0.0)
        b = m.sphere((0, 0, 0), 0.05, "s", mass=1.0, velocity=(1.0, 0, 0))
        m.connector(None, m.coordinate(b), stiffness=k)
        sim = Simulation(m, step=h, progress=0, quiet=True, verify_every=0)
        E0 = 0.5
        for _ in range(1000):
            sim.step()
        g = sim.outputs("connectors")
        v = sim.owned.v[0, 0]
        E = 0.5 * v * v + 0.5 * k * g["displacement"][0] ** 2
        rows.append({"k_h2_over_m": s, "energy_ratio": float(E / E0)})
    return rows


def cost(n_pairs, steps=5):
    """Seconds per step for n_pairs spring-damper connectors (pairs of spheres) vs none."""
    out = {}
    for with_connectors in (False, True):
        m = ps.Model(gravity=(0, 0, 0))
        m.surface("s", "s", friction=0.0)
        side = int(np.ceil(np.sqrt(n_pairs)))
        i = np.arange(n_pairs)
        xa = np.stack([(i % side) * 1.0, (i // side) * 1.0, np.zeros(n_pairs)], axis=1)
        ida = m.spheres(xa, 0.1, "s", density=1000.0)
        idb = m.spheres(xa + (0.3, 0, 0), 0.1, "s", density=1000.0,
                        velocities=np.tile([0.1, 0.0, 0.0], (n_pairs, 1)))
        if with_connectors:
            for a, b in zip(ida, idb):
                m.connector(m.coordinate(int(a)), m.coordinate(int(b)), stiffness=1e3,
                            damping=1.0, f_dynamic_friction=0.1, sticking_stiffness=1e5,
                            sticking_damping=10.0)
        sim = Simulation(m, step=1e-4, progress=0, quiet=True, verify_every=0)
        sim.step()
        start = time.perf_counter()
        for _ in range(steps):
            sim.step()
        out["seconds_per_step_with_connectors" if with_connectors else
            "seconds_per_step_bodies_alone"] = (time.perf_counter() - start) / steps
    out["extra_seconds_per_connector_step"] = (out["seconds_per_step_with_connectors"] -
                                               out["seconds_per_step_bodies_alone"]) / n_pairs
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exudyn", default="/tmp/exu", help="where `pip install --target` put it")
    ap.add_argument("--quick", action="store_true", help="10^4 connectors, not 10^5")
    ap.add_argument("--skip-cost", action="store_true")
    args = ap.parse_args()
    table, result = [], {"h": H}
    for name, case in CASES.items():
        ours = run_parsolve(case)
        theirs = run_exudyn(case, args.exudyn)
        result["exudyn_version"] = theirs["version"]
        row = compare(name, ours, theirs, "limit" if case.get("use_limit_stops") else "mode")
        if name == "spring-damper":
            qa, amp = analytic_spring(case, ours["t"])
            row["parsolve_vs_analytic_relative"] = float(np.abs(ours["q"] - qa).max() / amp)
            qa, _ = analytic_spring(case, theirs["t"])
            row["exudyn_vs_analytic_relative"] = float(np.abs(theirs["q"] - qa).max() / amp)
        table.append(row)
        print(json.dumps(row), flush=True)
        if name == COULOMB[0]:
            exact = run_parsolve(case, friction="coulomb")
            row = compare("coulomb (exact, vs Exudyn's bristles)", exact, theirs)
            bri = compare("coulomb (exact) vs parsolve's bristles", exact, ours)
            row["vs_parsolve_bristle_max_dq"] = bri["max_dq"]
            table.append(row)
            print(json.dumps(row), flush=True)
        if name == "limit stops":                     # beyond Exudyn: rigid stops
            zeta = case["params"]["limit_stops_damping"] / (
                2 * np.sqrt(case["params"]["limit_stops_stiffness"] * case["mass"]))
            e = float(np.exp(-np.pi * zeta / np.sqrt(1 - zeta * zeta)))   # the soft stop's
            rigid = run_parsolve(case, limit_stops_model="rigid", limit_stops_restitution=e)
            row = compare(f"rigid stops (e = {e:.3f}, vs Exudyn's spring stops)", rigid,
                          theirs, "limit")
            table.append(row)
            print(json.dumps(row), flush=True)
    result["comparison"] = table
    result["stability"] = stability()
    print(json.dumps(result["stability"]), flush=True)
    if not args.skip_cost:
        n = 10 ** 4 if args.quick else 10 ** 5
        result["cost"] = {"connectors": n, **cost(n)}
        print(json.dumps(result["cost"]), flush=True)
    path = os.path.join(ROOT, "bench", "results", "connector.json")
    if args.skip_cost and os.path.exists(path):          # keep the cost measured before
        with open(path) as f:
            before = json.load(f)
        if "cost" in before:
            result["cost"] = before["cost"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
