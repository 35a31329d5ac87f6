"""What a solver solves: one object for C(U, R) = 0 with U = B + W R, whatever W's form.

A Problem holds the rows' free velocities B and laws (kind, param: parsolve.laws), and W in
the form its maker has: block CSR rows (a serial problem, e.g. from an FCLIB file) or applied
through the bodies (U = B + H du, du = M^-1 H^T R, a step's LocalDynamics, over the ranks:
the colour schedule orders the sweep and exchanges du, `sums` adds per-row squares exactly
over the ranks). A solver asks it for a sweep, the residual and, for Newton, W as a PETSc
matrix (`operator`, given by the parallel layer for a distributed step); it never sees the
decomposition.
"""
import numpy as np

from .. import laws
from ..parallel.colouring import ColourSchedule
from ..parallel.reduce import exact_sums
from ..tables.keys import mix
from . import kernels
from .residual import coulomb_rows, residual_from_parts


class Problem:
    """Use Problem.rows, Problem.coulomb or Problem.coupled to make one."""

    def __init__(self, B, kind, param, sums=exact_sums):
        self.B = np.ascontiguousarray(B, float)
        self.kind = np.ascontiguousarray(kind, np.int8)
        self.param = np.ascontiguousarray(param, float)
        self.n = len(self.B)
        self.sums = sums

    def shuffle_keys(self):
        """One 64-bit key per row from its global identity (cached): a shuffled sweep orders
        the rows by a hash of these keys and a seed, never by their local index."""
        if getattr(self, "_shuffle_keys", None) is None:
            self._shuffle_keys = self._row_keys()
        return self._shuffle_keys

    def _cached(self, salt, make):
        """The shuffled order of `salt`, made once (a solve shuffled once reuses it)."""
        if getattr(self, "_shuffled", (None,))[0] != salt:
            self._shuffled = (salt, make())
        return self._shuffled[1]

    def gauss_seidel(self, R, counts, omega, method, tol, max_iter, salt=None, sync=False):
        """Sweeps until the residual reaches tol or max_iter sweeps are done, the residual
        measured before and after each: (sweeps, residual). Sweep k goes in the problem's
        order, or with salt (a function of k) in the shuffled order of salt(k). sync: first
        self.sync(R). Collective in parallel: every rank runs the same number of sweeps."""
        if sync:
            self.sync(R)
        err, it = self.residual(R), 0
        while err > tol and it < max_iter:
            self.sweep(R, counts, omega, method, salt and salt(it))
            it += 1
            err = self.residual(R)
        return it, err

    def sweeps(self, R, k, counts):
        """k sweeps in the problem's order (omega 1, the default local solver)."""
        for _ in range(k):
            self.sweep(R, counts)

    def change(self, R_before, R):
        """The relative change of the reactions over a sweep measured in velocities, as
        LMGC90's "Quad" check measures it: sqrt(sum_a |W_aa dR_a|^2 / sum_a |W_aa R_a|^2),
        dR = R - R_before, W_aa the rows' diagonal blocks (`diagonal`: the velocity each row's
        own reaction, and its change, give it), the sums exact over the ranks (so every rank
        reads the same number). Zero where no reaction changed; infinite where every reaction
        went to zero and one changed. Each row's terms are written out, with no reduction
        whose order could depend on the array's layout."""
        W = self.diagonal()
        dR = R - R_before
        parts = np.empty((self.n, 2))
        for col, X in ((0, dR), (1, R)):
            v = W[:, :, 0] * X[:, 0:1] + W[:, :, 1] * X[:, 1:2] + W[:, :, 2] * X[:, 2:3]
            parts[:, col] = v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]
        d, r = self.sums(parts)
        if r > 0.0:
            return float(np.sqrt(d / r))
        return 0.0 if d == 0.0 else np.inf

    def diagonal(self):
        """W_aa (n, 3, 3): each row's own block."""
        raise NotImplementedError

    # -- makers ------------------------------------------------------------------------------
    @classmethod
    def rows(cls, indptr, indices, blocks, diag, B, kind, param, order=None):
        """W as serial block CSR rows (row a's blocks blocks[indptr[a]:indptr[a+1]] in the
        columns indices[...], diag[a] at W_aa); a sweep visits the rows in `order`."""
        return _Rows(indptr, indices, blocks, diag, B, kind, param, order)

    @classmethod
    def coulomb(cls, indptr, indices, blocks, diag, B, mu, order=None):
        """Block CSR rows of contacts of friction mu (FCLIB's frictional contact problems)."""
        return _Rows(indptr, indices, blocks, diag, B, *coulomb_rows(np.asarray(mu, float)),
                     order)

    @classmethod
    def coupled(cls, ld, du, schedule=None, sums=None, operator=None, keys=None):
        """W through the bodies of LocalDynamics ld; du (bodies, 6) starts at zero and ends
        M^-1 H^T R. operator() -> (W as a PETSc Mat over the ranks, this rank's first row):
        the parallel layer's (parsolve.parallel.operators); default: serial, from ld's rows.
        keys: the rows' global keys (k1, k2), which with their colours order them canonically
        (canonical)."""
        return _Coupled(ld, du, schedule, sums, operator, keys)

    def canonical(self, W, indptr, indices):
        """The rows of W (a PETSc Mat over the ranks; this rank's block rows indptr, indices)
        met on rank 0 in an order that does not depend on the distribution
        (parsolve.parallel.canonical.CanonicalRows; collective), or None when the problem
        has no such order."""
        return None


