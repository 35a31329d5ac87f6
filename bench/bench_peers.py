"""parsolve against the codes a new user would weigh it against, on five models (issue 34):
a ball bouncing on a floor, a 10-link chain of spheres on spherical joints, a body on a
spring-damper (microseconds per step), 2,000 spheres poured into a box and the first 0.05 s
of 20,000 (wall seconds per simulated second, 1 and 2 ranks).

    python bench/bench_peers.py [--quick] [--models ball,chain,spring,pour2k,pour20k]
                                [--peers parsolve,siconos,exudyn,liggghts,yade]
                                [--repeats 3] [--ranks 1,2] [--rev COMMIT] [--table-only]

The models are defined once, in words and numbers, in bench/peers/models.py; each code builds
them from there (bench/peers/: parsolve_models.py, siconos_models.py, exudyn_models.py,
dem.py for LIGGGHTS and Yade). Every run is its own process, and the codes' runs alternate
(parsolve, peer, ..., parsolve, peer, ...) `--repeats` times: the table gives the best and
the spread, and the physics each code got (restitution, the chain's swing and tension, the
spring's error against the analytic solution, the pour's bed height and packing fraction).
A peer that is not installed is skipped with a line saying so: Siconos, LIGGGHTS and Yade
are Debian's (`apt-get install python3-siconos liggghts yade`), Exudyn is PyPI's
(`pip install exudyn` into the environment that runs the bench). One JSON record per run in
bench/results/peers.json (common.write), with the commit, host, ranks and every peer's
version; --quick runs each model briefly (a smoke test, records marked "quick").
"""
import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
from peers import dem  # noqa: E402
from peers import models as M  # noqa: E402

