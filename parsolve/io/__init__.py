"""Output: the per-run results file (history and frames, HDF5), progress and the run summary."""
from .results import ResultsWriter, read_history

__all__ = ["ResultsWriter", "read_history"]
