"""FCLIB local problems: the common exchange format of frictional contact solvers.

A local problem is U = W R + q with Signorini-Coulomb's law per contact (friction mu); FCLIB
stores it in HDF5 (Acary, Brémond, Koziara, Pérignon: fclib.h):

  /fclib_local/spacedim            3
  /fclib_local/W/{nzmax, m, n, nz, p, i, x}   W in CSparse form: nz = -1 compressed columns
                                   (p column pointers, i row indices), nz = -2 compressed rows
                                   (p row pointers, i column indices), nz >= 0 triplets (i rows,
                                   p columns, nz entries)
  /fclib_local/vectors/{q, mu}     q (3n), mu (n)
  /fclib_local/info/{title, description, math_info}
  /solution/{r, u}                 a solution (written by `parsolve fclib solve --out`)

`read` takes Siconos' text files of a FrictionContactProblem too (`.dat`, numerics'
frictionContact_printInFile: the Siconos test problems, e.g. capsules and rock piles), W dense
or sparse block.

Components are normal first in FCLIB, Siconos and parsolve alike, so nothing is reordered: this
module is where a conversion would go. In parsolve the problem is W in block CSR (3 x 3 blocks:
indptr, indices, blocks, diag), q as (n, 3), mu (n,): what every solver's `solve` takes.
"""
import os
from dataclasses import dataclass

import numpy as np

from ..errors import FileFormatError, InputError
from .hdf5 import h5py_module

FORMS = {"csc": -1, "csr": -2, "triplet": 0}


@dataclass
class LocalProblem:
    indptr: np.ndarray
    indices: np.ndarray
    blocks: np.ndarray
    diag: np.ndarray
    q: np.ndarray
    mu: np.ndarray
    title: str = ""
    description: str = ""

    @property
    def n(self):
        return len(self.mu)

    def matvec(self, R):
        """W R for R (n, 3)."""
        from ..assembly.operators import block_matvec

        return block_matvec(self.indptr, self.indices, self.blocks, R)

    def dense(self):
        """W as a dense (3n, 3n) array (small problems: checks and peers)."""
        W = np.zeros((3 * self.n, 3 * self.n))
        rows, cols, vals = self.scalar_triplets()
        np.add.at(W, (rows, cols), vals)
        return W

    def scalar_triplets(self):
        """W's entries as (rows, cols, values), row-major within blocks."""
        brow = np.repeat(np.arange(self.n), np.diff(self.indptr))
        i, j = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
        rows = (3 * brow[:, None, None] + i).reshape(-1)
        cols = (3 * self.indices[:, None, None] + j).reshape(-1)
        return rows, cols, self.blocks.reshape(-1)


def write(path, problem, form="csc", title="", description=""):
    """Write `problem` (a LocalProblem) to `path` with W in `form` (csc, csr or triplet)."""
    if form not in FORMS:
        raise InputError(f"FCLIB matrix form {form!r}: choose one of {', '.join(FORMS)}")
    h5py = h5py_module()
    rows, cols, vals = problem.scalar_triplets()
    m = 3 * problem.n
    if form == "csc":
        o = np.lexsort((rows, cols))
        p = np.searchsorted(cols[o], np.arange(m + 1)).astype(np.int64)
        i, x = rows[o], vals[o]
    elif form == "csr":
        o = np.lexsort((cols, rows))
        p = np.searchsorted(rows[o], np.arange(m + 1)).astype(np.int64)
        i, x = cols[o], vals[o]
    else:
        i, p, x = rows, cols, vals
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        g = f.create_group("fclib_local")
        g["spacedim"] = np.int32(3)
        w = g.create_group("W")
        w["nzmax"], w["m"], w["n"] = np.int64(len(x)), np.int64(m), np.int64(m)
        w["nz"] = np.int64(FORMS[form] if form != "triplet" else len(x))
        w["p"], w["i"], w["x"] = p.astype(np.int64), i.astype(np.int64), x.astype(float)
        v = g.create_group("vectors")
        v["q"] = np.ascontiguousarray(problem.q, float).reshape(-1)
        v["mu"] = np.ascontiguousarray(problem.mu, float)
        info = g.create_group("info")
        info["title"] = title or problem.title or "parsolve local problem"
        info["description"] = description or problem.description or ""
        info["math_info"] = ("U = W R + q, normal first; Signorini-Coulomb per contact; "
                             "written by parsolve")
    os.replace(tmp, path)


