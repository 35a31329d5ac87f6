"""Constraint analysis: the free motions of constrained bodies (null spaces of constraint lines)."""
