"""An XDMF index of a results file, so ParaView (or VisIt, or VTK's vtkXdmfReader) opens the
frames directly.

Temporal collections:
  "bodies"   every body as a point: id, shape, material, radius (Glyph filter, scale by
             radius), velocity, angular_velocity, orientation (the rotation matrix, body
             axes as columns: a tensor, as XDMF has no 4-component type for a quaternion);
  "boxes"    hexahedra from their 8 vertices, with cell data id, material, velocity,
             angular_velocity, orientation;
  "contacts" points: force (world frame), normal, R (local, normal first), gap, status
             (0 open, 1 sticking, 2 sliding);
  "contact_polygons" one cell per contact pair (polygon of its points, a line for 2, a vertex
             for 1), with cell data force (the pair's total on A, world frame), normal,
             normal_force (force . normal), tangential_force, points (their number), k1, b
             (the pair: A's id, B's code as in the contact keys); only when the model has
             polyhedral bodies (every pair of the run then, of any shapes);
  "polyhedra" convex polyhedra drawn by their faces (XDMF Mixed polygons: a closed surface
             per block), with per-face data id, material, velocity, angular_velocity;
  "compounds", "clumps"  compound bodies by their parts: their blocks' faces as polygons
             (as "polyhedra"), their spheres as points with id, material, radius (Glyph
             filter, scale by radius) and velocity;
  "obstacles" the fixed shapes drawn as cells (fixed boxes: hexahedra; fixed polyhedra and
             meshes: their faces), with cell data obstacle (its index) and material; the
             still ones the same at every time, the moving ones (model.move) at their pose
             in each frame; only when the model has some.
Heavy data stay in the HDF5 file; the XDMF only points at datasets (through the results
index, so it reads what the index holds).
"""
import os
from xml.sax.saxutils import escape

from .. import shapes

CELL_SHAPES = [s for s in shapes.KINDS.values() if s.CELLS is not None]
POLYGON_GROUPS = [s.POLYGONS["group"] for s in shapes.KINDS.values() if s.POLYGONS is not None]
POINT_GROUPS = [s.POINTS["group"] for s in shapes.KINDS.values()
                if getattr(s, "POINTS", None) is not None]

# (attribute name, dataset, XDMF attribute type, number type, precision, components)
BODY_ATTRIBUTES = (("id", "gid", "Scalar", "Int", 8, 1), ("shape", "shape", "Scalar", "Char", 1, 1),
                   ("material", "material", "Scalar", "Int", 4, 1),
                   ("radius", "radius", "Scalar", "Float", 8, 1),
                   ("velocity", "v", "Vector", "Float", 8, 3),
                   ("angular_velocity", "w", "Vector", "Float", 8, 3),
                   ("orientation", "rotation", "Tensor", "Float", 4, 9))
CELL_ATTRIBUTES = (("id", "gid", "Scalar", "Int", 8, 1),        # bodies drawn as cells
                   ("material", "material", "Scalar", "Int", 4, 1),
                   ("velocity", "v", "Vector", "Float", 8, 3),
                   ("angular_velocity", "w", "Vector", "Float", 8, 3),
                   ("orientation", "rotation", "Tensor", "Float", 4, 9))
POLYGON_ATTRIBUTES = CELL_ATTRIBUTES[:4]                # a polyhedron's faces: its data
OBSTACLE_ATTRIBUTES = (("obstacle", "obstacle", "Scalar", "Int", 8, 1),
                       ("material", "material", "Scalar", "Int", 4, 1))
PART_ATTRIBUTES = (("id", "gid", "Scalar", "Int", 8, 1),           # parts drawn as points
                   ("material", "material", "Scalar", "Int", 4, 1),
                   ("radius", "radius", "Scalar", "Float", 8, 1),
                   ("velocity", "v", "Vector", "Float", 8, 3))
