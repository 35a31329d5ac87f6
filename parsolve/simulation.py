"""`Simulation`, the run of a model: a Stepper (stepper.py: one step's stages) with the loop
around its steps (run.py: frames, checkpoints, signals, progress) and its summary
(report.py). This module keeps the names scripts and tests import from it."""
from .report import MEMORY, format_summary
from .run import EXIT_SIGNAL, GUARD_LINES, Overrides, Simulation, catch_stop_signals
from .stepper import PHASES, Stepper

__all__ = ["Simulation", "Stepper", "Overrides", "catch_stop_signals",
           "format_summary", "EXIT_SIGNAL", "GUARD_LINES", "MEMORY", "PHASES"]
