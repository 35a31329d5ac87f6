"""Checksums of datasets written in slices by many ranks and read back on any other number.

A dataset's checksum is the sum, modulo 2**64, over all its 8-byte words w_k (rows padded to a
whole number of words, k the word's global position) of splitmix64(w_k + k * GOLDEN). Each
rank sums the words of its own rows, starting at their global offset, and the partial sums
add up to the same value whatever the partition, so a checkpoint written on P ranks is
verified on Q. splitmix64 is a bijection, so changing any one word (any flipped byte or run of
bytes within 8 aligned bytes) always changes the sum; other damage escapes with probability
2**-64. HDF5's Fletcher-32 filter would need chunked, collectively written datasets.
"""
import numpy as np

from ..tables.keys import GOLDEN, mix

MASK = (1 << 64) - 1


def words_per_row(arr):
    row_bytes = arr.dtype.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64))
    return -(-row_bytes // 8)


def partial(arr, first_row, chunk=1 << 16):
    """This slice's share (an int in [0, 2**64)) of the checksum of the dataset whose rows
    first_row, first_row + 1, ... it holds."""
    arr = np.ascontiguousarray(arr)
    n = len(arr)
    if n == 0:
        return 0
    raw = arr.reshape(n, -1).view(np.uint8).reshape(n, -1)
    wpr = words_per_row(arr)
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for lo in range(0, n, chunk):
            block = raw[lo:lo + chunk]
            padded = np.zeros((len(block), 8 * wpr), np.uint8)
            padded[:, :block.shape[1]] = block
            words = padded.view("<u8").reshape(-1)
            k = np.arange((first_row + lo) * wpr, (first_row + lo) * wpr + len(words),
                          dtype=np.uint64)
            total += np.sum(mix(words + k * GOLDEN), dtype=np.uint64)
    return int(total)


def combine(partials):
    """The checksum from every rank's partial sum."""
    return sum(int(p) for p in partials) & MASK


def of_attributes(attrs, names):
    """A checksum of a file's header attributes (their repr, in the order of `names`)."""
    text = repr([(name, _plain(attrs.get(name))) for name in names]).encode()
    return partial(np.frombuffer(text + b"\0" * (-len(text) % 8), np.uint8).reshape(1, -1), 0)


def _plain(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value
