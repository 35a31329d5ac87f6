"""`parsolve measure FILE`: the measures of parsolve.measures taken from a results file's
frames, written as NAME-measures.h5 (plain HDF5), an XDMF index for ParaView (coarse-grained
fields on their grid, force chains as lines, thrust points) and PNG plots.

NAME-measures.h5:
  /frames/step, /frames/time     the frames measured
  /region/<measure>              (frames, cells, ...) every measure of parsolve.measures.region
                                 per frame and cell; attrs: the region (kind, lo, hi, shape or
                                 centre, radius)
  /fields/NNNNNN/<field>         coarse-grained density, momentum, velocity, stress,
                                 stress_contact, stress_kinetic, (nz, ny, nx[, k]) at the
                                 cells' centres (tensors: 9 components, row after row);
                                 /fields attrs: origin, spacing, shape, kernel, width
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
                          c["R"][()], c["gap"][()], h,
                          c["status"][()] if "status" in c else None,
                          c["origin"][()] if "origin" in c else None)
    ends = tables.attach(ends, b)
    return b, ends, h, float(g.attrs["time"]), int(g.attrs["step"])


def frame_indices(f, frames):
    """Frame indices from None (all), an int or a list (negative from the end)."""
    n = f["frames/time"].shape[0]
    if n == 0:
        raise InputError(f"{f.filename!r} has no frames to measure (a run with frames=0)")
    if frames is None:
        return list(range(n))
    out = []
    for k in np.atleast_1d(frames):
        if not -n <= int(k) < n:
            raise InputError(f"no frame {int(k)} (the file has {n})")
        out.append(int(k) % n)
    return out


def measure_file(path, regions=(), grid=None, frames=None, kernel="gaussian", width=None,
                 chains=None, joints=False, out=None, plots=True, **options):
    """Measure the frames `frames` (None: all) of results file `path` (serial): every region
    of `regions` (text forms or region objects), the coarse-grained fields on `grid` (a Grid
    or its text form) with `kernel` and `width`, force chains above `chains` times the mean
    normal force, masonry joints (joints=True). Writes OUT.h5 (default NAME-measures.h5),
    its XDMF and (plots) PNG plots; returns the paths written."""
    from ..measures import coarse, masonry, regions as reg
    from ..measures import chains as chain_mod
    from ..measures.region import measure
    from ..parallel.reduce import exact_binned_sums
    from .hdf5 import h5py_module as _h5py
    from .describe import describe

    def sums(t, c, n):
        return exact_binned_sums(t, c, n)

    describe(path)                                  # refuses foreign or corrupt files
    regions = [reg.parse(r) for r in regions]
    grid = reg.parse(grid) if grid is not None else None
    if grid is not None and not isinstance(grid, reg.Grid):
        raise InputError(f"--grid: a grid (grid:X0,Y0,Z0,X1,Y1,Z1,NX,NY,NZ), got {grid!r}")
    out = out or os.path.splitext(path)[0] + "-measures.h5"
    h5py = _h5py()
    results = {k: [] for k in range(len(regions))}
    steps, times = [], []
    with h5py.File(path, "r") as f, h5py.File(out + ".tmp", "w") as o:
        for k in frame_indices(f, frames):
            b, e, h, t, step = read_frame(f, k)
            steps.append(step)
            times.append(t)
            label = f"{len(steps) - 1:06d}"
            for i, r in enumerate(regions):
                results[i].append(measure(r, b, e, sums, **options))
            if grid is not None:
                g = o.create_group(f"fields/{label}")
                for name, value in coarse.fields(grid, b, e, sums, kernel, width).items():
                    g.create_dataset(name, data=_grid_array(grid, value))
                g.attrs.update(time=t, step=step)
            if chains is not None:
                mean = tables.mean_normal_force(e)
                c = chain_mod.chains(e, chains * mean)
                g = o.create_group(f"chains/{label}")
                for name, value in c.items():
                    g.create_dataset(name, data=value)
                g.attrs.update(time=t, step=step, threshold=chains * mean)
            if joints:
                g = o.create_group(f"joints/{label}")
                for name, value in masonry.joints(e).items():
                    g.create_dataset(name, data=value)
                g.attrs.update(time=t, step=step)
        o["frames/step"] = np.array(steps, np.int64)
        o["frames/time"] = np.array(times, float)
        for i, r in enumerate(regions):
            g = o.create_group(f"region{i}" if len(regions) > 1 else "region")
            for key, value in r.describe().items():
                g.attrs[key] = value
            for name in results[i][0]:
                if name == "force_edges":
                    g.attrs["force_edges"] = results[i][0][name]
                    continue
                g.create_dataset(name, data=np.stack([m[name] for m in results[i]]))
        if grid is not None:
            o["fields"].attrs.update(origin=grid.lo, spacing=grid.spacing,
                                     shape=np.array(grid.shape), kernel=kernel,
                                     width=float(width if width is not None
                                                 else 2.0 * np.max(grid.spacing)))
    os.replace(out + ".tmp", out)
    written = [out, write_measures_xdmf(out)]
    if plots:
        from .plot_measures import plot_measures

        written += plot_measures(out)
    return written


def _grid_array(grid, value):
    """Cell values (ncells, ...) x fastest as (nz, ny, nx) or (nz, ny, nx, k): XDMF's order
    (a tensor's 9 components row after row)."""
    nx, ny, nz = grid.shape
    value = np.asarray(value)
    return value.reshape((nz, ny, nx, -1) if value.ndim > 1 else (nz, ny, nx))


def write_measures_xdmf(out):
    """The XDMF of a measures file: coarse-grained fields on their grid (cell data), force
    chains as lines with their force, masonry joints' thrust points with their normal force
    and state; temporal collections."""
    from xml.sax.saxutils import escape

    from .hdf5 import h5py_module as _h5py
    from .xdmf import _grid, _item

    xdmf = os.path.splitext(out)[0] + ".xdmf"
    ref = escape(os.path.basename(out))
    grids = {"fields": [], "chains": [], "thrust": []}
    with _h5py().File(out, "r") as f:
        if "fields" in f:
            a = f["fields"].attrs
            nx, ny, nz = (int(n) for n in a["shape"])
            origin, spacing = a["origin"], a["spacing"]
            for label in sorted(k for k in f["fields"]):
                g = f[f"fields/{label}"]
                attrs = []
                for name in sorted(g):
                    shape = g[name].shape
                    kind = "Scalar" if len(shape) == 3 else \
                        {3: "Vector", 9: "Tensor"}[shape[3]]
                    attrs.append((name, kind, "Cell", _item(ref, f"fields/{label}/{name}",
                                                            shape)))
                topo = (f'<Topology TopologyType="3DCoRectMesh" '
                        f'Dimensions="{nz + 1} {ny + 1} {nx + 1}"/>')
                geom = ('<Geometry GeometryType="ORIGIN_DXDYDZ">'
                        f'<DataItem Dimensions="3" Format="XML">{origin[2]!r} {origin[1]!r} '
                        f'{origin[0]!r}</DataItem><DataItem Dimensions="3" Format="XML">'
                        f'{spacing[2]!r} {spacing[1]!r} {spacing[0]!r}</DataItem></Geometry>')
                body = "".join(f'<Attribute Name="{n}" AttributeType="{k}" Center="{c}">{i}'
                               "</Attribute>" for n, k, c, i in attrs)
                grids["fields"].append(f'   <Grid Name="fields {label}" GridType="Uniform">'
                                       f'<Time Value="{g.attrs["time"]!r}"/>{topo}{geom}'
                                       f'{body}</Grid>')
        for label in sorted(f.get("chains", {})):
            g = f[f"chains/{label}"]
            n = g["force"].shape[0]
            if not n:
                continue
            top = (f'<Topology TopologyType="Polyline" NodesPerElement="2" '
                   f'NumberOfElements="{n}">'
                   f'{_item(ref, f"chains/{label}/lines", (n, 2), "Int", 8)}</Topology>')
            grids["chains"].append(
                f'   <Grid Name="chains {label}" GridType="Uniform">'
                f'<Time Value="{g.attrs["time"]!r}"/>{top}<Geometry GeometryType="XYZ">'
                f'{_item(ref, f"chains/{label}/points", (2 * n, 3))}</Geometry>'
                f'<Attribute Name="force" AttributeType="Scalar" Center="Cell">'
                f'{_item(ref, f"chains/{label}/force", (n,))}</Attribute></Grid>')
        for label in sorted(f.get("joints", {})):
            g = f[f"joints/{label}"]
            n = g["a"].shape[0]
            if n:
                grids["thrust"].append(_grid(
                    f"thrust {label}", g.attrs["time"], "Polyvertex", n, None,
                    _item(ref, f"joints/{label}/thrust", (n, 3)),
                    [("normal_force", "Scalar", "Node",
                      _item(ref, f"joints/{label}/normal_force", (n,))),
                     ("state", "Scalar", "Node",
                      _item(ref, f"joints/{label}/state", (n,), "Char", 1)),
                     ("force", "Vector", "Node", _item(ref, f"joints/{label}/force", (n, 3)))]))
    parts = ['<?xml version="1.0" ?>', '<Xdmf Version="3.0">', " <Domain>"]
    for name, items in grids.items():
        if items:
            parts.append(f'  <Grid Name="{name}" GridType="Collection" '
                         'CollectionType="Temporal">')
            parts += items + ["  </Grid>"]
    parts += [" </Domain>", "</Xdmf>", ""]
    with open(xdmf, "w") as x:
        x.write("\n".join(parts))
    return xdmf
