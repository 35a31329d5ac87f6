"""The pours in the two DEM peers: LIGGGHTS 3.8 (Debian's `liggghts`, an input script) and
Yade 2023 (Debian's `yade`, a Python script run by `yade -x`), Hertz-Mindlin contacts with
the pour's Young's modulus, Poisson's ratio, friction and restitution, at the pour's DEM step
(a tenth of the smallest sphere's Rayleigh time). Both start from models.pour_spheres(), the
spheres parsolve starts from, and end with the same physics (models.pour_physics).

    liggghts(spec, ranks, workdir) / yade(spec, threads, workdir) -> the runner's record

seconds: LIGGGHTS' own "Loop time" (the run alone), Yade's O.run timed in its script;
cpu_seconds (per rank): LIGGGHTS' whole process (its set-up is a few hundredths of a second),
Yade's O.run.
"""
import json
import os
import re
import resource
import shutil
import subprocess
import textwrap

import numpy as np

from . import models as M

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def available(code):
    return shutil.which({"liggghts": "liggghts", "yade": "yade"}[code]) is not None


def dem_steps(spec):
    return int(round(spec["duration"] / spec["dem_step"]))


def _env():
    env = dict(os.environ)
    env.update(MPI_ENV)
    return env


# -- LIGGGHTS ---------------------------------------------------------------------------------

def liggghts_input(spec, data, dump):
    side, n = spec["side"], dem_steps(spec)
    walls = "\n".join(
        f"fix wall{k} all wall/gran model hertz tangential history primitive type 1 {p}"
        for k, p in enumerate(["zplane 0.0", "xplane 0.0", f"xplane {side}", "yplane 0.0",
                               f"yplane {side}"]))
    return textwrap.dedent(f"""\
        atom_style granular
        atom_modify map array
        boundary f f f
        newton off
        communicate single vel yes
        units si
        read_data {data}
        neighbor {spec['rmax']} bin
        neigh_modify delay 0
        fix m1 all property/global youngsModulus peratomtype {spec['young']}
        fix m2 all property/global poissonsRatio peratomtype {spec['poisson']}
        fix m3 all property/global coefficientRestitution peratomtypepair 1 {spec['restitution']}
        fix m4 all property/global coefficientFriction peratomtypepair 1 {spec['friction']}
        pair_style gran model hertz tangential history
        pair_coeff * *
        timestep {spec['dem_step']}
        fix gravity all gravity {M.G} vector 0.0 0.0 -1.0
        """) + walls + textwrap.dedent(f"""
        fix integrate all nve/sphere
        thermo {max(1, n // 10)}
        dump final all custom {n} {dump} id radius x y z
        run {n}
        """)


def write_data(path, spec, centres, radii, velocities):
    side, top = spec["side"], float(centres[:, 2].max()) + 0.1
    with open(path, "w") as f:
        f.write(f"pour\n\n{len(radii)} atoms\n1 atom types\n\n0 {side} xlo xhi\n"
                f"0 {side} ylo yhi\n{-spec['rmax']} {top} zlo zhi\n\nAtoms\n\n")
        for i, (c, r) in enumerate(zip(centres, radii)):
            f.write(f"{i + 1} 1 {2 * r!r} {spec['density']!r} {c[0]!r} {c[1]!r} {c[2]!r}\n")
        f.write("\nVelocities\n\n")
        for i, v in enumerate(velocities):
            f.write(f"{i + 1} {v[0]!r} {v[1]!r} {v[2]!r} 0 0 0\n")


def last_dump(path):
    """The last snapshot of a LIGGGHTS custom dump (id radius x y z): radii, centres."""
    text = open(path).read().split("ITEM: TIMESTEP")[-1]
    rows = text.split("ITEM: ATOMS")[1].strip().splitlines()[1:]
    a = np.array([[float(v) for v in line.split()] for line in rows])
    a = a[np.argsort(a[:, 0])]
    return a[:, 2:5], a[:, 1]


