"""Rigid-body dynamics: the half steps and the velocity update of seed 001's scheme."""
from .rigid import free_velocity, half_step, apply_impulses

__all__ = ["free_velocity", "half_step", "apply_impulses"]
