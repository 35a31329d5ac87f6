"""An XDMF index of a results file, so ParaView (or VisIt, or VTK's vtkXdmfReader) opens the
frames directly.

Three temporal collections:
  "bodies"   every body as a point: id, shape, material, radius (Glyph filter, scale by
             radius), velocity, angular_velocity, orientation (the rotation matrix, body
             axes as columns: a tensor, as XDMF has no 4-component type for a quaternion);
  "boxes"    hexahedra from their 8 vertices, with cell data id, material, velocity,
             angular_velocity, orientation;
  "contacts" points: force (world frame), normal, R (local, normal first), gap, status
             (0 open, 1 sticking, 2 sliding).
Heavy data stay in the HDF5 file; the XDMF only points at datasets (through the results
index, so it reads what the index holds).
"""
import os
from xml.sax.saxutils import escape

# our box vertex k has signs (x, y, z) = bits (4, 2, 1) of k; VTK/XDMF hexahedra list the
# bottom face counter-clockwise, then the top face
HEX_ORDER = (0, 4, 6, 2, 1, 5, 7, 3)

# (attribute name, dataset, XDMF attribute type, number type, precision, components)
BODY_ATTRIBUTES = (("id", "gid", "Scalar", "Int", 8, 1), ("shape", "shape", "Scalar", "Char", 1, 1),
                   ("material", "material", "Scalar", "Int", 4, 1),
                   ("radius", "radius", "Scalar", "Float", 8, 1),
                   ("velocity", "v", "Vector", "Float", 8, 3),
                   ("angular_velocity", "w", "Vector", "Float", 8, 3),
                   ("orientation", "rotation", "Tensor", "Float", 4, 9))
BOX_ATTRIBUTES = (("id", "gid", "Scalar", "Int", 8, 1), ("material", "material", "Scalar", "Int", 4, 1),
                  ("velocity", "v", "Vector", "Float", 8, 3),
                  ("angular_velocity", "w", "Vector", "Float", 8, 3),
                  ("orientation", "rotation", "Tensor", "Float", 4, 9))
CONTACT_ATTRIBUTES = (("force", "force", "Vector", "Float", 8, 3),
                      ("normal", "normal", "Vector", "Float", 8, 3),
                      ("R", "R", "Vector", "Float", 8, 3), ("gap", "gap", "Scalar", "Float", 8, 1),
                      ("status", "status", "Scalar", "Char", 1, 1))


def write_xdmf(results_path, xdmf_path=None):
    from .results import _h5py

    h5py = _h5py()
    xdmf_path = xdmf_path or os.path.splitext(results_path)[0] + ".xdmf"
    ref = os.path.relpath(results_path, os.path.dirname(os.path.abspath(xdmf_path)))
    grids = {"bodies": [], "boxes": [], "contacts": []}
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
            nb = g["boxes/connectivity"].shape[0]
            if nb:
                grids["boxes"].append(_grid(
                    f"boxes {k}", t, "Hexahedron", nb,
                    _item(ref, f"{path}/boxes/connectivity", (nb, 8), "Int", 8),
                    _item(ref, f"{path}/boxes/vertices", (8 * nb, 3)),
                    _attributes(ref, g, f"{path}/boxes", nb, BOX_ATTRIBUTES, "Cell")))
            nc = g["contacts/point"].shape[0]
            if nc:
                grids["contacts"].append(_grid(
                    f"contacts {k}", t, "Polyvertex", nc, None,
                    _item(ref, f"{path}/contacts/point", (nc, 3)),
                    _attributes(ref, g, f"{path}/contacts", nc, CONTACT_ATTRIBUTES, "Node")))
    parts = ['<?xml version="1.0" ?>', '<Xdmf Version="3.0">', " <Domain>"]
    for name, items in grids.items():
        if items:
            parts.append(f'  <Grid Name="{name}" GridType="Collection" '
                         'CollectionType="Temporal">')
            parts.extend(items)
            parts.append("  </Grid>")
    parts += [" </Domain>", "</Xdmf>", ""]
    with open(xdmf_path, "w") as out:
        out.write("\n".join(parts))
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


def _grid(name, t, topology, n, connectivity, geometry, attributes):
    topo = (f'<Topology TopologyType="{topology}" NumberOfElements="{n}"/>'
            if connectivity is None else
            f'<Topology TopologyType="{topology}" NumberOfElements="{n}">{connectivity}'
            "</Topology>")
    attrs = "".join(f'<Attribute Name="{a}" AttributeType="{kind}" Center="{center}">{item}'
                    "</Attribute>" for a, kind, center, item in attributes)
    return (f'   <Grid Name="{name}" GridType="Uniform"><Time Value="{t!r}"/>{topo}'
            f'<Geometry GeometryType="XYZ">{geometry}</Geometry>{attrs}</Grid>')
