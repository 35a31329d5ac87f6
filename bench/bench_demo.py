"""Time per step and the phase split of the demo (examples/pour.py's scene).

    python bench/bench_demo.py [--spheres 400] [--duration 0.5] [-- pour.py options]

Writes bench/results/demo.json: seconds per step, per 1000 particles, particle updates per
second (PUpS = particles x steps / time) and the seconds of each phase.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=400)
    ap.add_argument("--duration", type=float, default=0.5)
    args = ap.parse_args()
    import h5py

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "pour.h5")
        subprocess.run([sys.executable, "-m", "parsolve.cli", "run",
                        os.path.join(ROOT, "examples/pour.py"), "--output", out, "--",
                        "--spheres", str(args.spheres), "--duration", str(args.duration)],
                       check=True, cwd=d)
        with h5py.File(out) as f:
            s = {k[8:]: v.item() if hasattr(v, "item") else v
                 for k, v in f.attrs.items() if k.startswith("summary_")}
            contacts = f["history/contacts"][()]
    steps, wall = s["steps"], s["wall_seconds"]
    phases = {k[8:]: v for k, v in s.items() if k.startswith("seconds_")}
    rec = common.metadata(
        problem="pour", bodies=s["bodies"], steps=steps, wall_seconds=wall,
        seconds_per_step=wall / steps,
        seconds_per_step_per_1000_particles=wall / steps / (s["bodies"] / 1000),
        particle_updates_per_second=s["bodies"] * steps / wall,
        contacts_mean=float(contacts.mean()), contacts_max=int(contacts.max()),
        iterations_total=s["iterations"], unconverged_steps=s["unconverged_steps"],
        phase_seconds=phases, phase_fraction={k: v / wall for k, v in phases.items()})
    common.write("demo", rec)


if __name__ == "__main__":
    main()
