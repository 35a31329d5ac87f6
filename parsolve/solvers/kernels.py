"""The kernels the solvers call: the compiled ones, or their pure-Python twins (the same names
and arguments) when PARSOLVE_KERNELS=python (or when the extension is not built, with a
warning). Sweeps and Newton's per-row parts: parsolve/solvers/twins.py; one-row kernels:
parsolve/laws."""
from .. import laws
from .._kernels import compiled
from ..laws import coulomb, coulomb_local, roots
from . import twins

NAMES = ("gauss_seidel_sweep", "delassus_residual", "gauss_seidel_rows",
         "body_gauss_seidel_sweep", "body_residual", "body_apply", "alart_curnier",
         "project_admissible", "newton_parts", "slope_parts", "jacobian_blocks",
         "body_sweep_traffic", "body_gauss_seidel_rows", "local_solve", "row_solve",
         "natural_map", "project_cone", "slide_quartic", "poly_real_roots")
TWINS = {
    **{name: getattr(twins, name) for name in NAMES[:13]},
    "local_solve": coulomb_local.local_solve, "row_solve": laws.row_solve,
    "natural_map": coulomb.natural_map, "project_cone": coulomb.project_cone,
    "slide_quartic": coulomb_local.slide_quartic, "poly_real_roots": roots.poly_real_roots,
}

_modules = compiled("sweep", "newton", "rows")
COMPILED = _modules is not None
if COMPILED:
    _found = {name: getattr(m, name) for m in _modules for name in NAMES if hasattr(m, name)}
    assert set(_found) == set(NAMES), sorted(set(NAMES) - set(_found))
else:
    _found = TWINS
globals().update(_found)

__all__ = list(NAMES) + ["COMPILED", "TWINS"]
