"""What parsolve needs of its platform: the process environment for the MPI stack (env.py),
PETSc (petsc.py), the C library's transcendental functions (libm.py, twin libm_twin.py) and
fault injection for the tests (faults.py)."""
