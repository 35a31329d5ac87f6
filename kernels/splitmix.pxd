# splitmix64's finaliser, the hash of the contact features (parsolve/contact/polyhedra.py's
# mix on Python ints): one definition for the kernels that cimport it.
from libc.stdint cimport uint64_t


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)
