"""parsolve.platform.libm: the C library's sin, cos, exp, log, arcsin, arctan2 and power, the same bits on
every CPU, compiled and twin alike; and nothing that feeds a trajectory takes numpy's own,
whose AVX-512 code (SVML, on CPUs with AVX512_SKX) gives other last bits."""
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from parsolve.platform import libm

from parsolve.platform import libm_twin

HERE = os.path.dirname(__file__)
SOURCE = os.path.join(HERE, "..", "parsolve")
SPECIAL = [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1.0, -1.0, 0.5, 2.0 ** 60, -(2.0 ** 60), 710.0,
           -745.0, math.pi, -math.pi / 2, math.inf, -math.inf, math.nan]
MATH = {"sin": math.sin, "cos": math.cos, "exp": math.exp, "log": math.log,
        "arcsin": math.asin, "arctan2": math.atan2, "power": math.pow}


def _same(a, b):
    """Bit for bit (signed zeros apart), NaN where the other is NaN."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.int64),
                                                                b[~nan].view(np.int64))


def _inputs(name, rng):
    x = np.concatenate([rng.uniform(-50, 50, 3000), rng.normal(0, 1e-3, 500), SPECIAL])
    if name == "log":
        x = np.abs(x)
    if name == "arcsin":
        x = np.clip(x / 50, -1, 1)
    return x


@pytest.mark.parametrize("name", libm.NAMES)
def test_compiled_and_twin_are_the_c_library_bit_for_bit(name):
    from parsolve._kernels import libm as compiled

    rng = np.random.default_rng(7)
    x = _inputs(name, rng)
    if name == "power":
        args = (np.abs(x), np.concatenate([np.full(len(x) // 2, 3.0), [-1.0, 0.5, -3.0],
                                           rng.uniform(-3, 3, len(x) - len(x) // 2 - 3)]))
    else:
        args = (x,) if name != "arctan2" else (x, _inputs(name, rng)[::-1].copy())
    got = getattr(compiled, name)(*args)
    assert _same(getattr(libm_twin, name)(*args), got)
    assert _same(getattr(libm, name)(*(a.reshape(-1, 1) for a in args)).reshape(-1), got)
    checked = 0
    for k, v in enumerate(zip(*(a.tolist() for a in args))):
        try:
            want = MATH[name](*v)                     # the C library, through Python
        except (ValueError, OverflowError):
            continue
        assert _same(got[k], want), (name, v)
        checked += 1
    assert checked > 3000


def test_shapes_and_scalars():
    assert libm.sin(0.5) == math.sin(0.5) and isinstance(libm.sin(0.5), float)
    assert libm.cos(np.zeros((2, 3))).shape == (2, 3)
    assert libm.arctan2([[1.0], [2.0]], [3.0, 4.0]).shape == (2, 2)
    assert libm.power(np.array([2.0, 3.0]), 3.0).tolist() == [8.0, 27.0]


NUMPY_CALL = re.compile(r"\bnp\.(sin|cos|tan|arcsin|arccos|arctan|arctan2|sinh|cosh|tanh|exp|"
                        r"exp2|expm1|log|log2|log10|log1p|power|float_power|cbrt)\(")
# x ** p on an array, p other than 2, 0.5, -1, 1, 0: numpy's power ufunc
ODD_POWER = re.compile(r"[A-Za-z_\])] ?\*\* ?(?!0?\.5\b|2\b|-?1\b|0\b)[0-9.(]")


def test_no_numpy_transcendental_in_parsolve():
    """numpy's sin, exp, power, ... (and ** other than 2, 0.5, ±1 on an array) take SVML's
    AVX-512 code on some CPUs; parsolve calls parsolve.platform.libm instead."""
    found = []
    for root, _, files in os.walk(SOURCE):
        for f in files:
            if not f.endswith(".py") or f.startswith("libm"):
                continue
            path = os.path.join(root, f)
            for k, line in enumerate(open(path), 1):
                code = line.split("#")[0]
                if NUMPY_CALL.search(code) or ("np." in code and ODD_POWER.search(code)):
                    found.append(f"{os.path.relpath(path, SOURCE)}:{k}: {line.strip()}")
    assert not found, "\n".join(found)


def _avx512_skx():
    from numpy.core._multiarray_umath import __cpu_features__
    return __cpu_features__.get("AVX512_SKX", False)


@pytest.mark.skipif(not _avx512_skx(), reason="numpy takes no AVX-512 code on this CPU")
def test_trajectories_do_not_depend_on_numpy_avx512():
    """The fingerprint runs (tests/fingerprint.py) with numpy's AVX-512 code and without it
    (NPY_DISABLE_CPU_FEATURES): the same bits, which a call of numpy's sin, exp or power on a
    trajectory's path breaks."""
    runs = []
    for disable in ("", "AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"):
        env = dict(os.environ, OPENBLAS_CORETYPE="Prescott", NPY_DISABLE_CPU_FEATURES=disable)
        out = subprocess.run([sys.executable, os.path.join(HERE, "fingerprint.py")], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout[out.stdout.index("{"):]))
    assert runs[0] == runs[1]
