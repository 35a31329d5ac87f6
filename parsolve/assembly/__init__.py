"""Local dynamics U = B + W R: H blocks, the linked-interaction map, W = H M^-1 H^T, B."""
from .local_dynamics import LocalDynamics

__all__ = ["LocalDynamics"]
