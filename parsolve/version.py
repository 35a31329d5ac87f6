"""parsolve's release: results files and checkpoints record it (a checkpoint also records its
format, io/checkpoint.py)."""
__version__ = "0.2.0"
