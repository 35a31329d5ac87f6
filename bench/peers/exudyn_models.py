"""The peer bench's small models in Exudyn (PyPI `exudyn`; the bench's own install, not the
project's): rigid bodies and mass points, generalized-alpha (its default implicit solver).

    python bench/peers/exudyn_models.py MODEL [--quick]      (MODEL: ball, chain, spring)

- ball: a rigid sphere and a ground quad, Exudyn's penalty sphere-quad contact with its
  Gonthier impact model at the model's restitution (a penalty contact needs its own step and
  stiffness: models.MODELS["ball"]["penalty_*"]);
- chain: rigid spheres joined by spherical joints (index 3, as Exudyn's default);
- spring: a mass point on a spring-damper to the ground.
Prints one JSON line: seconds (SolveDynamic alone), steps, simulated, physics, version.
"""
import os
import sys
import time

import numpy as np

import exudyn as exu
from exudyn.itemInterface import SensorBody, SensorObject
from exudyn.utilities import InertiaSphere

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from peers import models as M  # noqa: E402

OUT = exu.OutputVariableType


def build(name, spec):
    """The model in a new MainSystem; returns (system container, mbs, sensors, step)."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround(referencePosition=[0, 0, 0])
    sensors = {}
    if name == "ball":
        r, m = spec["radius"], spec["mass"]
        b = mbs.CreateRigidBody(inertia=InertiaSphere(m, r), gravity=[0, 0, -M.G],
                                referencePosition=[0, 0, spec["height"]])
        L = 10 * r
        mbs.CreateSphereQuadContact(
            itemNumbers=[b, ground], sphereRadius=r,
            quadPoints=np.array([[-L, -L, 0], [L, -L, 0], [L, L, 0], [-L, L, 0]], float),
            contactStiffness=spec["penalty_stiffness"], contactDamping=0.0,
            restitutionCoefficient=spec["restitution"], impactModel=2,
            dynamicFriction=spec["friction"])
        sensors["z"] = mbs.AddSensor(SensorBody(bodyNumber=b, storeInternal=True,
                                                outputVariableType=OUT.Position))
        return SC, mbs, sensors, spec["penalty_step"]
    if name == "spring":
        p = mbs.CreateMassPoint(referencePosition=[spec["x0"], 0, 0], mass=spec["mass"])
        mbs.CreateSpringDamper(itemNumbers=[ground, p], localPosition0=[-spec["rest"], 0, 0],
                               referenceLength=spec["rest"], stiffness=spec["stiffness"],
                               damping=spec["damping"])
        sensors["x"] = mbs.AddSensor(SensorBody(bodyNumber=p, storeInternal=True,
                                                outputVariableType=OUT.Position))
        return SC, mbs, sensors, spec["step"]
    if name == "chain":
        pivot, _, centres, joints = M.chain_state(spec)
        bodies = [mbs.CreateRigidBody(inertia=InertiaSphere(spec["mass"], spec["radius"]),
                                      referencePosition=list(c), gravity=[0, 0, -M.G])
                  for c in centres]
        top = mbs.CreateSphericalJoint(itemNumbers=[ground, bodies[0]], position=list(pivot))
        for i in range(1, len(bodies)):
            mbs.CreateSphericalJoint(itemNumbers=[bodies[i - 1], bodies[i]],
                                     position=list(joints[i]))
        sensors["x"] = [mbs.AddSensor(SensorBody(bodyNumber=b, storeInternal=True,
                                                 outputVariableType=OUT.Position))
                        for b in bodies]
        sensors["force"] = mbs.AddSensor(SensorObject(objectNumber=top, storeInternal=True,
                                                      outputVariableType=OUT.Force))
        return SC, mbs, sensors, spec["step"]
    raise KeyError(name)


def run(name, spec):
    SC, mbs, sensors, h = build(name, spec)
    mbs.Assemble()
    nsteps = int(round(spec["duration"] / h))
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = nsteps
    ss.timeIntegration.endTime = nsteps * h
    ss.timeIntegration.verboseMode = 0
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = h
    ss.show.computationTime = False
    ss.show.statistics = False
    t0, c0 = time.perf_counter(), time.process_time()
    mbs.SolveDynamic(ss)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": seconds, "cpu_seconds": cpu, "steps": nsteps, "simulated": nsteps * h,
           "step": h, "version": exu.__version__}
    if name == "ball":
        d = mbs.GetSensorStoredData(sensors["z"])
        out["physics"] = M.ball_physics(spec, d[:, 0], d[:, 3])
    elif name == "spring":
        d = mbs.GetSensorStoredData(sensors["x"])
        out["physics"] = M.spring_physics(spec, d[:, 0], d[:, 1])
    else:
        xs = [mbs.GetSensorStoredData(s) for s in sensors["x"]]
        t = xs[0][:, 0]
        xcom = np.mean([x[:, 1] for x in xs], axis=0)
        f = mbs.GetSensorStoredData(sensors["force"])
        out["physics"] = M.chain_physics(spec, t, xcom, np.linalg.norm(f[:, 1:4], axis=1))
    return out


if __name__ == "__main__":
    M.worker_main(run)
