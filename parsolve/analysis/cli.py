"""`parsolve dofs MODEL.py ...` (placeholder: filled in by the constraint-analysis work)."""


def add_arguments(parser):
    parser.add_argument("script")


def run(ns):
    from ..errors import InputError

    raise InputError("parsolve dofs: not implemented yet")
