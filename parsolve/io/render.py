"""`parsolve render`: an offscreen picture of one frame with VTK, without ParaView or a display:
spheres as shaded glyphs scaled by their radius, boxes as hexahedra, polyhedra by their faces;
the obstacles in grey (half-spaces as their polygon clipped to the scene's box, fixed boxes,
fixed polyhedra, fixed spheres); what is coloured ("force": the contact points by the
magnitude of their force; "velocity": the bodies by their speed) with a colour bar; and, on
request, the force chains (parsolve.measures.chains) as tubes coloured by their normal force,
in place of the contact points, through bodies made translucent.
VTK is an optional dependency (`pip install parsolve[render]`, or `make setup`)."""
import os

import numpy as np

from .. import shapes
from ..platform import libm
from ..errors import InputError

COLOURS = ("force", "velocity", "none")
GREY = (0.7, 0.7, 0.7)


def render(path, frame=-1, out=None, size=(800, 600), color="force", chains=None):
    """Write frame `frame` (index; -1 the last) of results file `path` as a PNG; its path.
    color: "force", "velocity" or "none" (see the module's docstring); chains: draw the force
    chains above `chains` times the mean normal force of the contacts between bodies."""
    path = os.fspath(path)                        # a str: quoted as one in messages
    if color not in COLOURS:
        raise InputError(f"render: color must be one of {', '.join(COLOURS)}, got {color!r}")
    try:
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
        import vtk
        from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
    except ImportError:
        raise InputError("parsolve render needs VTK: pip install vtk (or parsolve[render])") \
            from None
    from .describe import describe
    from .hdf5 import h5py_module

    describe(path)                                # refuses foreign or corrupt files
    with h5py_module().File(path, "r") as f:
        n = f["frames/time"].shape[0]
        if not -n <= frame < n:
            raise InputError(f"{path!r}: no frame {frame} (it has {n})")
        k = frame % n
        g = f[f"frames/{k:06d}"]
        data = {name: g[name][()] for name in ("bodies/x", "bodies/radius", "bodies/shape",
                                               "bodies/v", "boxes/vertices",
                                               "boxes/connectivity", "boxes/v",
                                               "contacts/point", "contacts/force")}
        poly = {name: g[f"polyhedra/{name}"][()] for name in ("vertices", "topology", "v")} \
            if "polyhedra" in g else None
        t = float(f["frames/time"][k])
        obst = f["model/obstacles"]
        planes = [(obst["point"][i], obst["normal"][i]) for i in range(len(obst["point"]))
                  if "shape" in obst and obst["shape"][i] == shapes.PLANE]
        balls = [(obst["point"][i], obst["radius"][i]) for i in range(len(obst["point"]))
                 if "shape" in obst and obst["shape"][i] == shapes.SPHERE]
        fixed = obst.get("boxes")
        fixed = None if fixed is None else (fixed["vertices"][()], fixed["connectivity"][()])
        fixed_poly = obst.get("polyhedra")
        fixed_poly = None if fixed_poly is None else (fixed_poly["vertices"][()],
                                                      fixed_poly["topology"][()])
        segments = None
        if chains is not None:
            from .measures import read_frame
            from ..measures.chains import chains as chain_segments
            from ..measures.tables import mean_normal_force

            _, ends, *_ = read_frame(f, k)
            segments = chain_segments(ends, chains * mean_normal_force(ends))
    ren = vtk.vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    speed = np.linalg.norm(data["bodies/v"], axis=1)
    box_speed = np.linalg.norm(data["boxes/v"], axis=1) if len(data["boxes/v"]) else \
        np.zeros(0)
    poly_speed = np.linalg.norm(poly["v"], axis=1) if poly is not None else np.zeros(0)
    top = max(speed.max(initial=0.0), 1e-300)
    lut = _table(vtk, 0.0, top) if color == "velocity" else None
    spheres = data["bodies/shape"] == shapes.SPHERE
    bodies = []
    if spheres.any():
        bodies.append(_spheres(vtk, numpy_to_vtk, data["bodies/x"][spheres],
                               data["bodies/radius"][spheres],
                               speed[spheres] if lut else None, lut))
    if len(data["boxes/connectivity"]):
        bodies.append(_boxes(vtk, numpy_to_vtk, numpy_to_vtkIdTypeArray,
                             data["boxes/vertices"], data["boxes/connectivity"],
                             box_speed if lut else None, lut))
    if poly is not None and len(poly["topology"]):
        bodies.append(_polygons(vtk, numpy_to_vtk, poly["vertices"], poly["topology"],
                                poly_speed if lut else None, lut))
    for actor in bodies:
        ren.AddActor(actor)
    lo, hi = _scene(data, poly)
    for point, normal in planes:
        ren.AddActor(_grey(_polygons(vtk, numpy_to_vtk, *_plane_in_box(point, normal, lo, hi)),
                           0.35))
    for centre, radius in balls:
        ren.AddActor(_grey(_spheres(vtk, numpy_to_vtk, centre[None], np.array([radius])), 0.5))
    if fixed is not None:
        ren.AddActor(_grey(_boxes(vtk, numpy_to_vtk, numpy_to_vtkIdTypeArray, *fixed), 0.35))
    if fixed_poly is not None:
        ren.AddActor(_grey(_polygons(vtk, numpy_to_vtk, *fixed_poly), 0.35))
    bar = ("speed [m/s]", lut) if lut else None
    if color == "force" and len(data["contacts/point"]) and segments is None:
        magnitude = np.linalg.norm(data["contacts/force"], axis=1)
        lut = _table(vtk, 0.0, float(magnitude.max()) or 1.0)
        ren.AddActor(_contacts(vtk, numpy_to_vtk, data["contacts/point"], magnitude, lut))
        bar = ("contact force [N]", lut)
    if segments is not None and len(segments["force"]):
        for actor in bodies:                  # the chains run inside the bodies: see through
            actor.GetProperty().SetOpacity(0.25)
        lut = _table(vtk, float(segments["force"].min()), float(segments["force"].max()))
        ren.AddActor(_chains(vtk, numpy_to_vtk, segments, lut,
                             0.15 * float(np.median(data["bodies/radius"]))))
        bar = ("chain force [N]", lut)
    if bar is not None:
        ren.AddViewProp(_bar(vtk, *bar))
    text = vtk.vtkTextActor()
    text.SetInput(f"{os.path.basename(path)}   frame {k}   t = {t:.6g} s")
    text.GetTextProperty().SetColor(0, 0, 0)
    ren.AddViewProp(text)
    camera = ren.GetActiveCamera()
    camera.SetPosition(1.0, -2.0, 1.2)
    camera.SetFocalPoint(0, 0, 0)
    camera.SetViewUp(0, 0, 1)
    ren.ResetCamera(*np.ravel(np.stack([lo, hi], axis=1)))
    window = vtk.vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.AddRenderer(ren)
    window.SetSize(*size)
    window.Render()
    grab = vtk.vtkWindowToImageFilter()
    grab.SetInput(window)
    grab.Update()
    out = out or os.path.splitext(path)[0] + f"-frame{k:06d}.png"
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(out)
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()
    window.Finalize()
    return out


