"""Compiled kernels (built from ../../kernels/*.pyx by setup.py)."""