def liggghts(spec, ranks, workdir):
    os.makedirs(workdir, exist_ok=True)
    centres, radii, velocities = M.pour_spheres(spec)
    data, dump = os.path.join(workdir, "pour.data"), os.path.join(workdir, "final.dump")
    script = os.path.join(workdir, "in.pour")
    write_data(data, spec, centres, radii, velocities)
    with open(script, "w") as f:
        f.write(liggghts_input(spec, data, dump))
    cmd = ["liggghts", "-in", script, "-log", os.path.join(workdir, "log.liggghts"),
           "-nocite"]
    if ranks > 1:
        cmd = ["mpirun", "-n", str(ranks)] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=workdir, env=_env(), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / ranks
    if p.returncode:
        raise RuntimeError(f"liggghts failed ({p.returncode}): "
                           f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
    loop = re.findall(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps", p.stdout)
    seconds, procs, steps = float(loop[-1][0]), int(loop[-1][1]), int(loop[-1][2])
    x, r = last_dump(dump)
    return {"seconds": seconds, "cpu_seconds": cpu, "steps": steps,
            "simulated": steps * spec["dem_step"], "step": spec["dem_step"], "ranks": procs,
            "physics": M.pour_physics(spec, x, r)}


# -- Yade -------------------------------------------------------------------------------------

YADE_SCRIPT = """\
import json, math, time
spec = json.load(open({spec_path!r}))
data = json.load(open({data_path!r}))
O.materials.append(FrictMat(young=spec["young"], poisson=spec["poisson"],
                            frictionAngle=math.atan(spec["friction"]),
                            density=spec["density"], label="glass"))
side = spec["side"]
for position, axis in ((0.0, 2), (0.0, 0), (side, 0), (0.0, 1), (side, 1)):
    O.bodies.append(utils.wall(position, axis=axis, material="glass"))
ids = []
for c, r, v in zip(data["centres"], data["radii"], data["velocities"]):
    b = utils.sphere(c, r, material="glass")
    b.state.vel = Vector3(*v)
    ids.append(O.bodies.append(b))
O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Sphere_Aabb(), Bo1_Wall_Aabb()]),
    InteractionLoop([Ig2_Sphere_Sphere_ScGeom(), Ig2_Wall_Sphere_ScGeom()],
                    [Ip2_FrictMat_FrictMat_MindlinPhys(en=spec["restitution"],
                                                       es=spec["restitution"])],
                    [Law2_ScGeom_MindlinPhys_Mindlin()]),
    NewtonIntegrator(gravity=(0, 0, -{g!r}), damping=0.0),
]
O.dt = spec["dem_step"]
steps = int(round(spec["duration"] / spec["dem_step"]))
t0, c0 = time.perf_counter(), time.process_time()
O.run(steps, True)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
x = [list(O.bodies[i].state.pos) for i in ids]
r = [O.bodies[i].shape.radius for i in ids]
json.dump({{"seconds": seconds, "cpu_seconds": cpu, "steps": steps, "x": x, "r": r,
           "threads": O.numThreads, "version": version}}, open({out_path!r}, "w"))
"""


def yade(spec, threads, workdir):
    os.makedirs(workdir, exist_ok=True)
    centres, radii, velocities = M.pour_spheres(spec)
    paths = {k: os.path.join(workdir, f"{k}.json") for k in ("spec", "data", "out")}
    json.dump(spec, open(paths["spec"], "w"))
    json.dump({"centres": centres.tolist(), "radii": radii.tolist(),
               "velocities": velocities.tolist()}, open(paths["data"], "w"))
    script = os.path.join(workdir, "pour.py")
    with open(script, "w") as f:
        f.write(YADE_SCRIPT.format(spec_path=paths["spec"], data_path=paths["data"],
                                   out_path=paths["out"], g=M.G))
    p = subprocess.run(["yade", "-n", "-x", f"-j{threads}", script], cwd=workdir,
                       capture_output=True, text=True)
    if p.returncode or not os.path.exists(paths["out"]):
        raise RuntimeError(f"yade failed ({p.returncode}): {p.stdout[-2000:]}{p.stderr[-2000:]}")
    out = json.load(open(paths["out"]))
    return {"seconds": out["seconds"], "cpu_seconds": out["cpu_seconds"], "steps": out["steps"],
            "simulated": out["steps"] * spec["dem_step"], "step": spec["dem_step"],
            "ranks": 1, "threads": out["threads"], "version": out["version"],
            "physics": M.pour_physics(spec, np.array(out["x"]), np.array(out["r"]))}
