"""Contact relaxations per core-second of the Gauss-Seidel sweep on a dense HCP bed.

    python bench/bench_gs.py [--spheres 20000] [--sweeps 100] [--settle 10]

The bed (pe's dense benchmark: r = 1 mm, 2650 kg/m^3, mu = 0.85, gravity tilted 30 deg,
h = 10 us) is stepped `--settle` times with a tolerance solver so the reactions are realistic,
then one step's local dynamics is swept `--sweeps` times with relaxation `--omega`, with the
default local solver (auto) and the warm one, and as many times by the sweep's traffic probe
(kernels.body_sweep_traffic: the same loop's loads and stores without its arithmetic, the
memory-traffic limit measured), alternated, best of three. One relaxation = one contact's
local solve. Writes bench/results/gs_sweep.json.
"""
import argparse
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import common  # noqa: E402
import scenes  # noqa: E402

import parsolve as ps  # noqa: E402
from parsolve.run import Simulation  # noqa: E402
from parsolve.solvers import kernels  # noqa: E402
from parsolve.laws.codes import METHODS as LOCAL_SOLVERS, OUTCOMES as CODE_NAMES  # noqa: E402
from parsolve.solvers.residual import residual_from_parts  # noqa: E402

NCODES = len(CODE_NAMES)


def traffic_per_relaxation(ld, bodies):
    """Bytes a relaxation moves between memory and core, by the arrays the sweep reads once
    per sweep (per contact: order, W_aa, B, mu, inc_ptr, its incidences' body index, H and K;
    R read and written) and the body rows du (48 bytes, read and written): "streamed" counts
    du as cached between the contacts of a body (the sweep goes cell by cell), "uncached" as
    two 64-byte lines per incidence, read and written back."""
    inc = len(ld.inc_body) / max(1, ld.n)                    # incidences per contact
    streamed = 8 + 72 + 24 + 8 + 8 + 2 * 24 + inc * (8 + 144 + 144)
    return {"streamed": streamed, "uncached": streamed + inc * 2 * 2 * 64}


