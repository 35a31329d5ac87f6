"""Triangle surfaces from files: STL (ASCII and binary) and Wavefront OBJ by parsolve's own
readers, any other format that meshio reads (Gmsh, VTK/VTU, PLY, OFF, ...) through meshio when
it is installed.

`read(path)` returns (vertices (n, 3) float, triangles (m, 3) int64) in the file's units, the
vertices welded (an STL stores each triangle's three corners apart: equal coordinates become
one vertex, so that edges are shared). Polygons of an OBJ or meshio file are split into fans.
A file that cannot be read is a FileFormatError naming it and the line or record.

Why own readers for STL and OBJ: they are the formats the anchors read (Bullet's and Exudyn's
STL readers, LMGC90's pre-processor, LIGGGHTS' mesh walls take STL), they are a few dozen lines
each, and a reader kept here needs no package the project does not already install. numpy-stl
(Debian's python3-stl) reads STL only; meshio reads STL, OBJ and some thirty other formats but
is not in the project's set-up: it is the optional path for the formats we do not read
(bench/bench_mesh.py compares the readers' times on one binary STL).
"""
import os
import re

import numpy as np

from ..errors import FileFormatError, InputError

OWN = (".stl", ".obj")


def read(path, reader="auto"):
    """(vertices, triangles) of the surface in file `path`. reader: "auto" (own readers for
    .stl and .obj, meshio for the rest), "own" or "meshio"."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"mesh file {path!r} does not exist")
    ext = os.path.splitext(path)[1].lower()
    if reader not in ("auto", "own", "meshio"):
        raise InputError(f"mesh file {path!r}: reader must be 'auto', 'own' or 'meshio', got "
                         f"{reader!r}")
    if reader == "meshio" or (reader == "auto" and ext not in OWN):
        return read_meshio(path)
    if ext == ".stl":
        return read_stl(path)
    if ext == ".obj":
        return read_obj(path)
    raise InputError(f"mesh file {path!r}: parsolve reads .stl and .obj itself; other formats "
                     "need meshio (reader='meshio')")


def weld(corners):
    """(vertices, triangles) from the triangles' corners (m, 3, 3): equal coordinates (bit
    for bit) become one vertex, numbered by first appearance (a sort by coordinates, then
    runs of equal rows)."""
    flat = np.ascontiguousarray(corners, float).reshape(-1, 3)
    if not len(flat):
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    order = np.lexsort((flat[:, 2], flat[:, 1], flat[:, 0]))
    s = flat[order]
    new = np.ones(len(s), bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    run = np.cumsum(new) - 1
    label = np.empty(len(s), np.int64)
    label[order] = run
    first = order[new]                   # lexsort is stable: a run's first is its lowest
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return flat[np.sort(first)], rank[label].reshape(-1, 3)


def read_stl(path):
    """An STL file, binary or ASCII (told apart by the binary's exact size, 84 + 50 m bytes,
    since binary files written by some CAD programs also begin with "solid")."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) >= 84:
        m = int.from_bytes(data[80:84], "little")
        if len(data) == 84 + 50 * m:
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)),
                                                      ("attr", "<u2")]), count=m, offset=84)
            corners = rec["v"].astype(float)
            _finite(path, corners)
            return weld(corners)
    if not data.lstrip().lower().startswith(b"solid"):
        raise FileFormatError(f"STL file {path!r}: neither binary (84 + 50 m bytes) nor ASCII "
                              "(begins with 'solid')")
    text = data.decode("ascii", errors="replace")
    corners = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if words and words[0].lower() == "vertex":
            try:
                corners.append([float(w) for w in words[1:4]])
            except ValueError:
                raise FileFormatError(f"STL file {path!r}, line {number}: bad vertex "
                                      f"{line.strip()!r}") from None
            if len(words) != 4:
                raise FileFormatError(f"STL file {path!r}, line {number}: a vertex needs 3 "
                                      f"coordinates, got {line.strip()!r}")
    if len(corners) % 3:
        raise FileFormatError(f"STL file {path!r}: {len(corners)} vertices, not 3 per facet")
    corners = np.array(corners, float).reshape(-1, 3, 3)
    _finite(path, corners)
    return weld(corners)


