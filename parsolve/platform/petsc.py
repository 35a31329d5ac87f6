"""petsc4py, initialised once with the options a user passes through PARSOLVE_PETSC_OPTIONS."""
import os
import shlex
import sys

from . import env as _env

_env.configure()

import petsc4py  # noqa: E402

petsc4py.init([sys.argv[0]] + shlex.split(os.environ.get("PARSOLVE_PETSC_OPTIONS", "")))
from petsc4py import PETSc  # noqa: E402

__all__ = ["PETSc"]
