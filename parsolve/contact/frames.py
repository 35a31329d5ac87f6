"""Local frames. A frame is stored as rows (n, t1, t2): E @ v gives v's (normal, tangent 1,
tangent 2) components, normal first as in FCLIB and Siconos. The normal points from body B to
body A; t1 is built from n alone, so a persisting contact keeps its frame as n turns slowly
(compiled in kernels/contact.pyx, twin in twins.py)."""
import numpy as np

from .._kernels import compiled
from . import twins

_modules = compiled("contact")
_kernel = _modules[0] if _modules is not None else twins


def frames_from_normals(n):
    """(k, 3) unit normals -> (k, 3, 3) orthonormal frames with rows (n, t1, t2)."""
    return _kernel.frames_from_normals(np.ascontiguousarray(n, float))
