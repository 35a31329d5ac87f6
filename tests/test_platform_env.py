"""The process environment parsolve settles at import (parsolve/platform/env.py): one BLAS
thread per process unless the user set a count, whether numpy was imported first or not."""
import os
import subprocess
import sys

import pytest

PROBE = """
import ctypes, sys
{first}
import parsolve
import numpy
libs = sorted({{line.split()[-1] for line in open('/proc/self/maps')
               if 'openblas' in line and '.so' in line}})
if not libs:
    print('none')
    sys.exit(0)
print(ctypes.CDLL(libs[0]).openblas_get_num_threads())
"""


def _threads(first, env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
                          "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="Linux's /proc only")
@pytest.mark.parametrize("first", ["", "import numpy"], ids=["parsolve first", "numpy first"])
def test_blas_runs_one_thread_unless_the_user_says_otherwise(first):
    got = _threads(first, {})
    if got == "none":
        pytest.skip("numpy's BLAS is not OpenBLAS here")
    assert got == "1"
    assert _threads(first, {"OPENBLAS_NUM_THREADS": "2"}) == "2"
