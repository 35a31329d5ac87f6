"""Compiled kernels (built from ../../kernels/*.pyx by setup.py), and the one switch between
them and their pure-Python twins."""
import importlib
import os
import warnings


def compiled(*names, warn=True):
    """The compiled modules parsolve._kernels.<name>, in order; None when PARSOLVE_KERNELS=python
    asks for the pure-Python twins, or when one is not built (with a warning unless not warn)."""
    if os.environ.get("PARSOLVE_KERNELS", "").lower() == "python":
        return None
    try:
        return [importlib.import_module(f"{__name__}.{name}") for name in names]
    except ImportError as exc:
        if warn:
            warnings.warn(f"parsolve: compiled kernels unavailable ({exc}); using pure Python. "
                          "Run `make build`.", stacklevel=3)
        return None
