"""Compatibility: the contact rows are parsolve.interactions.Interactions."""
from ..interactions import FEATURES, OBSTACLE_CODES, ContactSet, Interactions  # noqa: F401
