"""The cam-follower of Siconos' notes (a valve train): a follower of mass m on a spring k,
guided along z, kept above a cam turning at `rpm`; Newton's impact law on the velocity
relative to the cam, v+ = (1 + e) c' - e v- (the notes' eqs. 11.1-11.2).

The cam's lift profile and the parameters are those of Siconos' CamFollower example: a dwell
on the base circle, a rise on circular arcs, a dwell on top, mirrored back; m = 1.221 kg,
k = 1430.8 N/m, no damping, e = 0.8, 358 rpm, the follower starting 0.4 m above the cam at
0.4 m/s (the notes' u_hat(0), v_hat(0)), no gravity. The follower is a box on a guide
(`Model.guide`, free along z) with a spring joint to a point of space, the cam a moving
half-space (`Model.cam`): a rheonomic constraint u >= c(t).

    parsolve run examples/cam_follower.py -- --duration 1 --step 1e-4
    parsolve plot out/cam_follower.h5          # and out/cam_follower.png

Writes the follower's position and velocity and the cam's lift (/sensors/follower), the
follower-cam contact (/sensors/contact) and every impact (/impacts: time, impulse, pre- and
post-impact velocities, the cam's velocity) to the results file, and a plot of follower and
cam against time.
"""
import argparse
import math

import numpy as np

import parsolve as ps

MASS, STIFFNESS, DAMPING, E, RPM = 1.221, 1430.8, 0.0, 0.8, 358.0
U0, V0 = 0.4, 0.4                      # above the cam, relative velocity
HALF = 0.02                            # the follower box's half height [m]
# the profile (Siconos' CamFollower): base radius, arcs' centres k and radii rho, ends beta
RB, K1, RHO1, K2, RHO2, RHO3 = 0.40, 0.45, 0.85, 0.40393320723821, 0.55393320723821, 0.15
B2, B3, OFFSET = 1.050328174371336, 1.22173047639603, 0.3


def _half_turn(b):
    """(lift, dlift/dbeta) for beta in [0, pi] (the profile is mirrored about pi)."""
    if b <= math.pi / 2:
        return RB, 0.0
    if b <= math.pi / 2 + B2:
        s, c = math.sin(b), math.cos(b)
        root = math.sqrt(1.0 - (c * K1 / RHO1) ** 2)
        return -K1 * s + RHO1 * root, -K1 * c + K1 * K1 * s * c / (RHO1 * root)
    if b <= math.pi / 2 + B3:
        s, c = math.sin(b + math.pi / 9), math.cos(b + math.pi / 9)
        root = math.sqrt(1.0 - (s * K2 / RHO3) ** 2)
        return -K2 * c + RHO3 * root, K2 * s - K2 * K2 * s * c / (RHO3 * root)
    return RHO2, 0.0


def lift(theta):
    """The follower's lift c(theta) [m] over one turn of the cam (minus Siconos' 0.3)."""
    b = theta % (2 * math.pi)
    return _half_turn(b if b <= math.pi else 2 * math.pi - b)[0] - OFFSET


def slope(theta):
    """dc/dtheta [m/rad]."""
    b = theta % (2 * math.pi)
    return _half_turn(b)[1] if b <= math.pi else -_half_turn(2 * math.pi - b)[1]


