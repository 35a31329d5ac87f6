"""Sums whose result does not depend on how the terms are spread over ranks.

Floating-point addition is not associative, so a plain allreduce of partial sums changes in
the last bits with the number of ranks, and so would a convergence test that reads it. Here
every term is turned into an integer multiple of one global power of two (chosen from the
largest term, so that no sum can overflow 63 bits), integers are summed exactly, and the total
is scaled back. The result is a function of the set of terms alone; its relative accuracy is
about n 2^-62 of the largest term, far below any tolerance a solver uses.
"""
import math
import sys

import numpy as np
from mpi4py import MPI

from .._kernels import compiled


def exact_sums(columns, comm=None):
    """Partition-independent sums of the non-negative columns of `columns` (n, k) -> (k,)."""
    columns = np.ascontiguousarray(columns, dtype=float)
    if columns.ndim == 1:
        columns = columns[:, None]
    if comm is None or comm.Get_size() == 1:
        return _kernel.local_sums(columns)
    gmax, n = _global_max_and_count(columns, comm)
    shifts, finite = _scale(gmax, n)
    ints = _kernel.integer_sums(columns, shifts, finite.view(np.int8))
    total = np.empty_like(ints)
    comm.Allreduce(ints, total, op=MPI.SUM)
    return _scaled_back(total, shifts, finite, gmax)


def _global_max_and_count(columns, comm):
    """(each column's largest term over all ranks, the number of rows over all ranks) in one
    collective: every rank's maxima and row count gathered, then reduced here (a maximum and
    an integer sum: exact in any order)."""
    k = columns.shape[1]
    mine = np.empty(k + 1)
    mine[:k] = _kernel.column_max(columns)
    mine[k] = len(columns)
    every = np.empty((comm.Get_size(), k + 1))
    comm.Allgather(mine, every)
    return every[:, :k].max(axis=0), int(every[:, k].sum())


def exact_signed_sums(columns, comm=None):
    """Partition-independent sums of terms of any sign: for each 1-D array of `columns` (of
    any lengths: a rank's per-body and per-contact terms), the sum of its positive parts and
    the sum of its negative parts, (2k,) interleaved. exact_sums of the table of those parts
    (the arrays zero-padded to the longest); on one rank in one compiled pass."""
    if comm is not None and comm.Get_size() > 1:
        return exact_sums(_parts(columns, max(len(c) for c in columns)), comm)
    return _kernel.local_signed([np.ascontiguousarray(c, float) for c in columns])


def _parts(columns, n):
    """The table (n, 2k) of each column's positive and negative parts, side by side, the
    columns zero-padded to n rows."""
    table = np.zeros((n, len(columns), 2))
    for k, c in enumerate(columns):
        table[:len(c), k, 0] = np.maximum(c, 0)
        table[:len(c), k, 1] = np.maximum(-c, 0)
    return table.reshape(n, 2 * len(columns))


def local_signed(columns):
    """The twin of kernels/reduce.pyx's local_signed: exact_signed_sums of the 1-D arrays
    `columns` on one rank (zero rows add nothing to either part)."""
    return local_sums(_parts(columns, max(len(c) for c in columns)))


def local_sums(columns):
    """exact_sums on one rank (the twin of kernels/reduce.pyx's)."""
    gmax = column_max(columns)
    shifts, finite = _scale(gmax, len(columns))
    return _scaled_back(integer_sums(columns, shifts, finite.view(np.int8)), shifts, finite,
                        gmax)


def _scale(gmax, n):
    """(shifts, finite): each column's power of two from its largest term over all ranks
    (terms < 2^e; n * 2^(e + s) <= 2^62, so no sum overflows), and which columns are finite
    (one that is not is not summed: its nan or +inf is the sum)."""
    finite = np.isfinite(gmax)
    shifts = 62 - int(math.ceil(math.log2(max(n, 1)))) - np.frexp(gmax)[1]
    return shifts.astype(np.int64), finite


def _scaled_back(total, shifts, finite, gmax):
    """The sums from the integer totals: 0 where the largest term is not positive, the
    largest term where it is not finite."""
    out = np.ldexp(total.astype(float), -shifts)
    summed = finite & (gmax > 0)
    return out if summed.all() else np.where(summed, out, np.where(finite, 0.0, gmax))


def exact_binned_sums(terms, bins, nbins, comm=None):
    """Partition-independent sums of the rows of `terms` (n, k), any signs, by bin: (nbins, k),
    out[b] the sum of the rows whose bins == b (rows with a bin outside [0, nbins) are left
    out). The same integer scaling as exact_sums, per column: a function of the set of
    (bin, row) terms alone, so equal on any number of ranks. A bin's sum with a term that is
    not finite is NaN (on every rank alike: nothing is raised between the collectives)."""
    terms = np.asarray(terms, dtype=float)
    terms = terms[:, None] if terms.ndim == 1 else terms
    bins = np.asarray(bins, np.int64)
    keep = (bins >= 0) & (bins < nbins)
    terms, bins = terms[keep], bins[keep]
    k = terms.shape[1]
    finite = np.isfinite(terms)
    terms = np.where(finite, terms, 0.0)
    local_max = np.abs(terms).max(axis=0) if len(terms) else np.zeros(k)
    if comm is not None and comm.Get_size() > 1:
        gmax = np.empty(k)
        comm.Allreduce(local_max, gmax, op=MPI.MAX)
        n = comm.allreduce(len(terms), op=MPI.SUM)
    else:
        gmax, n = local_max, len(terms)
    shifts = 61 - int(math.ceil(math.log2(max(n, 1)))) - np.frexp(gmax)[1]
    ints = np.rint(np.ldexp(terms, shifts[None, :])).astype(np.int64)   # unbiased
    total = np.zeros((2, nbins, k), np.int64)          # the sums, and the terms not finite
    if len(bins):                                      # integer sums: any order is exact
        order = np.argsort(bins, kind="stable")
        b = bins[order]
        start = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        total[0, b[start]] = np.add.reduceat(ints[order], start, axis=0)
        total[1, b[start]] = np.add.reduceat((~finite[order]).astype(np.int64), start, axis=0)
    if comm is not None and comm.Get_size() > 1:
        out = np.empty_like(total)
        comm.Allreduce(total, out, op=MPI.SUM)
        total = out
    return np.where(total[1] > 0, np.nan, np.ldexp(total[0].astype(float), -shifts[None, :]))


def column_max(columns):
    """The largest term of each column of `columns` (n, k); zeros for n = 0 (the twin of
    kernels/reduce.pyx's)."""
    return columns.max(axis=0) if len(columns) else np.zeros(columns.shape[1])


def integer_sums(columns, shifts, summed):
    """Per column c with summed[c]: the sum of floor(term * 2^shifts[c]) as int64, 0
    elsewhere (the twin of kernels/reduce.pyx's)."""
    terms = np.ldexp(columns.T, shifts[:, None])
    terms[~np.asarray(summed, bool)] = 0.0
    return np.floor(terms).sum(axis=1, dtype=np.int64)


_modules = compiled("reduce")
_kernel = _modules[0] if _modules is not None else sys.modules[__name__]
