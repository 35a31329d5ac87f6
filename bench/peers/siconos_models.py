"""The peer bench's small models in Siconos 4.4 (Debian's python3-siconos): its kernel's
Moreau-Jean time stepping (theta = 0.5), as its own examples build them.

    python bench/peers/siconos_models.py MODEL [--quick]      (MODEL: ball, chain, spring)

- ball: the classic bouncing ball, a Lagrangian linear system (the height) with a linear
  relation (the gap) and Newton's impact law, an LCP per step;
- chain: Newton-Euler rigid spheres joined by KneeJointR (spherical joints), the top one to
  space, equality conditions in an MLCP per step (Siconos' Newton loop for the joints);
- spring: a Lagrangian linear system with stiffness and damping (no interaction).
Prints one JSON line: seconds (the stepping loop alone), steps, simulated, physics, version.
"""
import os
import sys
import time

import numpy as np

import siconos.kernel as sk

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from peers import models as M  # noqa: E402


def build(name, spec):
    """The model as (NonSmoothDynamicalSystem, OneStepNSProblem, what to sample)."""
    T = spec["duration"]
    nsds = sk.NonSmoothDynamicalSystem(0.0, T)
    if name == "ball":
        m, r = spec["mass"], spec["radius"]
        ball = sk.LagrangianLinearTIDS([spec["height"]], [0.0], [[m]])
        ball.setFExtPtr(np.array([-m * M.G]))
        relation = sk.LagrangianLinearTIR(np.array([[1.0]]), np.array([-r]))
        inter = sk.Interaction(sk.NewtonImpactNSL(spec["restitution"]), relation)
        nsds.insertDynamicalSystem(ball)
        nsds.link(inter, ball)
        return nsds, sk.LCP(), (ball, None)
    if name == "spring":
        x0 = spec["x0"]
        body = sk.LagrangianLinearTIDS([x0], [0.0], [[spec["mass"]]], [[spec["stiffness"]]],
                                       [[spec["damping"]]])
        nsds.insertDynamicalSystem(body)
        return nsds, sk.LCP(), (body, None)
    if name == "chain":
        import siconos.mechanics.joints as joints

        pivot, _, centres, points = M.chain_state(spec)
        m, r = spec["mass"], spec["radius"]
        inertia = np.eye(3) * 0.4 * m * r * r
        bodies = []
        for c in centres:
            ds = sk.NewtonEulerDS(np.concatenate([c, [1.0, 0, 0, 0]]), np.zeros(6), m, inertia)
            ds.setFExtPtr(np.array([0.0, 0.0, -m * M.G]))
            nsds.insertDynamicalSystem(ds)
            bodies.append(ds)
        top = None
        for i, ds in enumerate(bodies):
            if i == 0:
                j = joints.KneeJointR(np.array(pivot, float), True, ds)
            else:
                j = joints.KneeJointR(np.array(points[i], float), True, bodies[i - 1], ds)
            inter = sk.Interaction(sk.EqualityConditionNSL(j.numberOfConstraints()), j)
            if i == 0:
                nsds.link(inter, ds)
                top = inter
            else:
                nsds.link(inter, bodies[i - 1], ds)
        return nsds, sk.MLCP(), (bodies, top)
    raise KeyError(name)


def run(name, spec):
    nsds, osnspb, (what, top) = build(name, spec)
    h = spec["step"]
    nsteps = int(round(spec["duration"] / h))
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5), osnspb)
    t, sample, tension = [0.0], [], []

    def state():
        if name == "chain":
            return float(np.mean([ds.q()[0] for ds in what]))
        return float(what.q()[0])

    sample.append(state())
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(nsteps):
        sim.computeOneStep()
        t.append(sim.nextTime())
        sample.append(state())
        if top is not None:
            tension.append(float(np.linalg.norm(top.lambda_(1))) / h)    # an impulse
        sim.nextStep()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": seconds, "cpu_seconds": cpu, "steps": nsteps, "simulated": nsteps * h,
           "step": h}
    if name == "ball":
        out["physics"] = M.ball_physics(spec, t, sample)
    elif name == "spring":
        out["physics"] = M.spring_physics(spec, t, sample)
    else:
        out["physics"] = M.chain_physics(spec, t, sample, [tension[0]] + tension)
    return out


if __name__ == "__main__":
    M.worker_main(run)
