"""parsolve: MPI-parallel nonsmooth contact dynamics of rigid bodies.

A model is a Python script: build a Model (bodies, surface materials, obstacles, loads,
elements) and call model.run(duration, step, ...), which makes a Simulation (parsolve/run: the
loop around parsolve/stepping's step) and runs it. Run the script with `parsolve run
model.py`, also under mpirun. ARCHITECTURE.md says where everything lives.
"""
from .platform import env as _env

_env.configure()

from .version import __version__  # noqa: E402
from .errors import (CollectiveError, FileFormatError, InputError, ParsolveError,  # noqa: E402
                     StorageError)
from .model import Model  # noqa: E402
from .solvers import GaussSeidel, Hybrid, InteriorPoint, SemismoothNewton, make_solver  # noqa: E402
from .run import Simulation  # noqa: E402


def rank():
    """This process's rank in MPI_COMM_WORLD (0 without mpirun): for scripts that branch."""
    from .parallel.comm import world_rank_size

    return world_rank_size()[0]


def size():
    """The number of ranks of the run (1 without mpirun)."""
    from .parallel.comm import world_rank_size

    return world_rank_size()[1]


__all__ = ["rank", "size", "Simulation", "Model", "GaussSeidel", "SemismoothNewton", "Hybrid",
           "InteriorPoint",
           "make_solver", "ParsolveError", "InputError", "CollectiveError", "FileFormatError",
           "StorageError", "__version__"]
