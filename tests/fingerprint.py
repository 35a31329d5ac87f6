"""The trajectory fingerprint: a few short runs whose every bit is recorded, so that a change
of the house (not of the physics) can be shown to leave trajectories, iterations and residuals
exactly as they were, at any number of ranks.

`python tests/fingerprint.py` (or under mpirun) prints the fingerprint; `--write` stores it in
tests/data/fingerprint.json, which tests/test_fingerprint.py and tests/mpi/test_fingerprint.py
compare against. Rewrite it only with a change that is meant to alter trajectories, and say so.
"""
import hashlib
import json
import os
import sys

import numpy as np

import parsolve as ps
from parsolve.parallel import Comm
from parsolve.run import Simulation

STORED = os.path.join(os.path.dirname(__file__), "data", "fingerprint.json")
STATE = ("x", "q", "v", "w")


def _spheres(seed=3, n=90):
    """Spheres of several radii thrown with spin into a closed box (rolling, sliding, impacts
    with restitution, walls and sphere-sphere contacts)."""
    rng = np.random.default_rng(seed)
    m = ps.Model(gravity=(0.5, 0.0, -9.81))
    m.surface("g", "g", friction=0.4, restitution=0.2)
    m.surface("g", "w", friction=0.6, restitution=0.0)
    m.box_walls((0, 0, 0), (0.4, 0.1, 0.5), "w", top=True)
    k = np.arange(n)
    x = np.stack([0.012 + 0.025 * (k % 15), 0.012 + 0.025 * ((k // 15) % 4),
                  0.012 + 0.022 * (k // 60)], axis=1)
    m.spheres(x, rng.uniform(0.008, 0.011, n), "g", density=1000,
              velocities=rng.normal(0, 0.3, (n, 3)),
              angular_velocities=rng.normal(0, 5.0, (n, 3)))
    return m


def _boxes():
    """Boxes stacked and tilted on a floor with a few spheres: box-box, box-plane and
    sphere-box contacts, rotations."""
    m = ps.Model()
    m.surface("b", "b", friction=0.5)
    m.surface("b", "f", friction=0.7)
    m.half_space((0, 0, 0), (0, 0, 1), "f")
    for i in range(6):
        for j in range(3):
            m.box((0.25 * i, 0.0, 0.05 + 0.1 * j + 0.002 * i), (0.1, 0.06, 0.05), "b",
                  density=500, orientation=((0, 0, 1), 0.05 * (i - j)),
                  velocity=(0.1 * (j - 1), 0.02 * i, 0.0))
    m.spheres([(0.25 * i + 0.03, 0.01, 0.4) for i in range(6)], 0.04, "b", density=800)
    return m



def _mechanism():
    """A chain of spheres on fixed points swinging from a pivot, held by a rigid link to a
    point of space and pulled by a spring, beside a sphere on a fixed direction and one
    driven at a prescribed velocity into the chain: every joint type, with contacts."""
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("s", "s", friction=0.3)
    x = [(0.04 * i, 0.0, 0.5) for i in range(6)]
    ids = m.spheres(x, 0.02, "s", density=2000)
    m.fix_point(int(ids[0]), (-0.02, 0.0, 0.5))
    for i in range(1, 6):
        m.fix_point(int(ids[i - 1]), (0.04 * i - 0.02, 0.0, 0.5), other=int(ids[i]))
    m.rigid_link(int(ids[5]), x[5], None, (0.3, 0.0, 0.62))
    m.spring(int(ids[3]), x[3], None, (0.12, 0.1, 0.6), force=lambda d, v: -40.0 * d - 0.2 * v)
    a = m.sphere((0.1, 0.0, 0.4), 0.02, "s", density=2000)
    m.fix_direction(a, (0.1, 0.0, 0.4), (0.0, 1.0, 0.0))
    b = m.sphere((0.3, 0.0, 0.3), 0.02, "s", density=2000)
    m.prescribe(b, (0.3, 0.0, 0.3), (-0.6, 0.0, 0.8), velocity=([0.0, 0.1], [0.0, 1.5]))
    return m


CASES = {
    "spheres_gs": (_spheres, 0.002, 40, lambda: ps.GaussSeidel(tol=1e-9, max_iter=300)),
    "boxes_gs": (_boxes, 0.005, 30, lambda: ps.GaussSeidel(tol=1e-9, max_iter=300)),
    "spheres_newton": (_spheres, 0.002, 8, lambda: ps.SemismoothNewton(tol=1e-9)),
    "joints_gs": (_mechanism, 0.002, 40, lambda: ps.GaussSeidel(tol=1e-8, max_iter=400)),
    "joints_newton": (_mechanism, 0.002, 30, lambda: ps.SemismoothNewton(tol=1e-10)),
}


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


def run_case(name, comm):
    make, step, steps, solver = CASES[name]
    sim = Simulation(make(), step=step, solver=solver(), progress=0, quiet=True, comm=comm,
                     verify_every=0)
    rows = [sim.step() for _ in range(steps)]
    o = sim.owned
    n = o.n_owned
    parts = comm.gather_rows({"gid": o.gid[:n], **{f: getattr(o, f)[:n] for f in STATE}})
    c = sim.contacts
    keys = comm.gather_rows({"k1": c.k1, "k2": c.k2, "R": c.R})
    out = None
    if comm.root:
        order = np.argsort(parts["gid"])
        korder = np.lexsort((keys["k2"], keys["k1"]))
        out = {
            "state": _digest([parts[f][order] for f in STATE]),
            "reactions": _digest([keys["k1"][korder], keys["k2"][korder], keys["R"][korder]]),
            "contacts": [int(r["contacts"]) for r in rows],
            "iterations": [int(r["iterations"]) for r in rows],
            "residuals": [float(r["residual"]).hex() for r in rows],
            "x_sum": float(np.sum(parts["x"][order])).hex(),
        }
    return comm.bcast(out)


def fingerprint(comm=None):
    comm = comm or Comm()
    return {name: run_case(name, comm) for name in CASES}


def stored():
    with open(STORED) as f:
        return json.load(f)


def expected(size):
    """The stored fingerprint for `size` ranks: one for every rank count (Newton's linear
    algebra is rank 0's in the rows' canonical order, parsolve.solvers.linear.Workspace);
    a case recorded per rank count would override it."""
    data = stored()
    out = dict(data["any"])
    out.update(data.get(str(size), {}))
    return out


if __name__ == "__main__":
    comm = Comm()
    fp = fingerprint(comm)
    if comm.root:
        text = json.dumps(fp, indent=1)
        if "--write" in sys.argv:          # every case under "any": rank-independent
            data = {"any": fp}
            with open(STORED, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.write("\n")
        print(text)
