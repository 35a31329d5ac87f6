"""The kernels the solvers call: the compiled ones, or their pure-Python twins when
PARSOLVE_KERNELS=python (or when the extension is not built, with a warning)."""
import os
import warnings

from . import reference

_use_python = os.environ.get("PARSOLVE_KERNELS", "").lower() == "python"
try:
    if _use_python:
        raise ImportError("PARSOLVE_KERNELS=python")
    from .._kernels.cone import local_solve, natural_map, project, quartic_slide, real_roots
    from .._kernels.sweep import delassus_residual, gauss_seidel_sweep
    from .._kernels.body_sweep import body_apply, body_gauss_seidel_sweep, body_residual
    from .._kernels.newton import (alart_curnier, jacobian_blocks, newton_parts,
                                   project_into_cones, slope_parts)
    COMPILED = True
except ImportError as exc:
    if not _use_python:
        warnings.warn(f"parsolve: compiled kernels unavailable ({exc}); using pure Python. "
                      "Run `make build`.")
    gauss_seidel_sweep = reference.gauss_seidel_sweep
    delassus_residual = reference.delassus_residual
    body_gauss_seidel_sweep = reference.body_gauss_seidel_sweep
    body_residual = reference.body_residual
    body_apply = reference.body_apply
    local_solve = reference.local_solve
    quartic_slide = reference.slide_quartic
    real_roots = reference.poly_real_roots
    natural_map = reference.natural_map
    project = reference.project_cone
    alart_curnier = reference.alart_curnier_into
    newton_parts = reference.newton_parts
    slope_parts = reference.slope_parts
    jacobian_blocks = reference.jacobian_blocks
    project_into_cones = reference.project_into_cones
    COMPILED = False

__all__ = ["gauss_seidel_sweep", "delassus_residual", "body_gauss_seidel_sweep", "body_residual",
           "body_apply", "local_solve", "natural_map", "project", "quartic_slide", "real_roots",
           "alart_curnier", "newton_parts", "slope_parts", "jacobian_blocks", "project_into_cones",
           "COMPILED"]
