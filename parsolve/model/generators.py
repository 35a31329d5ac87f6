"""Helpers for body generators (Model.sphere_generator): random numbers per body id.

A generator runs on every rank for that rank's share of the ids, so whatever it draws must
depend on the id alone, never on which rank or in which order it is made: hashed_uniform
gives each id its own uniform number (splitmix64 of id and salt), the same on 1 or P ranks.
"""
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def hashed_uniform(ids, salt=0):
    """Uniform numbers in [0, 1), one per id (shape of ids), a function of (id, salt) only."""
    z = np.asarray(ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(salt) * _M2 + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
