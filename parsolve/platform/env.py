"""Process environment for the MPI stack, applied before petsc4py or h5py is imported.

Debian's petsc4py lives under the PETSc build named by PETSC_DIR (its .pth file reads it at
interpreter start-up), and Debian's h5py loads its MPI build only when H5PY_ALWAYS_USE_MPI is
set. Both are settled here so that `python model.py`, `parsolve run` and `mpirun ... parsolve`
behave the same. A cluster installation (PETSc from modules) is left as it is.
"""
import glob
import os
import sys


def configure():
    os.environ.setdefault("H5PY_ALWAYS_USE_MPI", "1")
    if "PETSC_DIR" not in os.environ:
        found = sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real"))
        if found:
            os.environ["PETSC_DIR"] = found[-1]
    petsc_dir = os.environ.get("PETSC_DIR")
    if petsc_dir:
        site = os.path.join(petsc_dir, "lib", "python3", "dist-packages")
        if os.path.isdir(site) and site not in sys.path:
            sys.path.append(site)
