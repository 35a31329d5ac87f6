"""h5py, after the process environment for the MPI stack is settled (platform/env.py: Debian's
h5py loads its MPI build only when H5PY_ALWAYS_USE_MPI is set): every file parsolve reads or
writes goes through it."""


def h5py_module():
    from ..platform import env

    env.configure()
    import h5py

    return h5py