def _scene(data, poly):
    """The box [lo, hi] of the bodies (with a margin of a tenth of its size): where the
    half-spaces are drawn and what the camera frames."""
    x, r = data["bodies/x"], data["bodies/radius"]
    pts = [x - r[:, None], x + r[:, None]]
    if poly is not None and len(poly["vertices"]):
        pts.append(poly["vertices"])
    pts = np.concatenate(pts) if len(x) else np.zeros((1, 3))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.1 * max(float(np.max(hi - lo)), 1e-3)
    return lo - pad, hi + pad


def _plane_in_box(point, normal, lo, hi):
    """The polygon where the plane (point, normal) cuts the box [lo, hi]: (vertices, XDMF
    Mixed topology [3, count, ids])."""
    corners = np.array([[(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]]
                        for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    d = (corners - point) @ normal
    pts = [corners[a] + d[a] / (d[a] - d[b]) * (corners[b] - corners[a])
           for a in range(8) for b in range(a + 1, 8)
           if bin(a ^ b).count("1") == 1 and d[a] * d[b] < 0]
    pts += [corners[a] for a in range(8) if d[a] == 0]
    if len(pts) < 3:
        return np.zeros((0, 3)), np.zeros(0, np.int64)
    pts = np.array(pts)
    c = pts.mean(axis=0)
    e = np.zeros(3)
    e[np.argmin(np.abs(normal))] = 1.0
    t1 = np.cross(normal, e)
    t2 = np.cross(normal, t1)
    order = np.argsort(libm.arctan2((pts - c) @ t2, (pts - c) @ t1))
    return pts[order], np.array([3, len(pts)] + list(range(len(pts))), np.int64)


def _table(vtk, lo, hi):
    lut = vtk.vtkLookupTable()
    lut.SetHueRange(0.667, 0.0)                 # blue (low) to red (high)
    lut.SetTableRange(lo, hi if hi > lo else lo + 1.0)
    lut.Build()
    return lut


def _bar(vtk, title, lut):
    bar = vtk.vtkScalarBarActor()
    bar.SetLookupTable(lut)
    bar.SetTitle(title)
    bar.SetNumberOfLabels(5)
    bar.SetWidth(0.08)
    bar.SetHeight(0.6)
    bar.SetPosition(0.82, 0.15)
    bar.UnconstrainedFontSizeOn()
    for prop, size in ((bar.GetTitleTextProperty(), 14), (bar.GetLabelTextProperty(), 12)):
        prop.SetColor(0, 0, 0)
        prop.SetFontSize(size)
        prop.ShadowOff()
        prop.ItalicOff()
        prop.BoldOff()
    bar.SetTextPositionToPrecedeScalarBar()
    return bar


def _grey(actor, opacity):
    actor.GetMapper().ScalarVisibilityOff()
    actor.GetProperty().SetColor(*GREY)
    actor.GetProperty().SetOpacity(opacity)                 # see the bodies inside
    return actor


def _points(vtk, numpy_to_vtk, x):
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(x, float), deep=True))
    poly = vtk.vtkPolyData()
    poly.SetPoints(points)
    return poly


