"""Sums whose result does not depend on how the terms are spread over ranks.

Floating-point addition is not associative, so a plain allreduce of partial sums changes in
the last bits with the number of ranks, and so would a convergence test that reads it. Here
every term is turned into an integer multiple of one global power of two (chosen from the
largest term, so that no sum can overflow 63 bits), integers are summed exactly, and the total
is scaled back. The result is a function of the set of terms alone; its relative accuracy is
about n 2^-62 of the largest term, far below any tolerance a solver uses.
"""
import math

import numpy as np
from mpi4py import MPI


def exact_sums(columns, comm=None):
    """Partition-independent sums of the non-negative columns of `columns` (n, k) -> (k,)."""
    columns = np.asarray(columns, dtype=float)
    if columns.ndim == 1:
        columns = columns[:, None]
    k = columns.shape[1]
    local_max = columns.max(axis=0) if len(columns) else np.zeros(k)
    n_local = len(columns)
    if comm is not None and comm.Get_size() > 1:
        gmax = np.empty(k)
        comm.Allreduce(local_max, gmax, op=MPI.MAX)
        n = comm.allreduce(n_local, op=MPI.SUM)
    else:
        gmax, n = local_max, n_local
    out = np.zeros(k)
    ints = np.zeros(k, dtype=np.int64)
    shifts = np.zeros(k, dtype=np.int64)
    for j in range(k):
        if gmax[j] <= 0 or not np.isfinite(gmax[j]):
            continue
        # terms < 2^e; want n * 2^(e + s) <= 2^62
        e = math.frexp(gmax[j])[1]
        s = 62 - int(math.ceil(math.log2(max(n, 1)))) - e
        shifts[j] = s
        ints[j] = int(np.floor(np.ldexp(columns[:, j], s)).astype(np.int64).sum())
    if comm is not None and comm.Get_size() > 1:
        total = np.empty_like(ints)
        comm.Allreduce(ints, total, op=MPI.SUM)
    else:
        total = ints
    for j in range(k):
        out[j] = math.ldexp(float(total[j]), -int(shifts[j])) if gmax[j] > 0 else (
            gmax[j] if not np.isfinite(gmax[j]) else 0.0)
    return out