class _Rows(Problem):
    restates = False                 # Newton's own residual is the one it reports

    def __init__(self, indptr, indices, blocks, diag, B, kind, param, order):
        super().__init__(B, kind, param)
        # the columns the laws' solves read (the stepper's rows have them already)
        self.param = laws.solve_params(self.kind, self.param)
        self.indptr = np.asarray(indptr, np.int64)
        self.indices = np.asarray(indices, np.int64)
        self.blocks = np.ascontiguousarray(blocks, float).reshape(-1, 3, 3)
        self.diag = np.asarray(diag, np.int64)
        self.order = np.arange(self.n, dtype=np.int64) if order is None else order
        self._U = np.empty((self.n, 3))

    def sync(self, R):
        """Nothing to bring up to date: W R is applied from R itself."""

    def sweep(self, R, counts, omega=1.0, method=0, salt=None):
        """One sweep in `order`, or (salt: a uint64) in the order of the rows' hashes."""
        order = self.order if salt is None else self._cached(
            salt, lambda: shuffled(self.order, self.shuffle_keys(), salt))
        return kernels.gauss_seidel_sweep(self.indptr, self.indices, self.blocks, self.diag,
                                          self.B, self.kind, self.param, R, order,
                                          omega, counts, method)

    def gauss_seidel(self, R, counts, omega, method, tol, max_iter, salt=None, sync=False):
        """As Problem.gauss_seidel; in the problem's order the whole loop is one compiled
        call (sync: nothing to bring up to date)."""
        if salt is not None:
            return super().gauss_seidel(R, counts, omega, method, tol, max_iter, salt)
        return kernels.gauss_seidel_rows(self.indptr, self.indices, self.blocks, self.diag,
                                         self.B, self.kind, self.param, R, self._U, self.order,
                                         omega, counts, method, tol, max_iter)

    def _row_keys(self):
        return mix(np.arange(self.n, dtype=np.uint64))

    def diagonal(self):
        """W_aa (n, 3, 3)."""
        return self.blocks[self.diag]

    def residual(self, R):
        return kernels.delassus_residual(self.indptr, self.indices, self.blocks, self.B,
                                         self.kind, self.param, R, self._U)[0]

    def operator(self):
        """(W on PETSc's COMM_SELF, first row 0, and W's block rows)."""
        from ..parallel.operators import delassus_matrix
        from ..platform.petsc import PETSc

        W = delassus_matrix(self.indptr, self.indices, self.blocks, PETSc.COMM_SELF)
        return W, 0, (self.indptr, self.indices, self.blocks)


