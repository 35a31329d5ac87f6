"""`parsolve measure FILE`: the measures of parsolve.measures taken from a results file's
frames, written as NAME-measures.h5 (plain HDF5), an XDMF index for ParaView (coarse-grained
fields on their grid, force chains as lines, thrust points) and PNG plots.

NAME-measures.h5:
  /frames/step, /frames/time     the frames measured
  /region/<measure>              (frames, cells, ...) every measure of parsolve.measures.region
                                 per frame and cell; attrs: the region (kind, lo, hi, shape or
                                 centre, radius)
  /fields/NNNNNN/<field>         coarse-grained density, momentum, velocity, stress (cells of
                                 the grid, x fastest); attrs: kernel, width; /fields/grid attrs
  /chains/NNNNNN/points, lines, force   force-chain segments (centre to contact point)
  /joints/NNNNNN/<column>        masonry joints (parsolve.measures.masonry)
"""
import os

import numpy as np

from ..errors import InputError
from .. import shapes
from ..measures import tables


def read_frame(f, k):
    """(bodies table, ends with centres, step size, time, step) of frame k of an open
    results file (all bodies: serial post-processing)."""
    g = f[f"frames/{k:06d}"]
    h = float(f.attrs["step_size"])
    b = {name: g[f"bodies/{name}"][()] for name in ("gid", "x", "v", "radius", "shape")}
    model = f["model/bodies"]
    mg = model["gid"][()]
    o = np.argsort(mg)
    at = o[np.searchsorted(mg[o], b["gid"])]
    b["mass"] = model["mass"][()][at]
    half = model["half"][()][at]
    b["volume"] = tables.body_volumes(b["shape"], b["radius"], half)
    poly = np.flatnonzero(b["shape"] == shapes.POLYHEDRON)
    if len(poly) and "polyhedra" in g:
        p = g["polyhedra"]
        vol = tables.polygon_volumes(p["vertices"][()], p["topology"][()], p["gid"][()])
        b["volume"][poly] = [vol.get(int(i), np.nan) for i in b["gid"][poly]]
    c = g["contacts"]
    ends = tables.ends_of(c["k1"][()], c["k2"][()], c["point"][()], c["frame"][()],
                          c["R"][()], c["gap"][()], h)
    ends = tables.attach(ends, b)
    return b, ends, h, float(g.attrs["time"]), int(g.attrs["step"])


def frame_indices(f, frames):
    """Frame indices from None (all), an int or a list (negative from the end)."""
    n = f["frames/time"].shape[0]
    if frames is None:
        return list(range(n))
    out = []
    for k in np.atleast_1d(frames):
        if not -n <= int(k) < n:
            raise InputError(f"no frame {int(k)} (the file has {n})")
        out.append(int(k) % n)
    return out