def _spheres(vtk, numpy_to_vtk, x, radius, values=None, lut=None):
    poly = _points(vtk, numpy_to_vtk, x)
    scale = numpy_to_vtk(2.0 * np.ascontiguousarray(radius, float), deep=True)
    scale.SetName("diameter")
    poly.GetPointData().AddArray(scale)
    poly.GetPointData().SetActiveScalars("diameter")
    if values is not None:
        colour = numpy_to_vtk(np.ascontiguousarray(values, float), deep=True)
        colour.SetName("colour")
        poly.GetPointData().AddArray(colour)
    source = vtk.vtkSphereSource()
    source.SetThetaResolution(16)
    source.SetPhiResolution(12)
    glyph = vtk.vtkGlyph3D()
    glyph.SetInputData(poly)
    glyph.SetSourceConnection(source.GetOutputPort())
    glyph.SetScaleModeToScaleByScalar()
    glyph.SetColorModeToColorByScalar()
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(glyph.GetOutputPort())
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    if values is None:
        mapper.ScalarVisibilityOff()
        actor.GetProperty().SetColor(0.55, 0.65, 0.85)
    else:
        mapper.SetScalarModeToUsePointFieldData()
        mapper.SelectColorArray("colour")
        mapper.SetLookupTable(lut)
        mapper.UseLookupTableScalarRangeOn()
    return actor