def read(path):
    """The LocalProblem in FCLIB file `path` (Siconos' text form for a `.dat` file:
    read_siconos); FileFormatError naming the file and the problem for anything that is not a
    valid 3-D local problem."""
    path = os.fspath(path)                        # a str: quoted as one in messages
    if not os.path.isfile(path):
        raise FileFormatError(f"{path!r}: no such FCLIB file")
    if path.endswith(".dat"):
        return read_siconos(path)
    h5py = h5py_module()
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise FileFormatError(f"{path!r}: not a readable HDF5 file ({exc})") from None
    with f:
        if "fclib_local" not in f:
            raise FileFormatError(f"{path!r}: not an FCLIB local problem (no /fclib_local)")
        g = f["fclib_local"]

        def get(name):
            if name not in g:
                raise FileFormatError(f"{path!r}: dataset /fclib_local/{name} is missing")
            return g[name][()]
        spacedim = int(get("spacedim"))
        if spacedim != 3:
            raise FileFormatError(f"{path!r}: spacedim is {spacedim}; parsolve solves 3-D "
                                  "problems only")
        m, n, nz = int(get("W/m")), int(get("W/n")), int(get("W/nz"))
        p, i, x = (np.asarray(get(f"W/{k}")) for k in ("p", "i", "x"))
        q, mu = np.asarray(get("vectors/q"), float), np.asarray(get("vectors/mu"), float)
        info = {k: _text(g["info"][k][()]) for k in ("title", "description")
                if "info" in g and k in g["info"]}
    if m != n or m % 3:
        raise FileFormatError(f"{path!r}: W is {m} x {n}; a 3-D local problem needs a square W "
                              "of size 3 x contacts")
    rows, cols = _entries(path, m, nz, p, i, x)
    return _checked(path, m, rows, cols, x, q, mu, info,
                    ("/fclib_local/W/x", "/fclib_local/vectors/q", "/fclib_local/vectors/mu"))


def read_siconos(path):
    """The LocalProblem in Siconos' text file of a 3-D FrictionContactProblem: the dimension,
    the number of contacts, W as a NumericsMatrix (its storage: 0 dense, column-major; 1 sparse
    block, block rows' pointers and block columns then each block column-major), q, mu."""
    path = os.fspath(path)                        # a str: quoted as one in messages
    try:
        with open(path) as f:
            tokens = f.read().split()
        values = np.array(tokens, dtype=float)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FileFormatError(f"{path!r}: not a Siconos text problem ({exc})") from None
    at = [0]

    def take(k, what):
        if at[0] + k > len(values):
            raise FileFormatError(f"{path!r}: the file ends inside {what} (Siconos' text "
                                  "FrictionContactProblem expected)")
        at[0] += k
        return values[at[0] - k:at[0]]

    def integers(k, what):
        v = take(k, what)
        if not (np.isfinite(v).all() and (v == np.round(v)).all() and (v >= 0).all()):
            raise FileFormatError(f"{path!r}: {what} are not counts or indices")
        return v.astype(np.int64)

    dim, nc, storage, m, n = integers(5, "the header (dimension, contacts, W's storage, size)")
    if dim != 3:
        raise FileFormatError(f"{path!r}: dimension {dim}; parsolve solves 3-D problems only")
    if m != n or m != 3 * nc:
        raise FileFormatError(f"{path!r}: W is {m} x {n} for {nc} contacts (3 x contacts "
                              "expected)")
    if storage == 0:                                    # dense, column-major
        if tuple(integers(2, "the dense W's sizes")) != (m, n):
            raise FileFormatError(f"{path!r}: the dense W's sizes do not repeat {m} x {n}")
        x = take(m * n, "the dense W").copy()
        rows, cols = np.tile(np.arange(m), n), np.repeat(np.arange(n), m)
    elif storage == 1:                                  # sparse block
        nblocks = integers(1, "the number of blocks")[0]
        br, bc = integers(2, "the numbers of block rows and columns")
        rsize = np.concatenate(([0], integers(br, "the block rows' sizes")))
        csize = np.concatenate(([0], integers(bc, "the block columns' sizes")))
        filled1, filled2 = integers(2, "the block index sizes")
        ptr = integers(filled1, "the block rows' pointers")
        col = integers(filled2, "the blocks' columns")
        if rsize[-1] != m or csize[-1] != n or filled1 != br + 1 or filled2 != nblocks or \
                ptr[-1] != nblocks or (np.diff(ptr) < 0).any() or (col >= bc).any():
            raise FileFormatError(f"{path!r}: W's sparse block structure is inconsistent")
        parts = []
        for j, (r, c) in enumerate(zip(np.repeat(np.arange(br), np.diff(ptr)), col)):
            if integers(1, f"block {j}'s number")[0] != j:
                raise FileFormatError(f"{path!r}: block {j} is not numbered {j}")
            nr, ncol = rsize[r + 1] - rsize[r], csize[c + 1] - csize[c]
            vals = take(nr * ncol, f"block {j}")
            parts.append((rsize[r] + np.tile(np.arange(nr), ncol),
                          csize[c] + np.repeat(np.arange(ncol), nr), vals))
        rows, cols, x = ([np.concatenate(k) for k in zip(*parts)] if parts else
                         [np.zeros(0)] * 3)
    else:
        raise FileFormatError(f"{path!r}: W's storage {storage} is not read (0 dense and 1 "
                              "sparse block are; Siconos prints its sparse storage 2 with "
                              "six digits)")
    q = take(m, "q").copy()
    mu = take(nc, "mu").copy()
    return _checked(path, m, rows.astype(np.int64), cols.astype(np.int64), x, q, mu,
                    {"title": os.path.basename(path), "description": "Siconos text problem"},
                    ("W", "q", "mu"))


