"""Moved to parsolve.parallel.operators (the distributed W routes incidences between ranks);
this name stays for the modules that still import it from here."""
from ..parallel.operators import delassus_matrix, distributed_delassus, pairs_sharing

__all__ = ["delassus_matrix", "distributed_delassus", "pairs_sharing"]