def memory_bandwidth(mb=256, repeat=5):
    """Bytes per second one core reads (sum of a 256 MB array, best of 5) and copies (read
    and written, as STREAM counts them)."""
    a, b = np.ones(mb * 2 ** 17), np.empty(mb * 2 ** 17)
    best = {"read": 0.0, "copy": 0.0}
    for _ in range(repeat):
        t0 = time.perf_counter()
        a.sum()
        t1 = time.perf_counter()
        np.copyto(b, a)
        t2 = time.perf_counter()
        best["read"] = max(best["read"], a.nbytes / (t1 - t0))
        best["copy"] = max(best["copy"], 2 * a.nbytes / (t2 - t1))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spheres", type=int, default=20000)
    ap.add_argument("--sweeps", type=int, default=100)
    ap.add_argument("--settle", type=int, default=10)
    ap.add_argument("--omega", type=float, default=1.0)
    args = ap.parse_args()
    model = scenes.hcp_bed(args.spheres)
    sim = Simulation(model, step=1e-5, solver=ps.GaussSeidel(tol=1e-6, max_iter=200),
                     progress=0, quiet=True, verify_every=0)
    ld_box = {}
    sim.local_dynamics_hook = lambda s, ld: ld_box.update(ld=ld, contacts=s.contacts)
    t0 = time.perf_counter()
    sim.run(args.settle * 1e-5)
    row = sim.history[-1]
    settle = time.perf_counter() - t0
    ld = ld_box["ld"]
    R = sim.contacts.R.copy()                   # the last step's converged reactions
    order = np.arange(ld.n, dtype=np.int64)       # contacts are stored in sweep order
    # time the sweeps from a cold start (R = 0) so every sweep does real work
    def sweeps(method):
        """args.sweeps sweeps from R = 0 with local solver `method`: (seconds, R, du, counts)."""
        R0, du = np.zeros_like(R), np.zeros((len(sim.bodies), 6))
        counts = np.zeros(NCODES, np.int64)
        t0 = time.perf_counter()
        for _ in range(args.sweeps):
            kernels.body_gauss_seidel_sweep(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag,
                                            ld.B, ld.kind, ld.param, R0, du, order,
                                            args.omega, counts, LOCAL_SOLVERS.index(method))
        return time.perf_counter() - t0, R0, du, counts

    def residual(R0, du):
        U, parts = np.empty_like(R0), np.empty((ld.n, 4))
        kernels.body_residual(ld.inc_ptr, ld.inc_body, ld.H, ld.B, ld.kind, ld.param, R0, du,
                              U, parts)
        return residual_from_parts(parts.sum(axis=0))

    def probe():
        """The sweep's memory traffic alone (kernels.body_sweep_traffic), as many sweeps."""
        R0, du = np.zeros_like(R), np.zeros((len(sim.bodies), 6))
        t0 = time.perf_counter()
        for _ in range(args.sweeps):
            kernels.body_sweep_traffic(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, ld.B,
                                       ld.kind, ld.param, R0, du, order)
        return time.perf_counter() - t0

    # time the sweeps from a cold start (R = 0) so every sweep does real work; the default
    # local solver, the warm one and the traffic probe alternate, best of three each
    runs = {"auto": [], "warm": [], "probe": []}
    for _ in range(3):
        for method in ("auto", "warm"):
            runs[method].append(sweeps(method))
        runs["probe"].append(probe())
    dt, R0, du, counts = min(runs["auto"], key=lambda x: x[0])
    res = residual(R0, du)
    warm = min(runs["warm"], key=lambda x: x[0])
    dt_probe = min(runs["probe"])
    # the same sweeps over W's block rows (linked-interaction form), for comparison
    R1 = np.zeros_like(R)
    ld.rows                                     # assemble the block rows outside the timing
    rows_sweeps = max(1, args.sweeps // 10)
    t1 = time.perf_counter()
    for _ in range(rows_sweeps):
        kernels.gauss_seidel_sweep(ld.indptr, ld.indices, ld.blocks, ld.diag, ld.B, ld.kind,
                                   ld.param, R1,
                                   order, args.omega, counts)
    dt_rows = (time.perf_counter() - t1) / rows_sweeps
    relax = ld.n * args.sweeps
    traffic = traffic_per_relaxation(ld, len(sim.bodies))
    bandwidth = memory_bandwidth()
    rec = common.metadata(
        problem="hcp-bed", bodies=len(sim.bodies), contacts=int(ld.n),
        delassus_blocks=int(len(ld.indices)), sweeps=args.sweeps, omega=args.omega,
        sweep_form="body-coupled", seconds_sweeps=dt, relaxations=relax,
        relaxations_per_core_second=relax / dt, ns_per_relaxation=1e9 * dt / relax,
        residual_after_sweeps=res,
        row_sweep_relaxations_per_core_second=ld.n / dt_rows,
        local_outcomes={n: int(c) for n, c in zip(CODE_NAMES, counts) if c},
        bytes_per_contact=int((ld.H.nbytes + ld.K.nbytes + ld.Wdiag.nbytes + ld.inc_body.nbytes
                               + ld.B.nbytes + R.nbytes + ld.param.nbytes + ld.kind.nbytes) / max(1, ld.n)),
        bytes_per_contact_with_W_rows=int((ld.blocks.nbytes + ld.indices.nbytes)
                                          / max(1, ld.n)),
        settle_steps=args.settle, settle_seconds=settle,
        settle_seconds_per_step=settle / args.settle,
        settle_last_iterations=row["iterations"], settle_last_residual=row["residual"],
        phase_seconds=dict(sim.phase), target_relaxations_per_core_second=5e6,
        traffic_bytes_per_relaxation=traffic, memory_bandwidth_bytes_per_second=bandwidth,
        traffic_limit_relaxations_per_core_second={k: max(bandwidth.values()) / v
                                                   for k, v in traffic.items()},
        fraction_of_traffic_limit={k: relax / dt / (max(bandwidth.values()) / v)
                                   for k, v in traffic.items()},
        # the limit measured: the same loop with its loads and stores and no arithmetic
        probe_ns_per_relaxation=1e9 * dt_probe / relax,
        measured_traffic_limit_relaxations_per_core_second=relax / dt_probe,
        probe_bytes_per_second=traffic["streamed"] * relax / dt_probe,
        warm={"seconds_sweeps": warm[0], "relaxations_per_core_second": relax / warm[0],
              "ns_per_relaxation": 1e9 * warm[0] / relax,
              "residual_after_sweeps": residual(warm[1], warm[2]),
              "local_outcomes": {n: int(c) for n, c in zip(CODE_NAMES, warm[3]) if c}},
        fraction_of_measured_traffic_limit={"auto": dt_probe / dt, "warm": dt_probe / warm[0]})
    common.write("gs_sweep", rec)


if __name__ == "__main__":
    main()