def _checked(path, m, rows, cols, x, q, mu, info, names):
    """The LocalProblem of W's entries (rows, cols, x), q and mu (called `names` in the
    file), checked."""
    nc = m // 3
    if q.shape != (m,):
        raise FileFormatError(f"{path!r}: q has {q.size} entries, W is {m} x {m}")
    if mu.shape != (nc,):
        raise FileFormatError(f"{path!r}: mu has {mu.size} entries for {nc} contacts")
    for name, arr in zip(names, (x, q, mu)):
        if not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise FileFormatError(f"{path!r}: {name} holds NaN or infinity (entry {bad})")
    if (mu < 0).any():
        bad = int(np.flatnonzero(mu < 0)[0])
        raise FileFormatError(f"{path!r}: contact {bad} has friction mu = {mu[bad]} < 0")
    return _blocks(path, nc, rows, cols, x, q, mu, info)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _entries(path, m, nz, p, i, x):
    """Row and column of each entry of x, checked."""
    if nz >= 0:
        if not (len(i) >= nz and len(p) >= nz and len(x) >= nz):
            raise FileFormatError(f"{path!r}: W holds {nz} triplets but i, p, x have "
                                  f"{len(i)}, {len(p)}, {len(x)} entries")
        rows, cols = i[:nz], p[:nz]
        x = x[:nz]
    elif nz in (-1, -2):
        if len(p) != m + 1 or p[0] != 0 or (np.diff(p) < 0).any() or p[-1] > len(i) or \
                p[-1] > len(x):
            raise FileFormatError(f"{path!r}: W's pointers p are not those of a compressed "
                                  f"{'column' if nz == -1 else 'row'} matrix with {m} "
                                  f"{'columns' if nz == -1 else 'rows'}")
        outer = np.repeat(np.arange(m), np.diff(p))
        inner = i[:p[-1]]
        rows, cols = (inner, outer) if nz == -1 else (outer, inner)
    else:
        raise FileFormatError(f"{path!r}: W/nz = {nz} is no CSparse form (-1 CSC, -2 CSR, "
                              ">= 0 triplets)")
    if len(rows) and (rows.min() < 0 or rows.max() >= m or cols.min() < 0 or cols.max() >= m):
        raise FileFormatError(f"{path!r}: W has an index outside 0..{m - 1}")
    return rows.astype(np.int64), cols.astype(np.int64)


def _blocks(path, nc, rows, cols, x, q, mu, info):
    x = x[:len(rows)]
    brow, bcol = rows // 3, cols // 3
    key = brow * nc + bcol
    uniq, inv = np.unique(key, return_inverse=True)
    blocks = np.zeros((len(uniq), 3, 3))
    np.add.at(blocks, (inv, rows % 3, cols % 3), x)          # triplets: duplicates add up
    ubrow, ubcol = uniq // nc, uniq % nc
    indptr = np.searchsorted(ubrow, np.arange(nc + 1)).astype(np.int64)
    is_diag = ubrow == ubcol
    if is_diag.sum() != nc:
        missing = np.setdiff1d(np.arange(nc), ubrow[is_diag])
        raise FileFormatError(f"{path!r}: W has no diagonal block for contact {int(missing[0])}"
                              " (every contact needs its W_aa)")
    return LocalProblem(indptr, ubcol.astype(np.int64), blocks,
                        np.flatnonzero(is_diag).astype(np.int64),
                        q.reshape(nc, 3).copy(), mu.copy(), info.get("title", ""),
                        info.get("description", ""))