CODES = {        # model: the codes that run it, each (code, variant)
    "ball": [("parsolve", "gs"), ("siconos", ""), ("exudyn", "")],
    "chain": [("parsolve", "gs"), ("parsolve", "newton"), ("siconos", ""), ("exudyn", "")],
    "spring": [("parsolve", "gs"), ("siconos", ""), ("exudyn", "")],
    # parsolve's pours: contacts as the DEM codes' glass, compliant ("springs"); "--rigid"
    # runs them on rigid contacts instead
    "pour2k": [("parsolve", "springs"), ("liggghts", ""), ("yade", "")],
    "pour20k": [("parsolve", "springs"), ("liggghts", ""), ("yade", "")],
}
RANKS = {"pour2k": (1, 2), "pour20k": (1, 2)}  # Yade (threads, no MPI) at 1 only
PEERS = ("parsolve", "siconos", "exudyn", "liggghts", "yade")
# one core per rank: a BLAS or OpenMP pool of threads per process oversubscribes the cores
# (Siconos' chain ran from 0.2 to 16 s for the same 1000 steps on a loaded machine)
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _python_has(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def _debian_version(package):
    p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def installed():
    """{code: version} of the codes present on this machine."""
    found = {"parsolve": subprocess.run(
        [sys.executable, "-c", "import parsolve; print(parsolve.__version__)"],
        capture_output=True, text=True).stdout.strip()}
    if _python_has("siconos.kernel"):
        found["siconos"] = _debian_version("python3-siconos") or "present"
    if _python_has("exudyn"):
        found["exudyn"] = subprocess.run(
            [sys.executable, "-c", "import exudyn; print(exudyn.__version__)"],
            capture_output=True, text=True).stdout.strip()
    for code in ("liggghts", "yade"):
        if dem.available(code):
            found[code] = _debian_version(code) or "present"
    return found


def _json_line(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=HERE)
    lines = [s for s in p.stdout.splitlines() if s.startswith("{")]
    if p.returncode or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(lines[-1])


def run_once(model, code, variant, ranks, quick, workdir, tree=None):
    """One run of `model` in `code`: the runner's record. tree: for parsolve, an earlier
    tree (common.tree_of) whose parsolve runs instead of this one."""
    spec = M.quick(M.MODELS[model]) if quick else M.MODELS[model]
    flag = ["--quick"] if quick else []
    peers = os.path.join(tree or os.path.dirname(HERE), "bench", "peers")
    if code == "parsolve":
        cmd = [sys.executable, os.path.join(peers, "parsolve_models.py"), model] + flag
        if variant:
            cmd += ["--solver", variant]
        env = None if tree is None else dict(os.environ, PYTHONPATH=tree)
        if ranks > 1:
            cmd = ["mpirun", "-n", str(ranks)] + cmd
            env = dict(env or os.environ, **dem.MPI_ENV)
        return _json_line(cmd, env)
    if code in ("siconos", "exudyn"):
        return _json_line([sys.executable, os.path.join(peers, f"{code}_models.py"), model]
                          + flag)
    if code == "liggghts":
        return dem.liggghts(spec, ranks, workdir)
    if code == "yade":
        return dem.yade(spec, ranks, workdir)
    raise KeyError(code)


def figures(rec):
    """µs per step and wall seconds per simulated second of a run's record."""
    return {"us_per_step": 1e6 * rec["seconds"] / rec["steps"],
            "wall_per_simulated": rec["seconds"] / rec["simulated"],
            "cpu_per_simulated": rec["cpu_seconds"] / rec["simulated"]}


def plan(models, peers, ranks_override):
    """(model, ranks, [(code, variant)...]) in the order they run."""
    out = []
    for model in models:
        for ranks in (ranks_override or RANKS.get(model, (1,))):
            codes = [(c, v) for c, v in CODES[model] if c in peers
                     and not (c == "yade" and ranks > 1)]
            if codes:
                out.append((model, ranks, codes))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="each model briefly (a smoke test)")
    ap.add_argument("--models", default=",".join(M.MODELS))
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ranks", default="", help="e.g. 1,2 (default: per model)")
    ap.add_argument("--rev", default="",
                    help="also run parsolve at this commit (its own tree, kernels built), "
                         "alternated with the others, as code parsolve@REV")
    ap.add_argument("--rigid", action="store_true",
                    help="parsolve's pours on rigid contacts (default: compliant, the glass)")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of the newest full invocation's records")
    args = ap.parse_args()
    if args.table_only:
        records = newest_records()
        print(table(records))
        print()
        print(against_liggghts(records))
        return
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in M.MODELS:
            ap.error(f"unknown model {m!r} (known: {', '.join(M.MODELS)})")
    wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in wanted:
        if p not in PEERS:
            ap.error(f"unknown code {p!r} (known: {', '.join(PEERS)})")
    os.environ.update(ONE_THREAD)                  # every run's process inherits it
    found = installed()
    for p in wanted:
        if p not in found:
            print(f"bench_peers: {p} is not installed: skipped", flush=True)
    peers = [p for p in wanted if p in found]
    ranks_override = tuple(int(r) for r in args.ranks.split(",") if r.strip())
    if args.rigid:
        for model in M.POURS:
            CODES[model] = [(c, "rigid" if c == "parsolve" else v) for c, v in CODES[model]]
    session = time.strftime("%Y-%m-%dT%H:%M:%S")
    records = []
    with tempfile.TemporaryDirectory() as tmp, \
            (common.tree_of(args.rev) if args.rev else contextlib.nullcontext()) as old:
        for model, ranks, codes in plan(models, peers, ranks_override):
            if old:                                # the earlier parsolve beside this one
                codes = [c for cv in codes for c in ([cv, (cv[0] + "@", cv[1])]
                                                     if cv[0] == "parsolve" else [cv])]
            for rep in range(args.repeats if not args.quick else 1):
                for code, variant in codes:
                    base = code.rstrip("@")
                    label = base + (f"-{variant}" if variant and
                                    model not in ("ball", "spring") else "") + \
                        (f"@{args.rev}" if code.endswith("@") else "")
                    t0 = time.perf_counter()
                    try:
                        rec = run_once(model, base, variant, ranks, args.quick,
                                       os.path.join(tmp, f"{model}-{label}-{ranks}"),
                                       tree=old if code.endswith("@") else None)
                    except Exception as exc:       # say it, keep going with the others
                        print(f"bench_peers: {model} {label} x{ranks} failed: {exc}",
                              flush=True)
                        rec = {"failed": str(exc)[-2000:]}
                    if "seconds" in rec:
                        rec.update(figures(rec))
                    rec.pop("ranks", None)                 # the run's own count: as asked
                    record = common.metadata(
                        ranks=ranks, bench="peers", session=session, quick=args.quick,
                        model=model, words=M.MODELS[model]["words"], code=label,
                        repeat=rep, versions=found, process_seconds=time.perf_counter() - t0,
                        **rec)
                    records.append(record)
                    common.write("peers", record, echo=False)
                    print(line(record), flush=True)
    print()
    print(table(records))
    print()
    print(against_liggghts(records))


