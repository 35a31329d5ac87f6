"""What granular and masonry engineers read from a run: measures of regions (packing
fraction, coordination number, Love-Weber stress, fabric, contact forces), force chains,
coarse-grained fields on a grid, and masonry joints with the line of thrust.

Every measure is a pure function of one rank's tables (bodies, contact ends) that returns
terms; the caller sums them exactly (parsolve.parallel.reduce.exact_binned_sums), so the
numbers are the same on any number of ranks. `parsolve measure FILE` (parsolve/io/measures.py)
takes them from a results file; `model.sensor(NAME, region=...)` during a run.
"""
from .regions import Ball, Box, Grid, parse as parse_region, slabs  # noqa: F401