def _boxes(vtk, numpy_to_vtk, numpy_to_ids, vertices, connectivity, values=None, lut=None):
    grid = vtk.vtkUnstructuredGrid()
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(vertices, float), deep=True))
    grid.SetPoints(points)
    first = connectivity.min() if len(connectivity) else 0
    cells = np.hstack([np.full((len(connectivity), 1), 8), connectivity - first]).ravel()
    array = vtk.vtkCellArray()
    array.SetCells(len(connectivity), numpy_to_ids(cells.astype(np.int64), deep=True))
    grid.SetCells(vtk.VTK_HEXAHEDRON, array)
    return _cells_actor(vtk, numpy_to_vtk, grid, values, lut)


def _polygons(vtk, numpy_to_vtk, vertices, topology, values=None, lut=None):
    """Faces given as XDMF Mixed polygons [3, count, ids...] (ids from the first vertex's)."""
    poly = vtk.vtkPolyData()
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(vertices, float), deep=True))
    poly.SetPoints(points)
    faces = vtk.vtkCellArray()
    at, first = 0, None
    while at < len(topology):
        count = int(topology[at + 1])
        ids = topology[at + 2:at + 2 + count]
        first = int(ids.min()) if first is None else min(first, int(ids.min()))
        at += 2 + count
    at = 0
    while at < len(topology):
        count = int(topology[at + 1])
        faces.InsertNextCell(count)
        for i in topology[at + 2:at + 2 + count]:
            faces.InsertCellPoint(int(i) - first)
        at += 2 + count
    poly.SetPolys(faces)
    return _cells_actor(vtk, numpy_to_vtk, poly, values, lut)


def _cells_actor(vtk, numpy_to_vtk, data, values, lut):
    if values is not None:
        data.GetCellData().SetScalars(numpy_to_vtk(np.ascontiguousarray(values, float),
                                                   deep=True))
    mapper = vtk.vtkDataSetMapper()
    mapper.SetInputData(data)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    if values is None:
        mapper.ScalarVisibilityOff()
        actor.GetProperty().SetColor(0.85, 0.6, 0.45)
    else:
        mapper.SetScalarModeToUseCellData()
        mapper.SetLookupTable(lut)
        mapper.UseLookupTableScalarRangeOn()
    actor.GetProperty().EdgeVisibilityOn()
    return actor


def _contacts(vtk, numpy_to_vtk, points, magnitude, lut):
    poly = _points(vtk, numpy_to_vtk, points)
    scalars = numpy_to_vtk(np.ascontiguousarray(magnitude, float), deep=True)
    poly.GetPointData().SetScalars(scalars)
    verts = vtk.vtkVertexGlyphFilter()
    verts.SetInputData(poly)
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(verts.GetOutputPort())
    mapper.SetLookupTable(lut)
    mapper.UseLookupTableScalarRangeOn()
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetPointSize(5)
    return actor


def _chains(vtk, numpy_to_vtk, segments, lut, radius):
    """The force chains' segments as tubes coloured by their normal force."""
    poly = _points(vtk, numpy_to_vtk, segments["points"])
    lines = vtk.vtkCellArray()
    for a, b in segments["lines"]:
        lines.InsertNextCell(2)
        lines.InsertCellPoint(int(a))
        lines.InsertCellPoint(int(b))
    poly.SetLines(lines)
    poly.GetCellData().SetScalars(numpy_to_vtk(np.ascontiguousarray(segments["force"], float),
                                               deep=True))
    tubes = vtk.vtkTubeFilter()
    tubes.SetInputData(poly)
    tubes.SetRadius(radius)
    tubes.SetNumberOfSides(8)
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(tubes.GetOutputPort())
    mapper.SetScalarModeToUseCellData()
    mapper.SetLookupTable(lut)
    mapper.UseLookupTableScalarRangeOn()
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    return actor
