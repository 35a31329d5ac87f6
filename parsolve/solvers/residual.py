"""The residual every solver reports, stated once (DESIGN.md section 2; Siconos' error):

    error = sqrt(sum_a |e_a|^2) / max(|B|, |R|, |U|),

e_a the natural-map residual of row a under its law (parsolve.laws.residual_vector; for a
contact r - P_K(r - (u_N + mu |u_T|, u_T))), the norms over all rows of all ranks. The kernels
give per-row squares, summed exactly over ranks (parsolve.parallel.reduce.exact_sums).
"""
import math

import numpy as np

from .. import laws


def residual_from_parts(sums):
    """The residual from the summed squares (e, B, R, U)."""
    e, b, r, u = (math.sqrt(max(x, 0.0)) for x in sums)
    den = max(b, r, u)
    return e / den if den > 0.0 else e


def residual(R, U, B, kind, param):
    """The residual of rows of any laws from given U = W R + B (serial, vectorised)."""
    if len(R) == 0:
        return 0.0
    err = math.sqrt(float(np.sum(laws.residual_vector(kind, param, R, U) ** 2)))
    den = max(float(np.linalg.norm(B)), float(np.linalg.norm(R)), float(np.linalg.norm(U)))
    return err / den if den > 0 else err


def residual_from_velocity(R, U, B, mu):
    """The residual of contact rows of friction mu (FCLIB problems: contacts only)."""
    return residual(R, U, B, *coulomb_rows(mu))


def coulomb_rows(mu):
    """(kind, param) of contact rows with friction mu, as the kernels take them."""
    rows = laws.coulomb.rows(mu, 0.0)
    return rows["kind"], laws.solve_params(rows["kind"], rows["param"])
