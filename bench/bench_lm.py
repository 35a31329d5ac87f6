"""Levenberg-Marquardt polishing on the poured piles (issue 20): a method tried, not kept.

Rigid piles break Newton's nonsingularity assumption (W is singular), but Levenberg-Marquardt
on a semismooth equation converges quadratically under a local error bound alone (Yamashita
and Fukushima 2001; Fan and Yuan 2005). This bench tests that on Alart-Curnier's Phi(r) = 0
(parsolve.solvers.newton, rho from W's diagonal blocks) from the interior point's stalled
iterate ("ipm") or from that iterate polished by the proximal Newton ("polish"): each step

    d = argmin |J d + Phi|^2 + lam |d|^2,   lam = m |Phi| / max(|R|, |Phi|),

solved exactly through the augmented system [[I, J], [J^T, -lam I]] (MUMPS LU), then a
non-monotone Armijo search on |Phi|^2 (the largest of the last five); m / 10 after a full step,
m x 10 after a failed search. It prints the DESIGN.md residual per step and, at the end, which
contacts change state (separated, sticking, sliding, from Alart-Curnier's arguments) and how
often: on pile1k-mu0.3 the few that flip between sticking and sliding hold the residual up.

    python bench/bench_lm.py [--problem pile1k-mu0.3] [--start ipm|polish] [--seconds 40]

Appends a record to bench/results/lm.json. Needs scipy (Siconos' peer needs it too).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
import fclib_problems  # noqa: E402

STATES = ("separated", "sticking", "sliding")


def states(p, R, U):
    """Each contact's state from Alart-Curnier's arguments r - rho u (0, 1, 2: STATES)."""
    sn = R[:, 0] - p.rho_n * U[:, 0]
    st = np.hypot(*(R[:, 1:] - p.rho_t[:, None] * U[:, 1:]).T)
    return np.where(sn <= 0, 0, np.where(st <= p.mu * np.maximum(sn, 0), 1, 2))


class Pile:
    """One FCLIB problem: W in scipy's CSR, Phi and J = A + B W."""

    def __init__(self, path):
        import scipy.sparse as sp
        from parsolve.io import fclib
        from parsolve.solvers import Problem

        self.sp, self.lp = sp, fclib.read(path)
        lp = self.lp
        self.n, self.mu = lp.n, np.asarray(lp.mu, float)
        self.problem = Problem.coulomb(lp.indptr, lp.indices, lp.blocks, lp.diag, lp.q, lp.mu)
        rows, cols, vals = lp.scalar_triplets()
        self.W = sp.csr_matrix((vals, (rows, cols)), shape=(3 * lp.n, 3 * lp.n))
        Wd = lp.blocks[lp.diag]
        self.rho_n, self.rho_t = 1.0 / Wd[:, 0, 0], 2.0 / (Wd[:, 1, 1] + Wd[:, 2, 2])
        i = np.arange(3 * lp.n).reshape(-1, 3)
        self.bi = np.repeat(i, 3, axis=1).reshape(-1)          # a 3 x 3 block diagonal's
        self.bj = np.tile(i, (1, 3)).reshape(-1)               # rows and columns

    def velocity(self, R):
        return (self.W @ R.reshape(-1)).reshape(-1, 3) + self.lp.q

    def phi(self, R, U):
        from parsolve.solvers import kernels

        Phi, A, B = np.empty((self.n, 3)), np.empty((self.n, 3, 3)), np.empty((self.n, 3, 3))
        p = self.problem
        kernels.alart_curnier(p.kind, p.param, np.ascontiguousarray(R), U, self.rho_n,
                              self.rho_t, Phi, A, B)
        return Phi, A, B

    def jacobian(self, A, B):
        shape = (3 * self.n, 3 * self.n)
        block = (lambda X: self.sp.csr_matrix((X.reshape(-1), (self.bi, self.bj)), shape=shape))
        return (block(A) + block(B) @ self.W).tocsr()

    def residual(self, R, U):
        from parsolve.solvers.residual import residual_from_velocity

        return residual_from_velocity(R, U, self.lp.q, self.mu)


def lu_solve(K, rhs):
    """K x = rhs by MUMPS (METIS ordering, room for delayed pivots)."""
    from parsolve.platform.petsc import PETSc

    K = K.tocsr()
    K.sort_indices()
    M = PETSc.Mat().createAIJ(size=K.shape, csr=(K.indptr.astype(PETSc.IntType),
                                                  K.indices.astype(PETSc.IntType), K.data),
                              comm=PETSc.COMM_SELF)
    ksp = PETSc.KSP().create(comm=PETSc.COMM_SELF)
    ksp.setOperators(M)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("lu")
    pc.setFactorSolverType("mumps")
    pc.setFactorSetUpSolverType()
    pc.getFactorMatrix().setMumpsIcntl(7, 5)
    pc.getFactorMatrix().setMumpsIcntl(14, 1000)
    x, b = M.createVecs()
    b.array[:] = rhs
    ksp.solve(b, x)
    out = x.array.copy()
    for obj in (ksp, M, x, b):
        obj.destroy()
    return out


