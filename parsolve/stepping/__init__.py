"""One time step: the stepper (stepper.py), projection on constraints (projection.py) and the
physics guards (guards.py)."""