def build(rpm=RPM):
    """The model, and the cam's motion as (c(t), c'(t)) callables."""
    omega, phase = 2 * math.pi * rpm / 60.0, math.pi / 2
    cam_at = lambda t: lift(omega * t + phase)                      # noqa: E731
    cam_rate = lambda t: slope(omega * t + phase) * omega           # noqa: E731
    m = ps.Model(gravity=(0.0, 0.0, 0.0))
    m.surface("steel", "steel", friction=0.0, restitution=E)
    m.cam((0, 0, 0), (0, 0, 1), lift, omega, "steel", phase=phase, slope=slope, name="cam")
    u0 = cam_at(0.0) + U0
    f = m.box((0, 0, u0 + HALF), (0.05, 0.05, HALF), "steel", mass=MASS,
              velocity=(0, 0, V0 + cam_rate(0.0)), id=0)
    m.guide(f, (0, 0, u0 + HALF), span=0.02, free=("z",), name="guide")
    # the valve spring: -k u - c u', u the follower's lift (zero at z = 0), from a point below
    m.spring(f, (0, 0, u0), None, (0, 0, -1.0),
             lambda d, v: -STIFFNESS * (d + u0) - DAMPING * v, name="spring")
    m.sensor("follower", bodies=[f], every=1, quantities={
        "u": lambda s: s["x"][:, 2] - HALF, "v": lambda s: s["v"][:, 2],
        "cam": lambda s: cam_at(s["t"]), "cam_velocity": lambda s: cam_rate(s["t"])})
    m.sensor("contact", pairs=[(f, "cam")], every=1)
    return m, cam_at, cam_rate


def impacts(t, v, cam_rate, force, step):
    """Every impact from the sampled follower velocity v and contact force (one sample per
    step from t = step): a step whose contact pushes (impulse > 0) while the follower
    approached the cam at its start. Returns a dict of arrays: time (the step's end),
    impulse [N s], v_pre, v_post, cam_pre, cam_post (the cam's velocity at the step's ends)."""
    t = np.asarray(t)
    v_all = np.concatenate([[V0 + cam_rate(0.0)], v])
    t_all = np.concatenate([[0.0], t])
    impulse = np.asarray(force) * step
    rel_pre = v_all[:-1] - np.array([cam_rate(s) for s in t_all[:-1]])
    k = np.flatnonzero((impulse > 0) & (rel_pre < 0))
    return {"time": t[k], "impulse": impulse[k], "v_pre": v_all[k], "v_post": v_all[k + 1],
            "cam_pre": np.array([cam_rate(s) for s in t_all[k]]),
            "cam_post": np.array([cam_rate(s) for s in t[k]])}


def postprocess(path, cam_rate, step, picture=None):
    """Rank 0: /impacts into the results file, and the plot of follower and cam."""
    import h5py

    with h5py.File(path, "r+") as f:
        t = f["sensors/follower/time"][()]
        v = f["sensors/follower/v"][()][:, 0, 0]
        force = f["sensors/contact/force"][()][:, 0, 2]
        found = impacts(t, v, cam_rate, force, step)
        if "impacts" in f:
            del f["impacts"]
        g = f.create_group("impacts")
        for name, values in found.items():
            g.create_dataset(name, data=values)
        g.attrs["law"] = "v_post - cam_post = -e (v_pre - cam_pre), e = %g" % E
        u = f["sensors/follower/u"][()][:, 0, 0]
        cam = f["sensors/follower/cam"][()][:, 0, 0]
    if picture:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.plot(t, cam, label="cam lift c(t)")
        ax.plot(t, u, label="follower u(t)")
        ax.plot(found["time"], np.interp(found["time"], t, u), ".", ms=3, label="impacts")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("[m]")
        ax.legend(loc="upper right")
        fig.tight_layout()
        fig.savefig(picture, dpi=120)
    return found


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--rpm", type=float, default=RPM)
    ap.add_argument("--output", default="out/cam_follower.h5")
    args = ap.parse_args()
    model, cam_at, cam_rate = build(args.rpm)
    model.run(args.duration, args.step, output=args.output,
              solver=ps.GaussSeidel(tol=1e-12, max_iter=200))
    import os

    from mpi4py import MPI

    from parsolve.run.simulation import COMMAND_LINE

    path = COMMAND_LINE.over("output", args.output)       # `parsolve run --output` wins
    if MPI.COMM_WORLD.Get_rank() == 0 and path:
        if os.path.exists(path):
            found = postprocess(path, cam_rate, args.step, os.path.splitext(path)[0] + ".png")
            print(f"{len(found['time'])} impacts; first at t = "
                  f"{found['time'][0] if len(found['time']) else float('nan'):.5f} s")
