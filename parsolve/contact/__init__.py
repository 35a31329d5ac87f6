"""Contact detection: broad phase (cell grid), narrow phase per shape pair, local frames, and a
contact set whose keys stay the same while a contact persists (warm start)."""
from .contactset import ContactSet
from .detect import detect

__all__ = ["ContactSet", "detect"]
