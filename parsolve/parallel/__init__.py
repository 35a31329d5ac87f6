"""The parallel layer: communicators, collective error handling (partition, ghosts and
migration arrive with the domain-decomposition work). Physics modules receive a `Comm` and
never call MPI themselves."""
from .comm import Comm, world

__all__ = ["Comm", "world"]
