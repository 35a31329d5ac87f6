"""What the user describes: bodies, shapes, surface materials, obstacles and loads."""
from .bodies import BOX, SPHERE, BodySet
from .model import Model

__all__ = ["Model", "BodySet", "SPHERE", "BOX"]
