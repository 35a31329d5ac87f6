"""Build of the Cython kernels. Sources live in top-level kernels/; modules land in parsolve._kernels.

Compiler directives are set once here. PARSOLVE_DEBUG_KERNELS=1 turns bounds checks back on.
"""
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("PARSOLVE_DEBUG_KERNELS") == "1"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
}
MODULES = ["cone", "sweep", "body_sweep", "newton"]

extensions = [
    Extension(
        f"parsolve._kernels.{name}",
        [f"kernels/{name}.pyx"],
        include_dirs=[numpy.get_include(), "kernels"],
        extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in MODULES
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, include_path=["kernels"]))
