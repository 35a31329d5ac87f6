"""Siconos 4.4 (Debian's python3-siconos) as the peer of the solver benches.

    solve_siconos(problem_or_path, method="nsgs" | "newton_ac", tol, max_iter,
                  memory_gb=8, timeout=3600)
        -> {"iterations", "seconds", "residual", "converged", "info"[, "failed"]}

W goes to Siconos as a sparse matrix (64-bit indices, as Siconos stores them); seconds time
the solver call alone, from r = 0 (a call under 10 ms: the fastest of five, common.best_of).
The residual is recomputed from Siconos' r with parsolve's formula (DESIGN.md section 2, which is Siconos' own fc3d error with rho = 1), so both sides are
held to the same yardstick. Each solve runs in a forked child with its address space capped
at memory_gb and a wall-clock timeout: Siconos' Newton has been seen to take all 24 GB of
this machine on a 1,000-contact pile; then the record says "failed" and the bench goes on.
Importing this module raises ImportError when Siconos is absent.
"""
import multiprocessing as mp
import resource
import time

import numpy as np
import scipy.sparse as sp
import siconos.numerics as sn

import common
from parsolve.io import fclib
from parsolve.solvers.residual import residual_from_velocity

METHODS = {"nsgs": (sn.SICONOS_FRICTION_3D_NSGS, sn.fc3d_nsgs),
           "newton_ac": (sn.SICONOS_FRICTION_3D_NSN_AC, sn.fc3d_nonsmooth_Newton_AlartCurnier)}


def siconos_matrix(problem):
    rows, cols, vals = problem.scalar_triplets()
    m = 3 * problem.n
    W = sp.csc_matrix((vals, (rows, cols)), shape=(m, m))
    W.indices = W.indices.astype(np.int64)
    W.indptr = W.indptr.astype(np.int64)
    return W


def _solve(problem, method, tol, max_iter):
    solver_id, call = METHODS[method]
    q = np.ascontiguousarray(problem.q, float).reshape(-1).copy()
    fc = sn.FrictionContactProblem(3, siconos_matrix(problem), q, problem.mu.copy())

    def once():
        options = sn.SolverOptions(solver_id)
        options.dparam[sn.SICONOS_DPARAM_TOL] = tol
        options.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
        r, u = np.zeros_like(q), np.zeros_like(q)
        t0 = time.perf_counter()
        info = call(fc, r, u, options)
        seconds = time.perf_counter() - t0
        R = r.reshape(-1, 3)
        U = problem.matvec(R) + problem.q
        res = residual_from_velocity(R, U, problem.q, problem.mu)
        return {"iterations": int(options.iparam[sn.SICONOS_IPARAM_ITER_DONE]),
                "seconds": seconds, "residual": res, "converged": bool(res <= tol),
                "info": int(info)}

    return common.best_of(once)


def _child(conn, problem, method, tol, max_iter, memory_gb):
    limit = int(memory_gb * 2 ** 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        conn.send(_solve(problem, method, tol, max_iter))
    except MemoryError:
        conn.send({"failed": f"out of memory ({memory_gb:g} GB cap)"})
    except Exception as exc:                      # report, do not hide, what Siconos raised
        conn.send({"failed": f"{type(exc).__name__}: {exc}"})
    conn.close()


def solve_siconos(problem, method="nsgs", tol=1e-8, max_iter=10000, memory_gb=8.0,
                  timeout=3600.0):
    if isinstance(problem, str):
        problem = fclib.read(problem)
    ctx = mp.get_context("fork")
    here, there = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(there, problem, method, tol, max_iter, memory_gb))
    t0 = time.perf_counter()
    child.start()
    there.close()
    out = None
    if here.poll(timeout):
        try:
            out = here.recv()
        except EOFError:                          # the child died without a word
            out = None
    child.join(1.0)
    if child.is_alive():
        child.kill()
        child.join()
        out = {"failed": f"timeout after {timeout:g} s"}
    if out is None:
        out = {"failed": f"Siconos died (exit {child.exitcode}; out of memory under the "
                         f"{memory_gb:g} GB cap?)"}
    if "failed" in out:
        out.update(iterations=max_iter, seconds=time.perf_counter() - t0, residual=float("nan"),
                   converged=False, info=-1)
    return out