def read_obj(path):
    """A Wavefront OBJ file: `v x y z [w]` and `f a b c ...` (a/b/c or a//c index forms,
    negative indices from the end); other statements (normals, texture coordinates, groups,
    materials) are ignored; polygons become fans."""
    vertices, tris = [], []
    with open(path, "r", errors="replace") as f:
        for number, line in enumerate(f, 1):
            words = line.split()
            if not words:
                continue
            try:
                if words[0] == "v":
                    vertices.append([float(w) for w in words[1:4]])
                    if len(words) < 4:
                        raise ValueError
                elif words[0] == "f":
                    idx = [int(re.split("/", w)[0]) for w in words[1:]]
                    if len(idx) < 3:
                        raise ValueError
                    idx = [i - 1 if i > 0 else len(vertices) + i for i in idx]
                    if min(idx) < 0 or max(idx) >= len(vertices):
                        raise FileFormatError(f"OBJ file {path!r}, line {number}: vertex index "
                                              f"out of range in {line.strip()!r}")
                    tris += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
            except ValueError:
                raise FileFormatError(f"OBJ file {path!r}, line {number}: cannot read "
                                      f"{line.strip()!r}") from None
    V = np.array(vertices, float).reshape(-1, 3)
    _finite(path, V)
    return V, np.array(tris, np.int64).reshape(-1, 3)


def read_meshio(path):
    """Any surface meshio reads: its triangle cells, and its polygon cells as fans."""
    try:
        import meshio
    except ImportError:
        raise InputError(f"mesh file {path!r}: this format needs meshio (Debian: "
                         "python3-meshio; PyPI: meshio); parsolve itself reads .stl and "
                         ".obj") from None
    try:
        m = meshio.read(path)
    except Exception as exc:                         # meshio's own errors vary by format
        raise FileFormatError(f"mesh file {path!r}: meshio cannot read it ({exc})") from None
    tris = []
    for block in m.cells:
        c = np.asarray(block.data, np.int64)
        if block.type == "triangle":
            tris.append(c)
        elif block.type in ("quad", "polygon") or block.type.startswith("polygon"):
            tris += [c[:, [0, k, k + 1]] for k in range(1, c.shape[1] - 1)]
    if not tris:
        raise FileFormatError(f"mesh file {path!r}: no triangle or polygon cells")
    V = np.asarray(m.points, float)
    if V.shape[1] == 2:
        V = np.column_stack([V, np.zeros(len(V))])
    _finite(path, V)
    return V, np.concatenate(tris)


def write_stl(path, vertices, triangles, binary=True):
    """Write an STL file (facet normals from the corners' order): tests and examples."""
    V = np.asarray(vertices, float)
    T = np.asarray(triangles, np.int64)
    c = V[T]
    n = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
    n /= np.where(np.linalg.norm(n, axis=1) > 0, np.linalg.norm(n, axis=1), 1.0)[:, None]
    if binary:
        rec = np.zeros(len(T), dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)),
                                               ("attr", "<u2")]))
        rec["n"], rec["v"] = n, c
        with open(path, "wb") as f:
            f.write(b"parsolve binary STL".ljust(80, b" "))
            f.write(np.uint32(len(T)).tobytes())
            f.write(rec.tobytes())
        return
    with open(path, "w") as f:
        f.write("solid parsolve\n")
        for nk, ck in zip(n, c):
            f.write("  facet normal {:.17g} {:.17g} {:.17g}\n    outer loop\n".format(*nk))
            for p in ck:
                f.write("      vertex {:.17g} {:.17g} {:.17g}\n".format(*p))
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid parsolve\n")


def write_obj(path, vertices, triangles):
    """Write a Wavefront OBJ file (tests and examples)."""
    with open(path, "w") as f:
        for p in np.asarray(vertices, float):
            f.write("v {:.17g} {:.17g} {:.17g}\n".format(*p))
        for t in np.asarray(triangles, np.int64) + 1:
            f.write("f {} {} {}\n".format(*t))


def _finite(path, values):
    bad = ~np.isfinite(values)
    if bad.any():
        raise FileFormatError(f"mesh file {path!r}: a coordinate is not finite (vertex "
                              f"{int(np.argmax(bad.reshape(len(values), -1).any(axis=1)))})")