def line(r):
    if "failed" in r:
        return f"{r['model']:8s} {r['code']:16s} x{r['ranks']}  failed"
    phys = json.dumps(r.get("physics", {}), separators=(",", ":"))
    return (f"{r['model']:8s} {r['code']:16s} x{r['ranks']}  {r['us_per_step']:12.1f} us/step"
            f"  {r['wall_per_simulated']:10.3g} s/s  {phys}")


def newest_records():
    path = os.path.join(HERE, "results", "peers.json")
    recs = [json.loads(s) for s in open(path) if s.strip()]
    full = [r for r in recs if not r.get("quick")] or recs
    latest = {}
    for r in full:                      # the newest record set of each (model, code, ranks)
        key = (r["model"], r["code"], r["ranks"])
        if key not in latest or r["session"] > latest[key]:
            latest[key] = r["session"]
    return [r for r in full if latest[(r["model"], r["code"], r["ranks"])] == r["session"]]


def _physics_cell(model, p):
    if not p:
        return ""
    if model == "ball":
        return "e = " + ", ".join(f"{e:.3f}" for e in p["restitution"])
    if model == "chain":
        c = p["xcom_crossings"][0] if p["xcom_crossings"] else float("nan")
        return (f"crosses at {c:.3f} s, pivot force {p['tension_start']:.3f}–"
                f"{p['tension_max']:.3f} N")
    if model == "spring":
        return f"max error {p['max_error_relative']:.1e} of x0"
    return (f"bed {1e3 * p['bed_height']:.1f} mm, packing {p['packing']:.3f}, "
            f"{p['spheres']} spheres")


def _num(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def table(records):
    """Markdown: per model, code and ranks the best and the spread of the runs, the physics
    (of the best run), parsolve's unconverged steps."""
    groups = {}
    for r in records:
        if "failed" not in r:
            groups.setdefault((r["model"], r["code"], r["ranks"]), []).append(r)
    rows = ["| model | code | ranks | runs | µs per step: best (worst) | CPU µs per step | "
            "wall s per simulated s | CPU s per simulated s | physics (best run) | "
            "unconverged steps |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    order = list(M.MODELS)
    for (model, code, ranks), rs in sorted(groups.items(),
                                           key=lambda kv: (order.index(kv[0][0]), kv[0][2])):
        best = min(rs, key=lambda r: r["seconds"])
        worst = max(rs, key=lambda r: r["seconds"])
        cpu = min(r["cpu_seconds"] for r in rs)
        unconv = best.get("unconverged_steps", "")
        rows.append(f"| {model} | {code} | {ranks} | {len(rs)} | {_num(best['us_per_step'])} "
                    f"({_num(worst['us_per_step'])}) | {_num(1e6 * cpu / best['steps'])} | "
                    f"{_num(best['wall_per_simulated'])} | {_num(cpu / best['simulated'])} | "
                    f"{_physics_cell(model, best.get('physics'))} | {unconv} |")
    return "\n".join(rows)


def against_liggghts(records):
    """Markdown: the pours' bed height and packing fraction of each code's best run relative
    to LIGGGHTS' at the same rank count (the target's yardstick: within 1 %)."""
    best = {}
    for r in records:
        if r["model"] in M.POURS and "failed" not in r:
            key = (r["model"], r["ranks"], r["code"])
            if key not in best or r["seconds"] < best[key]["seconds"]:
                best[key] = r
    rows = ["| model | ranks | code | bed height, mm | vs LIGGGHTS | packing | vs LIGGGHTS |",
            "|---|---|---|---|---|---|---|"]
    order = list(M.MODELS)
    for (model, ranks, code), r in sorted(best.items(), key=lambda kv: (
            order.index(kv[0][0]), kv[0][1], kv[0][2])):
        ref = best.get((model, ranks, "liggghts")) or best.get((model, 1, "liggghts"))
        p = r["physics"]
        rel = ("", "")
        if ref is not None:
            q = ref["physics"]
            rel = tuple(f"{100 * (p[k] / q[k] - 1):+.1f} %" for k in ("bed_height", "packing"))
        rows.append(f"| {model} | {ranks} | {code} | {1e3 * p['bed_height']:.2f} | {rel[0]} | "
                    f"{p['packing']:.3f} | {rel[1]} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
