"""The run of a model: the loop around the steps (simulation.py: frames, sensors,
checkpoints, STOP, signals, progress), restarts (restart.py) and the summary (report.py)."""
from ..model import model as _model
from .simulation import EXIT_SIGNAL, Overrides, Simulation, catch_stop_signals, run

_model.RUNNER = run             # Model.run runs a Simulation (the model imports no run)

__all__ = ["run", "Simulation", "Overrides", "catch_stop_signals", "EXIT_SIGNAL"]
