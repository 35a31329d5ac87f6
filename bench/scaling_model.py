"""A performance model of a Gauss-Seidel step, fitted to the measured records of
bench/results/scaling.json, and its prediction at 64 and 1024 ranks (printed as a table).

    python bench/scaling_model.py             # fitted on the records in the JSON
    python bench/scaling_model.py --quiet     # the constants fitted on a quiet machine
    python bench/scaling_model.py --since 2026-11-24T10:51   # records from then on only

It first prints every measured configuration (best and median of its runs); the fit uses the
fastest 1- and 2-rank strong-scaling runs.

Per step with S sweeps on P ranks, n bodies and m contacts per rank:
  T = a * m * S                     sweeps (relaxations)
    + b * m                         detection, assembly, integration (per contact)
    + S * 8 * (alpha + q(n) / beta) the colour exchanges of the sweeps (8 per sweep)
    + g(n)                          ghosts, contact sharing, migration (once a step)
q(n) = bytes a rank sends per colour: the bodies in its ghost layer, kappa N^(2/3) per face
(kappa fitted on the 2-rank run, where the one cut is a face of the whole cross-section). For
slabs (the partition before recursive coordinate bisection) a rank has 2 faces of the whole
cross-section, which does not shrink with P; for the 3-D blocks of recursive coordinate
bisection (the partition now) 6 faces of its own block, ~ 6 kappa n^(2/3). Constants a, b,
alpha come from the 1- and 2-rank records; beta is a network bandwidth (a cluster's, not this
machine's). The memory of a rank is (n + ghosts) bytes-per-body + m bytes-per-contact
(measured: Domain.memory), with no term in N.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# fit() of the 2026-11-24 records from 10:51 (commit 19e67ce: compiled colour loop, RCB on
# the finest cells; the machine otherwise idle). Before: the 2026-11-23 slab records, a = 88
# ns, b = 5.7 us, alpha = 0.39 ms.
QUIET = {"a": 98e-9, "b": 6.64e-6, "alpha_here": 0.267e-3, "bytes_per_ghost": 30.3, "S": 100,
         "contacts_per_body": 5.81, "kappa": 0.98}


SINCE = ""                 # records from this date on (--since 2026-11-24T10:51)


def records():
    return [r for r in (json.loads(line)
                        for line in open(os.path.join(HERE, "results", "scaling.json")))
            if r["date"] >= SINCE]


NETWORK_LATENCY = 5e-6      # s per colour exchange on a cluster's interconnect (conservative)


def halo_alpha():
    """Seconds per colour exchange of the 2-rank "halo" records (a small bed, so the exchange
    is not hidden behind work), best over runs, for the compiled colour loop and its Python
    twin: {"compiled": s, "python": s, "compiled post": s, "python post": s}, the "post"
    values the part not spent waiting (packing, starting, unpacking: the software's cost);
    empty without such records."""
    best = {}
    for r in records():
        if r["kind"] == "halo" and r["ranks"] == 2:
            loop = r.get("colour_loop", "python")
            per = r["phase_seconds_per_step"]["communication"] / (
                r["sweeps_per_step"] * r.get("colours", 8))
            best[loop] = min(best.get(loop, np.inf), per)
            if "post_seconds_per_colour_exchange" in r:
                k = loop + " post"
                best[k] = min(best.get(k, np.inf), r["post_seconds_per_colour_exchange"])
    return best


def load():
    """The fastest 1- and 2-rank records of the 100,000-sphere strong-scaling runs."""
    strong = {}
    for r in records():
        if r["kind"] == "strong" and r["bodies"] == 100000 and (
                r["ranks"] not in strong
                or r["seconds_per_step"] < strong[r["ranks"]]["seconds_per_step"]):
            strong[r["ranks"]] = r
    return strong[1], strong[2]


def measured():
    """Every configuration's runs (this VM's timings vary by up to 20 % from run to run):
    count, best and median seconds per step, and speed-up / weak efficiency from each."""
    groups = {}
    for r in records():
        key = (r["kind"], r["ranks"], r["bodies"], r.get("balance_tolerance", 1.1))
        groups.setdefault(key, []).append(r["seconds_per_step"])
    best = {k: min(v) for k, v in groups.items()}
    median = {k: float(np.median(v)) for k, v in groups.items()}
    print("| run | ranks | bodies | balance tolerance | runs | best s/step | median s/step "
          "| speed-up or efficiency (best / median) |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(groups):
        kind, P, n, tol = key
        base = [k for k in groups if k[0] == kind and k[1] == 1]
        ratio = ""
        if P > 1 and base:
            b = base[0]
            if kind != "weak":
                ratio = f"{best[b] / best[key]:.2f} / {median[b] / median[key]:.2f}"
            else:
                ratio = f"{100 * best[b] / best[key]:.0f} % / {100 * median[b] / median[key]:.0f} %"
        print(f"| {kind} | {P} | {n:,} | {tol} | {len(groups[key])} | {best[key]:.2f} | "
              f"{median[key]:.2f} | {ratio} |")
    print()


def fit(r1, r2):
    S = r1["sweeps_per_step"]
    m1 = r1["contacts"]
    ph1 = r1["phase_seconds_per_step"]
    a = ph1["solve"] / (m1 * S)
    b = (ph1["detect"] + ph1["assemble"] + ph1["integrate"] + ph1["update"]) / m1
    ph2 = r2["phase_seconds_per_step"]
    # the communication phase is dominated by the 8 S colour exchanges (each also a
    # synchronisation: it includes the wait for the slowest rank of that colour)
    q2 = r2["bytes_exchanged_per_sweep"] / r2["ranks"] / 8
    alpha = ph2["communication"] / (8 * S)              # per exchange, payload included
    ghosts = r2["per_rank"]["ghosts"]["avg"]
    per_body = q2 / max(ghosts, 1)
    # ghost layer of one face (2 slabs: each rank has one neighbour face) ~ kappa N^(2/3)
    kappa = ghosts / r2["bodies"] ** (2 / 3)
    return {"a": a, "b": b, "alpha_here": alpha, "bytes_per_ghost": per_body, "S": S,
            "contacts_per_body": m1 / r1["bodies"], "kappa": kappa}


def predict(f, N, P, alpha, beta, layout):
    n = N / P
    m = f["contacts_per_body"] * n
    faces = 2 if layout == "slab" else 6
    ghosts = faces * f["kappa"] * (N if layout == "slab" else n) ** (2 / 3) if P > 1 else 0
    q = f["bytes_per_ghost"] * ghosts
    S = f["S"]
    work = f["a"] * m * S + f["b"] * m
    comm = S * 8 * (alpha + q / beta)
    return work, comm


def main(quiet=False):
    measured()
    r1, r2 = load()
    f = QUIET if quiet else fit(r1, r2)
    t1 = r1["seconds_per_step"]
    print(f"measured: 1 rank {t1:.2f} s/step, 2 ranks {r2['seconds_per_step']:.2f} s/step, "
          f"speed-up {t1 / r2['seconds_per_step']:.2f}")
    print(f"fit: a = {1e9 * f['a']:.0f} ns/relaxation, b = {1e6 * f['b']:.2f} us/contact/step, "
          f"alpha(here) = {1e3 * f['alpha_here']:.2f} ms, "
          f"{f['bytes_per_ghost']:.0f} B per ghost body per colour, ghost layer "
          f"{f['kappa']:.2f} N^(2/3) per face")
    print()
    print("| case | P | bodies/rank | work s/step | exchange s/step | efficiency | limit |")
    print("|---|---|---|---|---|---|---|")
    measured_alpha = halo_alpha()
    if measured_alpha:
        print("colour exchange on 2 ranks, small bed (best): " + ", ".join(
            f"{k} loop {1e6 * v:.0f} us" for k, v in sorted(measured_alpha.items())))
    alphas = [("slab", f["alpha_here"], 5e9), ("3-D", f["alpha_here"], 5e9)]
    if "compiled" in measured_alpha:
        alphas.append(("3-D", measured_alpha["compiled"], 5e9))
    if "compiled post" in measured_alpha:     # the loop's own cost plus a cluster's latency
        alphas.append(("3-D", measured_alpha["compiled post"] + NETWORK_LATENCY, 5e9))
    alphas.append(("3-D", 20e-6, 5e9))
    for label, N, weak in (("strong 1e6", 1e6, False), ("weak 5e4/rank", None, True)):
        for layout, alpha, beta in alphas:
            for P in (64, 1024):
                NN = 5e4 * P if weak else N
                w1, c1 = predict(f, NN / P if weak else NN, 1, alpha, beta, layout)
                w, c = predict(f, NN, P, alpha, beta, layout)
                base = (w1 if weak else w1 / P)
                eff = base / (w + c)
                lim = "exchange latency" if c > w and S_alpha(alpha, f) > 0.5 * c else (
                    "exchange volume" if c > w else "sweeps (compute)")
                print(f"| {label}, {layout}, alpha={1e6 * alpha:.0f} us | {P} | "
                      f"{NN / P:.0f} | {w:.3f} | {c:.3f} | {100 * eff:.0f} % | {lim} |")
    memory(r2)


def memory(r):
    """Bytes per body (owned and ghost rows) and per contact on each rank of record r, as
    Domain.memory reports them (records from before the memory report have none)."""
    m = r["per_rank"]
    if "body_bytes" not in m:
        return
    print()
    print(f"memory per rank at {r['ranks']} ranks (min / avg / max): "
          + ", ".join(f"{k.replace('_bytes', '')} {m[k]['min'] / 2**20:.1f} / "
                      f"{m[k]['avg'] / 2**20:.1f} / {m[k]['max'] / 2**20:.1f} MiB"
                      for k in ("body_bytes", "ghost_bytes", "contact_bytes",
                                "exchange_bytes", "peak_rss_bytes")))
    per_body = m["body_bytes"]["avg"] / m["bodies"]["avg"]
    per_contact = m["contact_bytes"]["avg"] / m["contacts"]["avg"]
    print(f"{per_body:.0f} B per body (owned or ghost), {per_contact:.0f} B per contact; "
          f"partition {m['partition_bytes']['max']:.0f} B (O(P))")


def S_alpha(alpha, f):
    return f["S"] * 8 * alpha


if __name__ == "__main__":
    import sys

    if "--since" in sys.argv:
        SINCE = sys.argv[sys.argv.index("--since") + 1]
    main(quiet="--quiet" in sys.argv[1:])
