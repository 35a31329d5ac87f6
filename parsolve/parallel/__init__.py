"""The parallel layer, where MPI lives: the communicator and collective errors (comm), exact
sums (reduce), the partition (partition), ownership, migration and ghosts (domain), the
sweep's exchange (halo, colouring) and the distributed W (operators). It imports no physics:
the physics modules receive a `Comm`, tables of rows and the exchange and sum functions."""
from .comm import Comm

__all__ = ["Comm"]
