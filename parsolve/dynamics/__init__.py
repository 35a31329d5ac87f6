"""Rigid-body dynamics: the half steps and the velocity update of seed 001's scheme."""
from .rigid import apply_velocity_change, energies, free_velocity, half_step, loads_work, travel

__all__ = ["free_velocity", "half_step", "apply_velocity_change", "energies", "loads_work",
           "travel"]
