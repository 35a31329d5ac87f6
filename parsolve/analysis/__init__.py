"""Constraint analysis: the free motions of constrained bodies (seed 003, Blanding's exact
constraint). Constraint lines -> the operator A (rows (c x d, d), screws.py) -> its null
space by SVD -> free translations, rotations and screws (axis, point, pitch); redundant
lines; a motion check; mechanisms of several bodies; `parsolve dofs MODEL.py`."""
from . import joint_lines  # noqa: F401  (registers the joints' line source)
from .from_model import ModelAnalysis, analyse_model
from .lines import ConstraintLines, contact_lines, line_source
from .mobility import analyse_body, analyse_system, check_motion
from .screws import Chart, Motion, interpret, operator, user_twist

__all__ = ["ConstraintLines", "contact_lines", "line_source", "analyse_body", "analyse_system",
           "check_motion", "analyse_model", "ModelAnalysis", "Chart", "Motion", "interpret",
           "operator", "user_twist"]
