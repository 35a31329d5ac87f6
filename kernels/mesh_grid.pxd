# The mesh's grid of cells, shared by the sphere-mesh and block-mesh kernels.
from libc.math cimport floor

from typedefs cimport index_t


cdef inline bint cell_span(const double* lo_point, const double* hi_point, const double* lower,
                           double cell, const index_t* dims, index_t* lo,
                           index_t* hi) noexcept nogil:
    """The cells lo..hi (per axis, clamped to the grid) that the box lo_point..hi_point
    overlaps; True when it lies outside the grid (no cell)."""
    cdef bint empty = False
    cdef int m
    for m in range(3):
        lo[m] = <index_t>floor((lo_point[m] - lower[m]) / cell)
        hi[m] = <index_t>floor((hi_point[m] - lower[m]) / cell)
        if lo[m] < 0:
            lo[m] = 0
        if hi[m] > dims[m] - 1:
            hi[m] = dims[m] - 1
        if lo[m] > hi[m]:
            empty = True
    return empty
