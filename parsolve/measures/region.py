"""Measures of a region's cells: packing fraction, coordination number, Love-Weber stress,
fabric tensor, contact forces, density and mean velocity.

Each is a sum of terms, one per body or per contact end (parsolve.measures.tables), made here
from this rank's tables and summed by the caller's `sums(terms, cells, ncells)`: exact sums
(parallel/reduce.py) make the numbers independent of how bodies and contacts are spread over
ranks. Conventions (SI, world frame):

- a body is in a cell when its centre is; a contact (row) when its point is;
- packing fraction phi = (solid volume in the cell) / (cell volume): spheres by their exact
  overlap volume with the cell (no boundary error); other shapes whole when their centre is
  in, with the error bound packing_error = (volume of those whose bounding sphere crosses the
  cell's boundary) / (cell volume);
- a contact is active when its normal force exceeds contact_force (default 0 N: an iterative
  solver's round-off can leave a contact that carries nothing with a tiny force; give a small
  force to leave those out), or, given contact_gap, when its gap is at most contact_gap (the
  geometric contacts of a crystal at rest without load);
- coordination Z = (sum over the cell's bodies of their active body-body contact partners,
  each partner once however many points the pair has) / (number of bodies); the mechanical
  coordination leaves out rattlers, bodies with fewer than min_contacts partners (Thornton's
  convention with min_contacts = 2): Z_m = sum of their partners / their number;
- Love-Weber stress, compression positive: sigma_ij = (1/V) sum over the ends of the cell's
  bodies of f_i l_j, with f the contact force on the body and l = x - c from the contact point
  c to the body's centre x (for two bodies in the cell, the two ends add up to the branch
  vector x_A - x_B with A's force: sigma = (1/V) sum f_c (x) l_c; at a wall, l runs from the
  contact point to the centre); f = R / h, the impulse over the step. The kinetic part (1/V)
  sum m v' (x) v', v' the velocity less the cell's mean, is given apart (stress_kinetic);
- fabric F = sum n (x) n / (number of such ends) over the active body-body contact points of
  the cell's bodies (a pair with several points weighs by its points);
- contact forces: mean and standard deviation of the normal force of the cell's active
  body-body contact points, and (force_histogram) their distribution in units of the mean.
"""
import numpy as np

from . import tables

COLUMNS = {"bodies": 1, "solid": 1, "bound": 1, "mass": 1, "momentum": 3, "mvv": 9,
           "stress": 9, "fabric": 9, "fabric_ends": 1, "contacts": 1, "fn": 1, "fn2": 1,
           "partners": 1, "mech_bodies": 1, "mech_partners": 1}
OFFSETS = dict(zip(COLUMNS, np.cumsum([0] + list(COLUMNS.values()))[:-1]))
WIDTH = sum(COLUMNS.values())


class _Terms:
    """Rows of terms (one per body or end and cell), filled by column name."""

    def __init__(self):
        self.rows, self.cells = [], []

    def add(self, cells, **columns):
        cells = np.asarray(cells, np.int64)
        t = np.zeros((len(cells), WIDTH))
        for name, values in columns.items():
            o = OFFSETS[name]
            values = np.asarray(values, float)
            t[:, o:o + COLUMNS[name]] = values if values.ndim == 0 else \
                values.reshape(len(cells), COLUMNS[name])
        self.rows.append(t)
        self.cells.append(cells)

    def stack(self):
        if not self.rows:
            return np.zeros((0, WIDTH)), np.zeros(0, np.int64)
        return np.concatenate(self.rows), np.concatenate(self.cells)


def active(ends, contact_gap=None, contact_force=0.0):
    """The ends of active contacts (see the module's docstring)."""
    return ends["gap"] <= contact_gap if contact_gap is not None else \
        ends["fn"] > contact_force


def terms(region, bodies, ends, contact_gap=None, min_contacts=2, contact_force=0.0):
    """(terms (n, WIDTH), cells (n,)) of this rank's bodies and ends (ends with their
    centres attached; every end of a body on the rank that holds the body's other ends)."""
    T = _Terms()
    x, v, m = bodies["x"], bodies["v"], bodies["mass"]
    cell = region.locate(x)
    at = np.flatnonzero(cell >= 0)
    T.add(cell[at], bodies=1.0, mass=m[at], momentum=m[at, None] * v[at],
          mvv=m[at, None, None] * v[at, :, None] * v[at, None, :])
    sphere = bodies["shape"] == 0
    s = np.flatnonzero(sphere)
    rows, cells, vol = region.sphere_volumes(x[s], bodies["radius"][s])
    T.add(cells, solid=vol)
    o = np.flatnonzero(~sphere & (cell >= 0))
    T.add(cell[o], solid=bodies["volume"][o])
    o = np.flatnonzero(~sphere)
    rows, cells = region.straddling(x[o], bodies["radius"][o])
    T.add(cells, bound=bodies["volume"][o][rows])
    # ends: stress of the cell's bodies, fabric, forces
    ec = region.locate(ends["x"])
    at = np.flatnonzero(ec >= 0)
    T.add(ec[at], stress=ends["force"][at, :, None] * (ends["x"][at] - ends["point"][at])
          [:, None, :])
    act = active(ends, contact_gap, contact_force) & ~tables.wall(ends)
    at = np.flatnonzero(act & (ec >= 0))
    n = ends["normal"][at]
    T.add(ec[at], fabric=n[:, :, None] * n[:, None, :], fabric_ends=1.0)
    pc = region.locate(ends["point"])
    at = np.flatnonzero(act & ends["first"] & (pc >= 0))
    fn = ends["fn"][at]
    T.add(pc[at], contacts=1.0, fn=fn, fn2=fn * fn)
    # coordination: distinct active partners per body
    at = np.flatnonzero(act & (ec >= 0))
    if len(at):
        key = np.stack([ends["gid"][at], ends["partner"][at]], axis=1)
        key, first = np.unique(key, axis=0, return_index=True)
        body, start, count = np.unique(key[:, 0], return_index=True, return_counts=True)
        bcell = ec[at][first][start]
        mech = count >= min_contacts
        T.add(bcell, partners=count, mech_bodies=mech, mech_partners=np.where(mech, count, 0))
    return T.stack()


