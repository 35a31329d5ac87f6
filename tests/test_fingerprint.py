"""The trajectory fingerprint (tests/fingerprint.py) at 1, 2 and 3 ranks: a refactoring of the
house leaves every bit of the stored runs as it was (positions, orientations, velocities,
reactions, contacts, iterations and residuals of every step)."""
import json
import os
import subprocess
import sys

import pytest

from fingerprint import expected

HERE = os.path.dirname(__file__)
# PETSc's Krylov sums go through BLAS, whose kernels OpenBLAS picks per CPU, and so do the small
# matrix products of the boxes' geometry (on an AVX-512 machine the box case changes with the
# kernel): the cases are recorded with the baseline x86-64 kernels so that they mean the same
# on every machine. numpy's transcendental functions are kept out (tests/test_libm.py).
ENV = dict(os.environ, OPENBLAS_CORETYPE="Prescott", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_runs_are_bit_for_bit_the_stored_ones(ranks):
    cmd = [sys.executable, os.path.join(HERE, "fingerprint.py")]
    if ranks > 1:
        cmd = ["mpirun", "-x", "OPENBLAS_CORETYPE", "-n", str(ranks)] + cmd
    out = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    want = expected(ranks)
    assert set(got) == set(want)
    for case in want:
        for item in want[case]:
            assert got[case][item] == want[case][item], f"{case}: {item} differs at {ranks} ranks"
