"""Helpers for body generators (Model.sphere_generator): random numbers per body id.

A generator runs on every rank for that rank's share of the ids, so whatever it draws must
depend on the id alone, never on which rank or in which order it is made: hashed_uniform
gives each id its own uniform number (splitmix64 of id and salt), the same on 1 or P ranks.
"""
import numpy as np

from ..tables.keys import GOLDEN, mix

_SALT = np.uint64(0x94D049BB133111EB)


def hashed_uniform(ids, salt=0):
    """Uniform numbers in [0, 1), one per id (shape of ids), a function of (id, salt) only."""
    z = np.asarray(ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = mix(z + np.uint64(salt) * _SALT + GOLDEN)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
