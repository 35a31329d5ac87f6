"""Exact sums (parsolve/parallel/reduce.py): the same bits whatever the order and the split
of the terms; here against the column-by-column form they replaced."""
import math
import warnings

import numpy as np

from parsolve.parallel.reduce import exact_sums


def exact_sums_by_column(columns):
    """exact_sums (serial) as it was, column by column: the bit-for-bit reference (except that
    a column with an infinite term now sums to inf, not 0)."""
    columns = np.asarray(columns, dtype=float)
    if columns.ndim == 1:
        columns = columns[:, None]
    k = columns.shape[1]
    gmax = columns.max(axis=0) if len(columns) else np.zeros(k)
    n = len(columns)
    out = np.zeros(k)
    ints = np.zeros(k, dtype=np.int64)
    shifts = np.zeros(k, dtype=np.int64)
    for j in range(k):
        if gmax[j] <= 0 or not np.isfinite(gmax[j]):
            continue
        e = math.frexp(gmax[j])[1]
        s = 62 - int(math.ceil(math.log2(max(n, 1)))) - e
        shifts[j] = s
        ints[j] = int(np.floor(np.ldexp(columns[:, j], s)).astype(np.int64).sum())
    for j in range(k):
        out[j] = math.ldexp(float(ints[j]), -int(shifts[j])) if 0 < gmax[j] < np.inf else (
            gmax[j] if not np.isfinite(gmax[j]) else 0.0)
    return out


def test_exact_sums_equal_the_column_by_column_sums_bit_for_bit():
    rng = np.random.default_rng(7)
    cases = [np.zeros((0, 3)), rng.random(1), rng.random(17), np.array([[2.0 ** -1074, 0.0]])]
    for n in (1, 2, 3, 50, 1000, 4097):
        for k in (1, 2, 5, 7):
            # per column a scale from 1e-300 to 1e300 and terms spread over 30 decades
            X = rng.random((n, k)) ** 20 * 10.0 ** rng.integers(-300, 300, k)
            X[rng.random((n, k)) < 0.1] = 0.0
            cases.append(X)
    X = rng.random((40, 6))
    X[:, 1] = 0.0                                   # nothing to sum
    X[3, 2], X[5, 3] = np.nan, np.inf               # not finite: nan and inf
    X[:, 4] = np.floor(X[:, 4] * 2 ** 20)           # integers
    cases.append(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for X in cases:
            got, want = exact_sums(X), exact_sums_by_column(X)
            assert got.shape == want.shape and got.tobytes() == want.tobytes(), (X.shape, got, want)


def test_the_compiled_exact_sums_equal_their_twins():
    """kernels/reduce.pyx's column_max, integer_sums and local_sums (one rank's exact sums in
    C) against reduce.py's twins: columns of wide magnitudes, with NaN and infinity, zeros,
    empty ones."""
    import pytest
    from parsolve._kernels import compiled
    from parsolve.parallel import reduce

    modules = compiled("reduce")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, k = int(rng.integers(0, 40)), int(rng.integers(1, 5))
        c = np.abs(rng.normal(size=(n, k))) * 10.0 ** rng.uniform(-30, 30, (1, k))
        if n and rng.random() < 0.3:
            c[rng.integers(0, n), rng.integers(0, k)] = rng.choice([np.nan, np.inf])
        np.testing.assert_array_equal(modules[0].column_max(c), reduce.column_max(c))
        gmax = reduce.column_max(c)
        shifts = (56 - np.frexp(np.where(np.isfinite(gmax), gmax, 0.0))[1]).astype(np.int64)
        summed = np.isfinite(gmax).view(np.int8)
        np.testing.assert_array_equal(modules[0].integer_sums(c, shifts, summed),
                                      reduce.integer_sums(c, shifts, summed))
        if n and rng.random() < 0.2:
            c[:, 0] = 0.0
        got, want = modules[0].local_sums(c), reduce.local_sums(c)
        assert got.tobytes() == want.tobytes()


def test_the_integer_sums_floor_as_libm_does_at_every_shift():
    """integer_sums' compiled floor of term * 2^shift (one multiplication and a truncation
    where 2^shift is a normal double, ldexp and floor elsewhere) against the twin's numpy
    ldexp and floor: terms of both signs with and without a fraction, exact integers, terms
    whose product is subnormal, and shifts from -1100 to 1100 (beyond the normal range)."""
    from parsolve.parallel import reduce

    rng = np.random.default_rng(6)
    for trial in range(400):
        n = int(rng.integers(1, 30))
        e = int(rng.integers(-1070, 1000))
        c = np.ldexp(rng.normal(size=(n, 1)), e)
        c[::3] = np.ldexp(np.round(np.ldexp(c[::3], -e)), e)            # exact multiples
        if trial % 4 == 0:
            c[0] = -np.ldexp(1.0, e)                                     # a negative integer
        top = int(np.frexp(np.abs(c).max())[1])
        shift = 60 - top - int(rng.integers(0, 3)) if trial % 2 else \
            int(rng.integers(0, 8)) - top                  # products of a few units: fractions
        if trial % 10 == 0:
            shift = int(rng.choice([-1100, -1023, -1022, 1023, 1024, 1100]))
            c = np.ldexp(c, -max(0, top + shift - 60))                   # no overflow
        shifts = np.array([shift], np.int64)
        summed = np.ones(1, np.int8)
        with np.errstate(all="ignore"):
            want = reduce.integer_sums(c, shifts, summed)
        np.testing.assert_array_equal(reduce._kernel.integer_sums(c, shifts, summed), want)


def test_signed_sums_equal_the_sums_of_the_split_table_kernel_and_twin():
    """exact_signed_sums (the energies' sums of terms of any sign): the compiled local_signed,
    its twin and exact_sums of the table of positive and negative parts give the same bits,
    over columns of many scales with nan, infinities and zeros of either sign; columns of
    several lengths sum as the zero-padded table."""
    from parsolve.parallel import reduce

    rng = np.random.default_rng(1)
    special = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    for trial in range(300):
        n, k = int(rng.integers(0, 50)), int(rng.integers(1, 5))
        v = rng.normal(size=(n, k)) * rng.choice([1e-300, 1e-3, 1.0, 1e300], size=(1, k))
        if trial % 5 == 0 and n:
            v[rng.integers(0, n), 0] = special[trial % len(special)]
        table = np.stack([np.maximum(v, 0), np.maximum(-v, 0)], axis=2).reshape(n, 2 * k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = exact_sums(table)
            columns = [np.ascontiguousarray(c) for c in v.T]
            twin = reduce.local_signed(columns)
            got = reduce._kernel.local_signed(columns)
            whole = reduce.exact_signed_sums(list(v.T))
        for x in (got, twin, whole):
            np.testing.assert_array_equal(x, want)
    a, b = rng.normal(size=7), rng.normal(size=3)
    padded = np.zeros((7, 2))
    padded[:, 0], padded[:3, 1] = a, b
    want = exact_sums(np.stack([np.maximum(padded, 0), np.maximum(-padded, 0)], axis=2)
                      .reshape(7, 4))
    for got in (reduce.exact_signed_sums([a, b]), reduce.local_signed([a, b]),
                reduce._kernel.local_signed([a, b])):
        np.testing.assert_array_equal(got, want)
