"""What the user describes: bodies, shapes, surface materials, obstacles and loads (the
elements' commands come with the elements, parsolve/elements)."""
from .model import Model

__all__ = ["Model"]
