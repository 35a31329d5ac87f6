"""The numbers the kernels and Python share, stated once: interaction kinds, the outcomes of a
local solve (which solver produced the row's reaction) and the local solvers of a sweep.

setup.py writes kernels/codes.pxd from this file (plain literals only: it is read without
importing parsolve), so that the compiled enums and these tuples cannot drift apart.
"""
KINDS = ("coulomb", "bilateral", "spring", "connector", "rolling", "bond")
OUTCOMES = ("takeoff", "stick", "slide", "projection", "failed", "quartic", "newton",
            "bilateral", "spring", "connector", "rolling", "bond")
METHODS = ("auto", "projection", "quartic", "newton", "warm")
# a row's status in the results' frames (ParaView's cell data "status")
STATUS = ("open", "sticking", "sliding", "bilateral", "spring", "connector", "rolling", "bonded",
          "broken")
