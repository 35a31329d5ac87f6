"""The sweeps a granular step needs: Gauss-Seidel's stop and relaxation options on a pour.

    python bench/bench_sweeps.py [--spheres 500] [--steps 600] [--cap 1000] [--stiffness K]
        [--settings default,adapt,adapt15,change,check5,hybrid-ipm,hybrid-ipm-w100,
                    springs,springs-adapt15]

The peer bench's pour (bench/peers/models.py, "pour2k": glass spheres rained from a jittered
lattice into a 50 mm box, mu = 0.4, e = 0.2) with `--spheres` spheres, for `--steps` steps
of h = 5e-4 s (600: the bed has formed and settles), Gauss-Seidel to 1e-4 with a cap of
`--cap` sweeps, once per setting:

    default  omega 1.5 (the pour's own setting), the residual checked every sweep
    adapt    omega 1.3, backed off towards 1 after 20 sweeps without progress (adapt=20)
    adapt15  omega 1.5 with adapt=20
    change   omega 1.5, stop="change" (LMGC90's Quad criterion at the same tol)
    check5   omega 1.5, the residual checked every 5 sweeps (check=5)
    hybrid-ipm  not Gauss-Seidel alone: the Hybrid, interior-point stages where Gauss-Seidel
             stalls (its sweep cap --cap; "mean sweeps" counts its iterations of both kinds)
    hybrid-ipm-w100  the same, a stall judged over 100 sweeps (window=100), not 10
    springs  not rigid contacts: the DEM codes' glass as compliant ones (the spec's
             stiffness, laws/coulomb.py), omega 1.5
    springs-adapt15  the same with adapt=20 (the peer bench's setting)
(--stiffness: the springs' k [N/m] instead of the spec's, the Hertz secant of the glass)

One JSON record per setting, appended to bench/results/sweeps.json: mean sweeps a step, the
steps that ended at the cap above the tolerance (and the stages of the first 20 unconverged
solves: the Hybrid's), the steps whose residual ends above tol
(with stop="change" the true residual can be above tol where the change is within it), wall
seconds, the bed at the end (bench/peers/models.pour_physics: bed height, packing,
centre of mass height) and the deepest overlap of a contact there.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parsolve as ps  # noqa: E402
from common import metadata, write  # noqa: E402
from parsolve.solvers.gauss_seidel import LOCAL_SOLVERS, NCODES  # noqa: E402
from peers import models as M  # noqa: E402
from peers.parsolve_models import build  # noqa: E402

SETTINGS = {
    "default": dict(omega=1.5),
    "adapt": dict(omega=1.3, adapt=20),
    "adapt15": dict(omega=1.5, adapt=20),
    "change": dict(omega=1.5, stop="change"),
    "check5": dict(omega=1.5, check=5),
    # not Gauss-Seidel alone: the Hybrid, its stages the interior point where Gauss-Seidel
    # stalls (parsolve.solvers.hybrid)
    "hybrid-ipm": dict(solver="hybrid", stage="ipm"),
    # the same, Gauss-Seidel's stall judged over 100 sweeps instead of 10
    "hybrid-ipm-w100": dict(solver="hybrid", stage="ipm", window=100),
    # not rigid contacts: compliant ones, the DEM codes' glass (the peer bench's pour)
    "springs": dict(omega=1.5, contacts="springs"),
    "springs-adapt15": dict(omega=1.5, adapt=20, contacts="springs"),
}


def run(setting, spheres, steps, cap, stiffness=None):
    spec = dict(M.MODELS["pour2k"], spheres=spheres)
    if stiffness is not None:
        spec["stiffness"] = stiffness
    options = dict(SETTINGS[setting])
    kind = options.pop("solver", "gs")
    contacts = options.pop("contacts", "rigid")
    solver = (ps.Hybrid if kind == "hybrid" else ps.GaussSeidel)(tol=spec["tol"], max_iter=cap,
                                                                 **options)
    sim = ps.Simulation(build("pour2k", spec, contacts), step=spec["step"], solver=solver,
                        quiet=True, progress=1e9, verify_every=0)
    reports, last = [], {}
    orig = solver.solve
    solver.solve = lambda problem, R: (last.update(problem=problem, R=R.copy()),
                                       reports.append(orig(problem, R)))[1] or reports[-1]
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step()
    seconds = time.perf_counter() - t0
    b = sim.bodies
    own = slice(0, b.n_owned)
    sweeps = np.array([r.iterations for r in reports])
    residual = np.array([r.residual for r in reports])
    return {"bench": "sweeps", "setting": setting, "options": SETTINGS[setting],
            "spheres": spheres, "steps": steps, "step": spec["step"], "tol": spec["tol"],
            "stiffness": spec["stiffness"] if contacts == "springs" else 0.0,
            "cap": cap, "solves": len(reports),
            "mean_sweeps": float(sweeps.mean()) if len(sweeps) else 0.0,
            "max_sweeps": int(sweeps.max()) if len(sweeps) else 0,
            "capped": int(((sweeps >= cap) & (residual > spec["tol"])).sum()),
            "unconverged": int(sum(not r.converged for r in reports)),
            # how the unconverged steps' solves went: (step, residual, stages), the first 20
            "unconverged_stages": [(k + 1, r.residual, [list(s) for s in r.stages])
                                   for k, r in enumerate(reports) if not r.converged][:20],
            "above_tol": int((residual > spec["tol"]).sum()),
            "max_residual": float(residual.max()) if len(residual) else 0.0,
            "seconds": seconds, "solve_seconds": float(sum(r.seconds for r in reports)),
            "physics": M.pour_physics(spec, b.x[own], b.radius[own]),
            # the deepest overlap of a contact at the end (met at detection, or a spring's)
            "max_overlap": float(max(0.0, -sim.contacts.gap.min(initial=0.0))),
            "costs": costs(last["problem"], last["R"]),
            "load_average": os.getloadavg()[0], **metadata()}


def costs(problem, R, repeats=20):
    """Microseconds of one sweep, one residual and one change measure on the last step's
    problem from its warm start (the median of `repeats`), and its rows."""
    counts, auto = np.zeros(NCODES, np.int64), LOCAL_SOLVERS.index("auto")

    def median(f):
        t = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
        return 1e6 * float(np.median(t))

    problem.sync(R)
    R0 = R.copy()
    return {"rows": int(problem.n),
            "residual_us": median(lambda: problem.residual(R)),
            "change_us": median(lambda: problem.change(R0, R)),
            "sweep_us": median(lambda: problem.sweep(R, counts, 1.0, auto))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=500)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--cap", type=int, default=1000)
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--stiffness", type=float, default=None)
    args = ap.parse_args()
    for setting in args.settings.split(","):
        write("sweeps", run(setting, args.spheres, args.steps, args.cap, args.stiffness))


if __name__ == "__main__":
    main()