CONTACT_ATTRIBUTES = (("force", "force", "Vector", "Float", 8, 3),
                      ("normal", "normal", "Vector", "Float", 8, 3),
                      ("R", "R", "Vector", "Float", 8, 3), ("gap", "gap", "Scalar", "Float", 8, 1),
                      ("status", "status", "Scalar", "Char", 1, 1))

POLYGON_CONTACT_ATTRIBUTES = (("force", "force", "Vector", "Float", 8, 3),
                              ("normal", "normal", "Vector", "Float", 8, 3),
                              ("normal_force", "normal_force", "Scalar", "Float", 8, 1),
                              ("tangential_force", "tangential_force", "Vector", "Float", 8, 3),
                              ("points", "points", "Scalar", "Int", 8, 1),
                              ("k1", "k1", "Scalar", "Int", 8, 1), ("b", "b", "Scalar", "Int", 8, 1))


def write_xdmf(results_path, xdmf_path=None):
    from .hdf5 import h5py_module

    h5py = h5py_module()
    xdmf_path = xdmf_path or os.path.splitext(results_path)[0] + ".xdmf"
    ref = os.path.relpath(results_path, os.path.dirname(os.path.abspath(xdmf_path)))
    grids = {"bodies": [], **{s.CELLS["group"]: [] for s in CELL_SHAPES},
             **{group: [] for group in POLYGON_GROUPS + POINT_GROUPS},
             "contacts": [], "contact_polygons": [], "obstacles": []}
    with h5py.File(results_path, "r") as f:
        frames = f["frames"]
        for k, t in enumerate(frames["time"][()]):
            g = frames[f"{k:06d}"]
            path = f"frames/{k:06d}"
            n = g["bodies/x"].shape[0]
            if n:
                grids["bodies"].append(_grid(
                    f"bodies {k}", t, "Polyvertex", n, None,
                    _item(ref, f"{path}/bodies/x", (n, 3)),
                    _attributes(ref, g, f"{path}/bodies", n, BODY_ATTRIBUTES, "Node")))
            for shape in CELL_SHAPES:
                group = shape.CELLS["group"]
                nb = g[f"{group}/connectivity"].shape[0] if group in g else 0
                if nb:
                    grids[group].append(_cells(f"{group} {k}", t, shape, ref, g,
                                               f"{path}/{group}", nb, CELL_ATTRIBUTES))
            for group in POLYGON_GROUPS:
                if group in g and g[f"{group}/topology"].shape[0]:
                    grids[group].append(_polygons(f"{group} {k}", t, ref, g, f"{path}/{group}",
                                                  POLYGON_ATTRIBUTES))
            for group in POINT_GROUPS:
                npart = g[f"{group}/x"].shape[0] if group in g else 0
                if npart:
                    grids[group].append(_grid(
                        f"{group} {k}", t, "Polyvertex", npart, None,
                        _item(ref, f"{path}/{group}/x", (npart, 3)),
                        _attributes(ref, g, f"{path}/{group}", npart, PART_ATTRIBUTES,
                                    "Node")))
            # the obstacles: the still ones from the model, the moving ones at their pose
            places = [("model/obstacles/still", "fixed"), (f"{path}/obstacles", "moving")] \
                if "obstacles" in g else [("model/obstacles", "fixed")]
            for base, what in places:
                for shape in CELL_SHAPES:
                    at = f"{base}/{shape.CELLS['group']}"
                    if at in f:
                        grids["obstacles"].append(_cells(
                            f"obstacles {k}" if what == "fixed" else
                            f"{what} {shape.CELLS['group']} {k}", t, shape, ref, f[base], at,
                            f[at]["connectivity"].shape[0], OBSTACLE_ATTRIBUTES))
                for group in POLYGON_GROUPS:
                    if f"{base}/{group}" in f:
                        grids["obstacles"].append(_polygons(f"{what} {group} {k}", t, ref,
                                                            f[base], f"{base}/{group}",
                                                            OBSTACLE_ATTRIBUTES))
            nc = g["contacts/point"].shape[0]
            if nc:
                grids["contacts"].append(_grid(
                    f"contacts {k}", t, "Polyvertex", nc, None,
                    _item(ref, f"{path}/contacts/point", (nc, 3)),
                    _attributes(ref, g, f"{path}/contacts", nc, CONTACT_ATTRIBUTES, "Node")))
            if "polygons" in g and g["polygons/points"].shape[0]:
                grids["contact_polygons"].append(_polygons(
                    f"contact polygons {k}", t, ref, g, f"{path}/polygons",
                    POLYGON_CONTACT_ATTRIBUTES))
    parts = ['<?xml version="1.0" ?>', '<Xdmf Version="3.0">', " <Domain>"]
    for name, items in grids.items():
        if items:
            parts.append(f'  <Grid Name="{name}" GridType="Collection" '
                         'CollectionType="Temporal">')
            parts.extend(items)
            parts.append("  </Grid>")
    parts += [" </Domain>", "</Xdmf>", ""]
    tmp = xdmf_path + ".tmp"           # a failed write (a full disk) keeps the previous one
    try:
        with open(tmp, "w") as out:
            out.write("\n".join(parts))
    except OSError:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, xdmf_path)
    return xdmf_path