def write_solution(path, r, u):
    """/solution/r and /solution/u (flat, normal first), FCLIB's names."""
    h5py = h5py_module()
    with h5py.File(path, "w") as f:
        g = f.create_group("solution")
        g["r"] = np.ascontiguousarray(r, float).reshape(-1)
        g["u"] = np.ascontiguousarray(u, float).reshape(-1)


def solve(problem, solver="gs", local="auto", tol=1e-8, max_iter=1000, omega=1.0, R=None,
          **gs):
    """Solve `problem` from R (zero by default) with a solver of parsolve.solvers.make_solver;
    returns (R, U, report) with U = W R + q and the report's residual as DESIGN.md section 2.
    gs: Gauss-Seidel's adapt, check, stop (GaussSeidel), for solver "gs" only."""
    from ..solvers import Problem, make_solver
    from ..solvers.residual import residual_from_velocity

    options = {"tol": tol, "max_iter": max_iter}
    if solver in ("gs", "hybrid"):
        options["local"] = local
    if solver == "gs":
        options.update(gs, omega=omega)
    elif gs:
        raise InputError(f"fclib.solve: {', '.join(gs)}: Gauss-Seidel's (solver 'gs') "
                         f"only, not for solver {solver!r}")
    s = make_solver(solver, **options)
    R = np.zeros((problem.n, 3)) if R is None else np.array(R, float)
    report = s.solve(Problem.coulomb(problem.indptr, problem.indices, problem.blocks,
                                     problem.diag, problem.q, problem.mu), R)
    U = problem.matvec(R) + problem.q
    report.residual = residual_from_velocity(R, U, problem.q, problem.mu)
    report.converged = report.residual <= tol
    return R, U, report


def from_local_dynamics(ld, title="", description=""):
    """The LocalProblem of one step's local dynamics (this rank's contacts; serial). FCLIB's
    local format holds frictional contacts only: a step with rows of other laws (joints,
    connectors, rolling resistance, bonds) is refused, naming them."""
    from .. import laws

    other = np.flatnonzero(ld.kind != laws.coulomb.KIND)
    if len(other):
        kinds, counts = np.unique(ld.kind[other], return_counts=True)
        named = ", ".join(f"{c} {laws.KINDS[k]}" for k, c in zip(kinds, counts))
        raise InputError(f"FCLIB export: the step has {len(other)} rows of other laws than "
                         f"contacts ({named}); FCLIB's frictional contact format cannot hold "
                         "them (rolling resistance, bonds, joints and connectors have no "
                         "place in its 3-D friction contacts)")
    blocks = ld.blocks.copy()
    # compliant contacts: FCLIB's velocity is their law's, U_N + c R_N (W + c e_N e_N^T)
    blocks[ld.diag, 0, 0] += laws.compliance(ld.kind, ld.param)
    return LocalProblem(ld.indptr.copy(), ld.indices.copy(), blocks, ld.diag.copy(),
                        ld.B.copy(), ld.mu.copy(), title, description)


def export_step(sim, path, step):
    """Write the contact problem of step `step` of Simulation `sim` to FCLIB file `path` (the
    W and q = B that its solver meets): adds a StepExport to the stepper's observers. One
    rank only: W is then the whole problem."""
    step = int(step)
    if sim.comm.size > 1:
        raise InputError("FCLIB export runs on one rank (the problem is written whole): run "
                         "the model without mpirun to export a step")
    if step < 1:
        raise InputError(f"FCLIB export: step must be >= 1, got {step}")
    sim.observers.append(StepExport(path, step))


class StepExport:
    """An observer of a stepper's assemblies that writes step `step`'s problem to `path`."""

    def __init__(self, path, step):
        self.path, self.step = path, step

    def __call__(self, stepper, ld):
        if stepper.step_count + 1 == self.step:
            write(self.path, from_local_dynamics(ld), title=f"step {self.step} of a parsolve run",
                  description=f"t = {stepper.time + stepper.h:.9g} s, {ld.n} contacts, "
                              f"h = {stepper.h:g} s")
