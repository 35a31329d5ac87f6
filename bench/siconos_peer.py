"""Siconos 4.4 (Debian's python3-siconos) as the peer of the solver benches.

    solve_siconos(problem_or_path, method="nsgs" | "newton_ac", tol, max_iter)
        -> {"iterations", "seconds", "residual", "converged", "info"}

W goes to Siconos as a sparse matrix (64-bit indices, as Siconos stores them); seconds time
the solver call alone, from r = 0. The residual is recomputed from Siconos' r with parsolve's
formula (DESIGN.md section 2, which is Siconos' own fc3d error with rho = 1), so both sides are
held to the same yardstick. Importing this module raises ImportError when Siconos is absent.
"""
import time

import numpy as np
import scipy.sparse as sp
import siconos.numerics as sn

from parsolve.io import fclib
from parsolve.solvers.reference import residual_from_velocity

METHODS = {"nsgs": (sn.SICONOS_FRICTION_3D_NSGS, sn.fc3d_nsgs),
           "newton_ac": (sn.SICONOS_FRICTION_3D_NSN_AC, sn.fc3d_nonsmooth_Newton_AlartCurnier)}


def siconos_matrix(problem):
    rows, cols, vals = problem.scalar_triplets()
    m = 3 * problem.n
    W = sp.csc_matrix((vals, (rows, cols)), shape=(m, m))
    W.indices = W.indices.astype(np.int64)
    W.indptr = W.indptr.astype(np.int64)
    return W


def solve_siconos(problem, method="nsgs", tol=1e-8, max_iter=10000):
    if isinstance(problem, str):
        problem = fclib.read(problem)
    solver_id, call = METHODS[method]
    q = np.ascontiguousarray(problem.q, float).reshape(-1).copy()
    fc = sn.FrictionContactProblem(3, siconos_matrix(problem), q, problem.mu.copy())
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
    return {"iterations": int(options.iparam[sn.SICONOS_IPARAM_ITER_DONE]), "seconds": seconds,
            "residual": res, "converged": bool(res <= tol), "info": int(info)}