def start(pile, how, polish_steps):
    """The interior point's best iterate (its stall on the piles), polished or not."""
    from parsolve.solvers import SemismoothNewton
    from parsolve.solvers.interior import InteriorPoint

    R = np.zeros((pile.n, 3))
    InteriorPoint(tol=1e-8, max_iter=200, newton_iter=0, probe=False).iterate(pile.problem, R)
    if how == "polish":
        SemismoothNewton(tol=1e-8, max_iter=polish_steps, warm_sweeps=0,
                         memory=5).solve(pile.problem, R)
    return R


def levenberg_marquardt(pile, R, seconds, tol=1e-8, m=1e-2, memory=5):
    """LM steps from R until tol or `seconds`: (R, path [(step, seconds, residual)], the
    states of every accepted iterate)."""
    sp, N = pile.sp, 3 * pile.n
    eye = sp.identity(N, format="csr")
    t0 = time.perf_counter()
    U = pile.velocity(R)
    Phi, A, B = pile.phi(R, U)
    f, err = float(np.sum(Phi ** 2)), pile.residual(R, U)
    path, merits, seen = [(0, 0.0, err)], [f], [states(pile, R, U)]
    k = 0
    while err > tol and time.perf_counter() - t0 < seconds:
        k += 1
        J = pile.jacobian(A, B)
        lam = m * math.sqrt(f) / max(np.linalg.norm(R), math.sqrt(f), 1e-300)
        K = sp.bmat([[eye, J], [J.T, -lam * eye]], format="csr")
        d = lu_solve(K, np.concatenate([-Phi.reshape(-1), np.zeros(N)]))[N:].reshape(-1, 3)
        slope = 2.0 * float(Phi.reshape(-1) @ (J @ d.reshape(-1)))
        t, found = 1.0, None
        if np.all(np.isfinite(d)) and slope < 0.0:
            while t >= 2.0 ** -12 and found is None:
                Rt = R + t * d
                Ut = pile.velocity(Rt)
                trial = pile.phi(Rt, Ut)
                ft = float(np.sum(trial[0] ** 2))
                if ft <= max(merits[-memory:]) + 1e-4 * t * slope:
                    found = (Rt, Ut) + trial + (ft,)
                else:
                    t *= 0.5
        if found is None:
            m *= 10.0
        else:
            R, U, Phi, A, B, f = found
            merits.append(f)
            seen.append(states(pile, R, U))
            err = pile.residual(R, U)
            m = max(m / 10.0, 1e-6) if t == 1.0 else m
        path.append((k, time.perf_counter() - t0, err))
        print(f"{k:4d} {path[-1][1]:7.2f} s  residual {err:.3e}  |Phi| {math.sqrt(f):.3e}  "
              f"step {t if found else 0:g}", flush=True)
    return R, path, np.array(seen)


def flips(seen, last=100):
    """Which contacts change state over the accepted iterates, and how often in the last
    `last`: {"ever": count, "late": count, "most": [[contact, flips], ...]}."""
    changes = seen[1:] != seen[:-1]
    late = changes[-last:].sum(axis=0)
    order = np.argsort(-late)[:10]
    return {"ever": int(changes.any(axis=0).sum()), "late": int((late > 0).sum()),
            "most": [[int(a), int(late[a])] for a in order if late[a]]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", default="pile1k-mu0.3")
    ap.add_argument("--start", choices=("ipm", "polish"), default="ipm")
    ap.add_argument("--polish-steps", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=40.0)
    a = ap.parse_args()
    path = fclib_problems.problems([a.problem])[a.problem]
    pile = Pile(path)
    t0 = time.perf_counter()
    R = start(pile, a.start, a.polish_steps)
    before = time.perf_counter() - t0
    print(f"{a.problem}: {pile.n} contacts; start ({a.start}) at residual "
          f"{pile.residual(R, pile.velocity(R)):.3e} after {before:.2f} s")
    R, lm_path, seen = levenberg_marquardt(pile, R, a.seconds)
    changed = flips(seen)
    best = min(e for _, _, e in lm_path)
    print(f"best {best:.3e}; contacts that ever changed state {changed['ever']}, in the last "
          f"100 accepted steps {changed['late']}: {changed['most']}")
    common.write("lm", {**common.metadata(), "problem": a.problem, "start": a.start,
                        "start_seconds": before, "path": lm_path, "best": best,
                        "flips": changed})


if __name__ == "__main__":
    main()