class _Coupled(Problem):
    restates = True                  # the residual from the bodies, as the sweeps state it

    def __init__(self, ld, du, schedule, sums, operator, keys):
        super().__init__(ld.B, ld.kind, ld.param, sums or exact_sums)
        self.ld, self.du = ld, du
        self.schedule = schedule or ColourSchedule.single(ld.n)
        self._operator = operator
        self._keys = keys
        self._inc = (ld.inc_ptr, ld.inc_body)
        self._U, self._parts = np.empty((self.n, 3)), np.empty((self.n, 4))

    def sync(self, R):
        """du = M^-1 H^T R, colour by colour (the exchanges give every copy of a body its
        du)."""
        self.du[:] = 0.0
        if not self.n and self.schedule.serial:     # no rows, no exchange: du = 0
            return
        self.schedule.visit(lambda order: kernels.body_apply(*self._inc, self.ld.K, R, self.du,
                                                             order))

    def gauss_seidel(self, R, counts, omega, method, tol, max_iter, salt=None, sync=False):
        """As Problem.gauss_seidel; on one rank (a schedule without exchanges: its rows are
        all there are, and their exact sums this rank's) the whole loop, sync included, is
        one compiled call, the same iterates and residuals bit for bit."""
        if salt is not None or not self.schedule.serial:
            return super().gauss_seidel(R, counts, omega, method, tol, max_iter, salt, sync)
        if not self.n:                              # the compiled loop's answer for no rows
            if sync:
                self.sync(R)
            return 0, 0.0
        ld = self.ld
        return kernels.body_gauss_seidel_rows(*self._inc, ld.H, ld.K, ld.Wdiag, self.B,
                                              self.kind, self.param, R, self.du, self._U,
                                              self._parts, self.schedule.whole(), omega,
                                              counts, method, tol, max_iter, sync)

    def sweeps(self, R, k, counts):
        """Problem.sweeps; on one rank one compiled call (gauss_seidel's loop run for k
        sweeps: the same iterates bit for bit), plain sweeps for what is left should its
        residual stop being a number."""
        if k > 0 and self.schedule.serial:
            done, _ = self.gauss_seidel(R, counts, 1.0, 0, -np.inf, k)
            k -= done
        super().sweeps(R, k, counts)

    def sweep(self, R, counts, omega=1.0, method=0, salt=None):
        """One sweep in the schedule's order, or (salt: a uint64) with the colours in the order
        of their hashes and each colour's rows in the order of theirs, its boundary and
        interior parts apart: every rank visits the colours alike, rows of one cell keep one
        relative order on any number of ranks, rows of different cells of one colour share no
        body, so the iterates stay those of one rank bit for bit."""
        ld = self.ld

        def relax(order):
            kernels.body_gauss_seidel_sweep(*self._inc, ld.H, ld.K, ld.Wdiag, self.B, self.kind,
                                            self.param, R, self.du, order, omega, counts,
                                            method)
        if salt is None:
            if self.schedule.loop is not None:       # the same, colour loop compiled
                self.schedule.loop(*self._inc, ld.H, ld.K, ld.Wdiag, self.B, self.kind,
                                   self.param, R, self.du, omega, counts, method)
            else:
                self.schedule.visit(relax)
            return
        s = self.schedule
        keys = self.shuffle_keys()
        colours, sequence = self._cached(salt, lambda: (
            [np.concatenate([shuffled(o[:k], keys, salt), shuffled(o[k:], keys, salt)])
             for o, k in zip(s.colours, s.boundary)],
            shuffled(np.arange(len(s.colours)), np.arange(len(s.colours), dtype=np.uint64),
                     salt)))
        for c in sequence:                   # the colours in a shuffled sequence, each with
            k = s.boundary[c]                # its own exchange (as ColourSchedule.visit)
            if k:
                relax(colours[c][:k])
            if s._start is not None:
                s._start(c)
            if k < len(colours[c]):
                relax(colours[c][k:])
            if s._finish is not None:
                s._finish(c)

    def canonical(self, W, indptr, indices):
        """Problem.canonical: the rows by (colour, k1, k2), the order in which one rank stores
        them (the sweep order); None without keys."""
        if self._keys is None:
            return None
        from ..parallel.canonical import CanonicalRows

        colour = np.empty(self.n, np.int64)
        for c, rows in enumerate(self.schedule.colours):
            colour[rows] = c
        keys = np.column_stack([colour, *(np.asarray(k, np.int64) for k in self._keys)])
        return CanonicalRows.over(W, keys, indptr, indices)

    def diagonal(self):
        """W_aa (n, 3, 3), from the bodies' H and K."""
        return self.ld.Wdiag

    def _row_keys(self):
        """A row's key from the global ids of its bodies (smaller, larger; -1 for one body):
        rows between the same bodies tie, and a stable sort keeps their key order."""
        ptr, body = self.ld.inc_ptr, self.ld.inc_body
        gid = np.asarray(self.ld._gid, np.int64)[body]
        count = np.diff(ptr)
        lo = np.full(self.n, -1, np.int64)
        hi = np.full(self.n, -1, np.int64)
        has = count > 0
        if has.any():
            start = ptr[:-1][has]
            lo[has] = np.minimum.reduceat(gid, start)
            hi[has] = np.maximum.reduceat(gid, start)
        hi[count < 2] = -1
        return mix(mix(lo.astype(np.uint64) + np.uint64(1)) + hi.astype(np.uint64))

    def residual(self, R):
        kernels.body_residual(*self._inc, self.ld.H, self.B, self.kind, self.param, R, self.du,
                              self._U, self._parts)
        return residual_from_parts(self.sums(self._parts))

    def operator(self):
        """(W as a PETSc Mat over the ranks, this rank's first row, its block rows with
        global columns); W is None on one rank, where the rows are all of W (the caller makes
        the Mat from them, linear.Workspace)."""
        if self._operator is None:
            indptr, indices, blocks, _ = self.ld.rows
            return None, 0, (indptr, indices, blocks)
        W, first, csr = self._operator()
        return W, first, block_csr(W) if csr is None else csr


def shuffle_salt(seed, sweep):
    """The uint64 that orders sweep `sweep` of a solve shuffled with `seed`."""
    return mix(mix(np.uint64(seed)) + np.uint64(sweep))[()]


def shuffled(order, keys, salt):
    """`order` sorted by the hashes of its rows' keys with `salt` (stable: equal keys keep
    their order)."""
    if len(order) < 2:
        return order
    return order[np.argsort(mix(keys[order] ^ salt), kind="stable")]


def block_csr(W):
    """The local block rows of a BAIJ matrix (bs 3) as (indptr, global block columns,
    blocks (nnz, 3, 3))."""
    ai, aj, av = W.getValuesCSR()
    cnt = np.diff(ai)[0::3] // 3
    indptr = np.concatenate([[0], np.cumsum(cnt)]).astype(np.int64)
    prow = np.repeat(np.arange(len(ai) - 1), np.diff(ai))
    pos = np.arange(len(aj)) - ai[prow]
    blocks = np.empty((indptr[-1], 3, 3))
    blocks[indptr[prow // 3] + pos // 3, prow % 3, pos % 3] = av
    first = (prow % 3 == 0) & (pos % 3 == 0)
    return indptr, (aj[first] // 3).astype(np.int64), blocks