def finish(region, sums, kinetic=False):
    """The measures of every cell from the summed terms `sums` (ncells, WIDTH): a dict of
    arrays with one row per cell (see the module's docstring)."""
    col = {k: sums[:, o:o + COLUMNS[k]] for k, o in OFFSETS.items()}
    V = region.volume
    N = col["bodies"][:, 0]
    M = col["mass"][:, 0]

    def ratio(a, b):
        b = np.asarray(b, float)
        shape = (-1,) + (1,) * (np.ndim(a) - 1)
        return np.divide(a, b.reshape(shape), out=np.full(np.shape(a), np.nan),
                         where=b.reshape(shape) > 0)

    momentum = col["momentum"]
    mvv = col["mvv"].reshape(-1, 3, 3)
    kin = (mvv - ratio(momentum[:, :, None] * momentum[:, None, :], M)) / V[:, None, None]
    kin = np.where(M[:, None, None] > 0, kin, 0.0)
    contact = col["stress"].reshape(-1, 3, 3) / V[:, None, None]
    stress = contact + kin if kinetic else contact
    nc = col["contacts"][:, 0]
    mean = ratio(col["fn"][:, 0], nc)
    var = ratio(col["fn2"][:, 0], nc) - mean * mean
    return {"volume": V, "bodies": N, "mass": M, "density": M / V,
            "velocity": ratio(momentum, M),
            "packing": col["solid"][:, 0] / V, "packing_error": col["bound"][:, 0] / V,
            "coordination": ratio(col["partners"][:, 0], N),
            "coordination_mechanical": ratio(col["mech_partners"][:, 0],
                                             col["mech_bodies"][:, 0]),
            "rattlers": ratio(N - col["mech_bodies"][:, 0], N),
            "stress": stress, "stress_contact": contact, "stress_kinetic": kin,
            "pressure": np.trace(stress, axis1=1, axis2=2) / 3.0,
            "fabric": ratio(col["fabric"].reshape(-1, 3, 3), col["fabric_ends"][:, 0]),
            "contacts": nc, "mean_force": mean, "force_std": np.sqrt(np.maximum(var, 0.0))}


EDGES = np.append(np.linspace(0.0, 5.0, 21), np.inf)     # normal force / mean: bins of 0.25


def histogram_terms(region, ends, mean, contact_gap=None, contact_force=0.0, edges=EDGES):
    """(terms (n, bins), cells) of the distribution of the active body-body contact points'
    normal force in units of their cell's mean `mean` (ncells,) (a second pass: the mean
    first)."""
    act = active(ends, contact_gap, contact_force) & ~tables.wall(ends) & ends["first"]
    pc = region.locate(ends["point"])
    at = np.flatnonzero(act & (pc >= 0))
    m = np.asarray(mean)[pc[at]]
    ratio = np.divide(ends["fn"][at], m, out=np.zeros(len(at)), where=m > 0)
    b = np.clip(np.searchsorted(edges, ratio, side="right") - 1, 0, len(edges) - 2)
    t = np.zeros((len(at), len(edges) - 1))
    t[np.arange(len(at)), b] = 1.0
    return t, pc[at]


def measure(region, bodies, ends, sums, contact_gap=None, min_contacts=2, kinetic=False,
            histogram=True, contact_force=0.0):
    """Every measure of the region's cells from this rank's bodies and ends (centres
    attached), reduced through sums(terms, cells, ncells)."""
    t, c = terms(region, bodies, ends, contact_gap, min_contacts, contact_force)
    out = finish(region, sums(t, c, region.ncells), kinetic)
    if histogram:
        t, c = histogram_terms(region, ends, out["mean_force"], contact_gap, contact_force)
        counts = sums(t, c, region.ncells)
        out["force_histogram"] = np.rint(counts)
        out["force_edges"] = EDGES
    return out