def _attributes(ref, group, path, n, table, center):
    """The attributes of `table` whose dataset the frame holds (older files lack some)."""
    return [(name, kind, center, _item(ref, f"{path}/{ds}", (n,) if k == 1 else
                                       (n, 3, 3) if k == 9 else (n, k), number, precision))
            for name, ds, kind, number, precision, k in table
            if ds in group[path.rsplit("/", 1)[-1]]]


def _item(ref, dataset, dims, number="Float", precision=8):
    d = " ".join(str(x) for x in dims)
    return (f'<DataItem Dimensions="{d}" NumberType="{number}" Precision="{precision}" '
            f'Format="HDF">{escape(ref)}:/{dataset}</DataItem>')


def _cells(name, t, shape, ref, owner, base, nb, attributes):
    """A grid of nb cells of `shape` whose connectivity, vertices and cell data live under
    `base` (the datasets of `owner`, an HDF5 group)."""
    per = shape.CELLS["points"]
    return _grid(name, t, shape.CELLS["topology"], nb,
                 _item(ref, f"{base}/connectivity", (nb, per), "Int", 8),
                 _item(ref, f"{base}/vertices", (per * nb, 3)),
                 _attributes(ref, owner, base, nb, attributes, "Cell"))


def _polygons(name, t, ref, owner, base, attributes):
    """A grid of the polygon faces under `base` (vertices, a Mixed topology, face data)."""
    g = owner[base.rsplit("/", 1)[-1]]
    npts, ntopo = g["vertices"].shape[0], g["topology"].shape[0]
    nf = g[attributes[0][1]].shape[0]
    return _grid(name, t, "Mixed", nf, _item(ref, f"{base}/topology", (ntopo,), "Int", 8),
                 _item(ref, f"{base}/vertices", (npts, 3)),
                 _attributes(ref, owner, base, nf, attributes, "Cell"))


def _grid(name, t, topology, n, connectivity, geometry, attributes):
    topo = (f'<Topology TopologyType="{topology}" NumberOfElements="{n}"/>'
            if connectivity is None else
            f'<Topology TopologyType="{topology}" NumberOfElements="{n}">{connectivity}'
            "</Topology>")
    attrs = "".join(f'<Attribute Name="{a}" AttributeType="{kind}" Center="{center}">{item}'
                    "</Attribute>" for a, kind, center, item in attributes)
    return (f'   <Grid Name="{name}" GridType="Uniform"><Time Value="{t!r}"/>{topo}'
            f'<Geometry GeometryType="XYZ">{geometry}</Geometry>{attrs}</Grid>')
