"""The FCLIB problems of the solver benches, exported from parsolve scenes and cached in
bench/problems/ (git-ignored).

The kernel benches (bench_fclib.py, bench_newton.py; KERNEL_BENCH), each with mu = 0.3, 0.8:

  column50   a column of 50 spheres on a floor (step 3): W block tridiagonal, the load
             must travel 50 contacts (Gauss-Seidel's slowest case);
  pile200    a random pile of 200 beads poured into a box, settled (step 600, t = 0.3 s);
  pile10k    the same with 10,000 beads (step 500, t = 0.25 s);
  bed200     pe's dense hexagonal close packing of 200 spheres, every neighbour touching,
  bed10k     gravity tilted 30 degrees (step 3): a crystal, so W is very rank deficient
             (6 contacts per sphere); the hardest case for every solver.

The solver suite (bench_suite.py; SUITE, 33 problems) adds, with mu from 0.3 to 0.8: pile1k
(1,000 poured beads), stack3x8 (three columns of eight boxes face to face: four or more corner
contacts per face, W rank deficient), column20box (20 boxes), wall (a brick wall of 12 rows
in running bond, 1,800 contacts), kapla (a log-cabin tower of 32 thin planks), boxpile (120
boxes of random orientation poured into a container), mixed (300 spheres and boxes poured),
and unsymmetric W: spinbox-*-gyro (spinning boxes) and mixed-*-gyro, whose W takes the
gyroscopic term implicitly (gyroscopic_delassus).

Public problems written by others (PUBLIC): Siconos' test problems in its text form
(numerics/src/FrictionContact/test/data/ of github.com/siconos/siconos, Apache 2.0: capsules,
a rock pile, Confeti, a rover's wheels, ...), read by parsolve.io.fclib.read as they are. They
are not in this repository: copy the files into bench/problems/public/; the suite takes the
ones it finds (available_public()).

    problems(names=None) -> {name: path}      (exports what is missing: pile10k takes minutes)
    python bench/fclib_problems.py [NAME ...] (lists them with their sizes)
    python bench/fclib_problems.py --check-public   (parsolve's reading of each public file
                                              against Siconos' own: W, q and mu equal)

Each entry also gives the sweep cap the Gauss-Seidel bench uses for it (CAPS).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parsolve as ps  # noqa: E402
import scenes  # noqa: E402
from parsolve.io import fclib  # noqa: E402
from parsolve.run import Simulation  # noqa: E402

CACHE = os.path.join(HERE, "problems")
PUBLIC_DIR = os.path.join(CACHE, "public")
# (check-NewtonAC-1contact and problem-checkTwoRods1 are left out: their W is larger than 3 x
# contacts, 39 x 39 for one contact and 54 x 54 for three, which fclib.read refuses)
PUBLIC = {f"siconos-{stem}": f"{stem}.dat" for stem in (
    "problem-check2", "FrictionContactProblem00071", "Confeti-ex03-Fc3D-SBM", "RockPile_tob1",
    "Capsules-i122-1617", "Rover1039", "Rover4516")}


def available_public():
    """The PUBLIC problems whose files are in bench/problems/public/."""
    return [name for name, f in PUBLIC.items() if os.path.exists(os.path.join(PUBLIC_DIR, f))]


def column(n, mu):
    m = ps.Model()
    m.surface("g", "g", friction=mu)
    m.half_space((0, 0, 0), (0, 0, 1), "g")
    m.spheres(np.array([[0.0, 0.0, 0.01 + 0.02 * k] for k in range(n)]), 0.01, "g",
              density=2500)
    return m, 1e-3


def bed(n, mu):
    return scenes.hcp_bed(n, mu=mu), 1e-5


def gs(tol, max_iter):
    return ps.GaussSeidel(tol=tol, max_iter=max_iter)


# kind: (scene, size, step exported, solver of the steps before it, sweep cap of the bench)
KINDS = {"column50": (column, 50, 3, gs(1e-8, 2000), 100_000),
         "pile200": (scenes.poured_pile, 200, 600, gs(1e-6, 500), 100_000),
         "pile1k": (scenes.poured_pile, 1000, 500, gs(1e-4, 200), 50_000),
         "pile10k": (scenes.poured_pile, 10_000, 500, gs(1e-4, 200), 20_000),
         "bed200": (bed, 200, 3, gs(1e-8, 2000), 20_000),
         "bed10k": (bed, 10_000, 3, gs(1e-8, 2000), 5_000),
         "stack3x8": (lambda n, mu: scenes.box_stacks(3, 8, mu), 24, 3, gs(1e-8, 2000),
                      50_000),
         "column20box": (lambda n, mu: scenes.box_stacks(1, 20, mu), 20, 3, gs(1e-8, 2000),
                         50_000),
         "wall": (lambda n, mu: scenes.brick_wall(12, 12, mu), 138, 3, gs(1e-8, 2000), 50_000),
         "kapla": (lambda n, mu: scenes.kapla_tower(16, mu), 32, 3, gs(1e-8, 2000), 50_000),
         "boxpile": (scenes.box_pile, 120, 500, gs(1e-4, 200), 50_000),
         "mixed": (scenes.mixed_pile, 300, 400, gs(1e-4, 200), 50_000),
         "spinbox": (lambda n, mu: scenes.box_pile(n, mu, spin=60.0), 120, 200, gs(1e-4, 200),
                     50_000)}
# name: (kind, mu, gyroscopic): the benches' problems; gyroscopic ones take W with the
# gyroscopic term implicit (unsymmetric W, see gyroscopic_delassus)
SCENES = {f"{kind}-mu{mu}": (kind, mu, False)
          for kind in ("column50", "pile200", "pile10k", "bed200", "bed10k") for mu in (0.3, 0.8)}
SUITE_KINDS = {"column50": (0.3, 0.8), "pile200": (0.3, 0.5, 0.8), "pile1k": (0.3, 0.5, 0.8),
               "pile10k": (0.3,), "bed200": (0.3, 0.5, 0.8), "stack3x8": (0.3, 0.5, 0.8),
               "column20box": (0.3, 0.5, 0.8), "wall": (0.3, 0.5, 0.8), "kapla": (0.3, 0.6, 0.8),
               "boxpile": (0.3, 0.5, 0.8), "mixed": (0.3, 0.6)}
SCENES.update({f"{kind}-mu{mu}": (kind, mu, False)
               for kind, mus in SUITE_KINDS.items() for mu in mus})
SCENES.update({f"spinbox-mu{mu}-gyro": ("spinbox", mu, True) for mu in (0.3, 0.6)})
SCENES.update({f"mixed-mu{mu}-gyro": ("mixed", mu, True) for mu in (0.3, 0.6)})
KERNEL_BENCH = [f"{kind}-mu{mu}" for kind in ("column50", "pile200", "pile10k", "bed200",
                                               "bed10k") for mu in (0.3, 0.8)]
# the suite of bench_suite.py: every kind but the 10k crystal bed and the second 10k pile
# (minutes per solver)
SUITE = [name for name, (kind, mu, _) in SCENES.items()
         if kind != "bed10k" and name != "pile10k-mu0.8"]
CAPS = {name: KINDS[kind][4] for name, (kind, _, _) in SCENES.items()}


def gyroscopic_delassus(ld, bodies, h):
    """W = H M~^-1 H^T with the gyroscopic term of the Euler equations linearised and taken
    implicitly: M~ = diag(m I, J + h (S(w) J - S(J w))), S(a) the cross-product matrix. J is
    symmetric, the gyroscopic part is not: W is unsymmetric (of relative size h |w|)."""
    from parsolve.assembly.operators import delassus, inverse_mass_HT

    J, w = bodies.inertia_world(), bodies.w
    Jw = np.einsum("nij,nj->ni", J, w)
    Mt = J + h * (np.einsum("nij,njk->nik", skew(w), J) - skew(Jw))
    K = inverse_mass_HT(ld.body, ld.H, 1.0 / bodies.mass, np.linalg.inv(Mt))
    return delassus(ld.con, ld.body, ld.H, K, ld._gid, ld.n)


def skew(a):
    """The cross-product matrices S(a) (n, 3, 3): S(a) b = a x b."""
    S = np.zeros((len(a), 3, 3))
    S[:, 0, 1], S[:, 0, 2], S[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    return S - np.swapaxes(S, 1, 2)


def export(name, path):
    """Run the scene of `name` and write the FCLIB problem of its exported step to path."""
    kind, mu, gyro = SCENES[name]
    make, size, step, solver, _ = KINDS[kind]
    model, h = make(size, mu)
    print(f"exporting {name}: step {step} of {size} bodies", flush=True)
    sim = Simulation(model, h, solver=solver, progress=0, quiet=True, verify_every=0)
    if gyro:
        def hook(s, ld):
            if s.step_count + 1 == step:
                assert len(s.owned) == ld.nbodies          # serial: the bodies of ld
                indptr, indices, blocks, diag = gyroscopic_delassus(ld, s.owned, h)
                fclib.write(path, fclib.LocalProblem(indptr, indices, blocks, diag, ld.B.copy(),
                                                     ld.mu.copy()),
                            title=f"step {step} of {name}", description="unsymmetric W "
                            "(implicit gyroscopic term)")
        sim.local_dynamics_hook = hook
    else:
        fclib.export_step(sim, path, step)
    sim.run(step * h)


def problems(names=None):
    """{name: FCLIB file} for `names` (default: all), exported when not cached yet."""
    os.makedirs(CACHE, exist_ok=True)
    out = {}
    for name in names or SCENES:
        if name in PUBLIC:
            out[name] = os.path.join(PUBLIC_DIR, PUBLIC[name])
            if not os.path.exists(out[name]):
                raise SystemExit(f"{name}: copy {PUBLIC[name]} from Siconos' numerics/src/"
                                 f"FrictionContact/test/data/ into {PUBLIC_DIR}")
            continue
        if name not in SCENES:
            raise SystemExit(f"unknown problem {name!r}: {', '.join(SCENES)}, "
                             f"{', '.join(PUBLIC)}")
        path = os.path.join(CACHE, f"{name}.h5")
        if not os.path.exists(path):
            export(name, path + ".tmp")
            os.replace(path + ".tmp", path)
        out[name] = path
    return out


def check_public():
    """Each public file read by parsolve and by Siconos (frictionContact_new_from_filename):
    the largest difference of W, q and mu (0 when equal)."""
    import siconos.numerics as sn

    for name in available_public():
        path = os.path.join(PUBLIC_DIR, PUBLIC[name])
        p, s = fclib.read(path), sn.frictionContact_new_from_filename(path)
        m = 3 * p.n
        Ws = np.array([[sn.NM_get_value(s.M, i, j) for j in range(m)] for i in range(m)])
        d = max(np.abs(p.dense() - Ws).max(), np.abs(p.q.reshape(-1) - s.q).max(),
                np.abs(p.mu - s.mu).max())
        print(f"{name:36s} {p.n:6d} contacts  max |parsolve - Siconos| = {d:.1e}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--check-public"]:
        sys.exit(check_public())
    for name, path in problems(sys.argv[1:] or None).items():
        p = fclib.read(path)
        print(f"{name:16s} {p.n:7d} contacts {len(p.blocks):9d} blocks  {path}")
