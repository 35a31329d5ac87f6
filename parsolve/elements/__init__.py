"""Elements: the makers of rows besides contact detection (joints, connectors, moving
obstacles and cams, kinematic bodies, time loads), each in one module with its Model commands,
behind one interface (base.py) that the stepper and the run loop iterate over.

Adding an element: its module here (an Element subclass and a Commands mixin), one line in
KINDS, COMMANDS and FINGERPRINT below, and, if its rows need keys of their own, a namespace in
tables/keys.py.
"""
from . import bonds, connectors, drivers, joints, kinematic
from .base import Element, Found, stages

# the run-time kinds, in the order the stepper calls their hooks within a stage (time loads
# before kinematic bodies: a driven body's free velocity replaces what loads gave it)
KINDS = (joints.Joints, connectors.Connectors, drivers.MovingObstacles, drivers.TimeLoads,
         kinematic.Kinematics, bonds.Bonds)
# the Model's commands (mixins of parsolve.Model)
COMMANDS = (joints.JointCommands, kinematic.KinematicCommands, connectors.ConnectorCommands,
            drivers.DriverCommands, bonds.BondCommands)
# what the model's fingerprint hashes of the elements: each group's specs, one JSON document
FINGERPRINT = ((kinematic.state, joints.state), (connectors.state,), (drivers.state,),
               (bonds.state,))


def make(model):
    """The model's elements at run time, in KINDS order (empty ones too: the hooks of an
    element without specs do nothing)."""
    return [kind.from_model(model) for kind in KINDS]


__all__ = ["Element", "Found", "KINDS", "COMMANDS", "FINGERPRINT", "make", "stages"]
