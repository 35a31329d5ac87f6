"""Process environment for the MPI stack, applied before petsc4py or h5py is imported.

Debian's petsc4py lives under the PETSc build named by PETSC_DIR (its .pth file reads it at
interpreter start-up), and Debian's h5py loads its MPI build only when H5PY_ALWAYS_USE_MPI is
set. Both are settled here so that `python model.py`, `parsolve run` and `mpirun ... parsolve`
behave the same. A cluster installation (PETSc from modules) is left as it is.

The BLAS numpy calls runs one thread per process, as parsolve runs one rank per core: a
threaded OpenBLAS spends more time waking its threads than computing a product of 20,000 x 3
by 3 (1.5 ms against 0.13 ms on two busy cores), and under mpirun its threads compete with
the other ranks. A thread count set in the environment (OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, MKL_NUM_THREADS, ...) is the user's and is kept.
"""
import ctypes
import glob
import os
import re
import sys

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
# the loaded BLAS libraries' own setters of their thread count
_SETTERS = (("openblas", "openblas_set_num_threads"), ("mkl_rt", "MKL_Set_Num_Threads"),
            ("blis", "bli_thread_set_num_threads"))


def single_threaded_blas():
    """One thread for the BLAS libraries: the environment's default for those loaded later,
    their setters for those already loaded (numpy imported first); nothing when the user set
    a thread count. Returns the paths of the loaded libraries it set."""
    if any(v in os.environ for v in BLAS_THREADS):
        return []
    for v in BLAS_THREADS:
        os.environ[v] = "1"
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:                             # not Linux: the environment alone
        return []
    done = []
    for path in sorted(set(re.findall(r"(/\S+\.so[\w.]*)", maps))):
        name = os.path.basename(path)
        for stem, setter in _SETTERS:
            if stem in name:
                try:
                    getattr(ctypes.CDLL(path), setter)(1)
                    done.append(path)
                except (OSError, AttributeError):
                    pass
    return done


def configure():
    single_threaded_blas()
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
