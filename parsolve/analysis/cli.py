"""`parsolve dofs MODEL.py [--body ID ...] [--contacts] [--check SPEC] [--json] [-- args]`.

Runs the model script as `parsolve run` would, but its `model.run(...)` analyses the model
instead (Model's RUNNER): the free motions of each body with constraint lines, the
mechanism's mobility, and the check of a motion. Also under `mpirun -n P`; rank 0 prints.
"""
import json
import os
import re
import runpy
import sys

from ..errors import InputError
from .screws import RTOL, user_twist

_KEYS = ("axis", "point", "pitch", "translation")


def add_arguments(parser):
    parser.add_argument("script")
    parser.add_argument("--body", type=int, nargs="+", action="extend", metavar="ID",
                        help="analyse these bodies (default: every body with a line)")
    parser.add_argument("--contacts", action="store_true",
                        help="add the contacts at the initial positions as unilateral lines")
    parser.add_argument("--check", metavar="SPEC",
                        help='test a motion: "axis=0,0,1,point=0,0,0,pitch=0" (a rotation or '
                             'screw) or "translation=1,0,0"')
    parser.add_argument("--tol", type=float, default=RTOL,
                        help=f"relative tolerance of ranks and checks (default {RTOL:g})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.epilog = "Arguments after `--` are passed to the script."


def parse_check(text):
    """'axis=0,0,1, point=1,0,0, pitch=0.01' -> {"axis": [0, 0, 1], ...}."""
    spec = {}
    for piece in re.split(r",\s*(?=[A-Za-z_]\w*\s*=)", text.strip()):
        m = re.fullmatch(r"\s*(\w+)\s*=\s*(.*?)\s*", piece)
        if m is None:
            raise InputError(f"--check {text!r}: expected key=value pairs, keys "
                             f"{', '.join(_KEYS)}")
        key, value = m.groups()
        if key not in _KEYS:
            raise InputError(f"--check: unknown key {key!r} (keys: {', '.join(_KEYS)})")
        try:
            numbers = [float(x) for x in re.split(r"[\s,()]+", value.strip("() ")) if x]
        except ValueError:
            raise InputError(f"--check: {key}={value!r} is not a list of numbers") from None
        spec[key] = numbers[0] if key == "pitch" and len(numbers) == 1 else numbers
    return spec


def run(ns):
    from ..model import model as model_module
    from .from_model import analyse_model
    from .report import format_text

    if not os.path.isfile(ns.script):
        raise InputError(f"no model script {ns.script!r}")
    check = parse_check(ns.check) if ns.check else None
    if check is not None:
        user_twist(check, (0.0, 0.0, 0.0))          # a bad motion fails before the script runs
    if not 0 < ns.tol < 1:
        raise InputError(f"--tol must lie in (0, 1), got {ns.tol}")
    calls = []

    def hook(model, duration, step, **options):
        result = analyse_model(model, step, bodies=ns.body, contacts=ns.contacts, check=check,
                               rtol=ns.tol)
        calls.append(result)
        if result is not None:
            print(json.dumps(result.as_dict()) if ns.json else format_text(result), flush=True)
        return result

    saved = model_module.RUNNER, sys.argv, list(sys.path)
    model_module.RUNNER = hook
    sys.argv = [ns.script] + list(ns.args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    try:
        runpy.run_path(ns.script, run_name="__main__")
    finally:
        model_module.RUNNER, sys.argv, sys.path[:] = saved
    if not calls:
        raise InputError(f"{ns.script!r} never calls model.run(...): no model to analyse")
