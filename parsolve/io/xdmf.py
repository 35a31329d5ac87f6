"""An XDMF 3 index of a results file, so ParaView (or VisIt) opens the frames directly.

Three temporal collections: "bodies" (every body as a point with radius, shape, id and
velocity attributes: spheres show with a Glyph filter scaled by radius), "boxes" (hexahedra
from their 8 vertices) and "contacts" (points with the contact force in the world frame and
the normal). Heavy data stay in the HDF5 file; the XDMF only points at datasets.
"""
import os
from xml.sax.saxutils import escape

# our box vertex k has signs (x, y, z) = bits (4, 2, 1) of k; VTK/XDMF hexahedra list the
# bottom face counter-clockwise, then the top face
HEX_ORDER = (0, 4, 6, 2, 1, 5, 7, 3)


def write_xdmf(results_path, xdmf_path=None):
    from .results import _h5py

    h5py = _h5py()
    xdmf_path = xdmf_path or os.path.splitext(results_path)[0] + ".xdmf"
    ref = os.path.relpath(results_path, os.path.dirname(os.path.abspath(xdmf_path)))
    grids = {"bodies": [], "boxes": [], "contacts": []}
    with h5py.File(results_path, "r") as f:
        frames = f["frames"]
        for k, t in enumerate(frames["time"][()]):
            g = f"frames/{k:06d}"
            n = frames[f"{k:06d}/bodies/x"].shape[0]
            if n:
                grids["bodies"].append(_grid(f"bodies {k}", t, "Polyvertex", n, None,
                                             _item(ref, f"{g}/bodies/x", (n, 3)), [
                    ("radius", "Scalar", _item(ref, f"{g}/bodies/radius", (n,))),
                    ("shape", "Scalar", _item(ref, f"{g}/bodies/shape", (n,), "Char", 1)),
                    ("id", "Scalar", _item(ref, f"{g}/bodies/gid", (n,), "Int", 8)),
                    ("velocity", "Vector", _item(ref, f"{g}/bodies/v", (n, 3)))]))
            nb = frames[f"{k:06d}/boxes/connectivity"].shape[0]
            if nb:
                grids["boxes"].append(_grid(
                    f"boxes {k}", t, "Hexahedron", nb,
                    _item(ref, f"{g}/boxes/connectivity", (nb, 8), "Int", 8),
                    _item(ref, f"{g}/boxes/vertices", (8 * nb, 3)), []))
            nc = frames[f"{k:06d}/contacts/point"].shape[0]
            if nc:
                grids["contacts"].append(_grid(
                    f"contacts {k}", t, "Polyvertex", nc, None,
                    _item(ref, f"{g}/contacts/point", (nc, 3)), [
                        ("force", "Vector", _item(ref, f"{g}/contacts/force", (nc, 3))),
                        ("normal", "Vector", _item(ref, f"{g}/contacts/normal", (nc, 3)))]))
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


def _item(ref, dataset, dims, number="Float", precision=8):
    d = " ".join(str(x) for x in dims)
    return (f'<DataItem Dimensions="{d}" NumberType="{number}" Precision="{precision}" '
            f'Format="HDF">{escape(ref)}:/{dataset}</DataItem>')


def _grid(name, t, topology, n, connectivity, geometry, attributes):
    topo = (f'<Topology TopologyType="{topology}" NumberOfElements="{n}"/>'
            if connectivity is None else
            f'<Topology TopologyType="{topology}" NumberOfElements="{n}">{connectivity}'
            "</Topology>")
    attrs = "".join(f'<Attribute Name="{a}" AttributeType="{kind}" Center="Node">{item}'
                    "</Attribute>" for a, kind, item in attributes)
    return (f'   <Grid Name="{name}" GridType="Uniform"><Time Value="{t!r}"/>{topo}'
            f'<Geometry GeometryType="XYZ">{geometry}</Geometry>{attrs}</Grid>')
