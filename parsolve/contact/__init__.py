"""Contact detection: broad phase (cell grid), narrow phase per shape pair, local frames; the
contacts' keys stay the same while a contact persists (warm start)."""
from .detect import detect

__all__ = ["detect"]
