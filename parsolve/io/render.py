"""`parsolve render`: an offscreen picture of one frame with VTK (spheres as shaded glyphs
scaled by their radius, boxes as hexahedra, fixed boxes as grey hexahedra, contacts as points
coloured by the magnitude of their force), without ParaView or a display. VTK is an optional
dependency (`pip install parsolve[render]`, or `make setup`)."""
import os

import numpy as np

from ..errors import InputError


def render(path, frame=-1, out=None, size=(800, 600)):
    """Write frame `frame` (index; -1 the last) of results file `path` as a PNG; its path."""
    try:
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
        import vtk
        from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
    except ImportError:
        raise InputError("parsolve render needs VTK: pip install vtk (or parsolve[render])") \
            from None
    from .hdf5 import h5py_module

    with h5py_module().File(path, "r") as f:
        n = f["frames/time"].shape[0]
        if not -n <= frame < n:
            raise InputError(f"{path}: no frame {frame} (it has {n})")
        k = frame % n
        g = f[f"frames/{k:06d}"]
        data = {name: g[name][()] for name in ("bodies/x", "bodies/radius", "bodies/shape",
                                               "boxes/vertices", "boxes/connectivity",
                                               "contacts/point", "contacts/force")}
        t = float(f["frames/time"][k])
        fixed = f.get("model/obstacles/boxes")
        fixed = None if fixed is None else (fixed["vertices"][()], fixed["connectivity"][()])
    ren = vtk.vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    spheres = data["bodies/shape"] == 0
    if spheres.any():
        ren.AddActor(_spheres(vtk, numpy_to_vtk, data["bodies/x"][spheres],
                              data["bodies/radius"][spheres]))
    if len(data["boxes/connectivity"]):
        ren.AddActor(_boxes(vtk, numpy_to_vtk, numpy_to_vtkIdTypeArray, data["boxes/vertices"],
                            data["boxes/connectivity"]))
    if fixed is not None:
        actor = _boxes(vtk, numpy_to_vtk, numpy_to_vtkIdTypeArray, *fixed)
        actor.GetProperty().SetColor(0.7, 0.7, 0.7)
        actor.GetProperty().SetOpacity(0.35)                 # see the bodies inside
        ren.AddActor(actor)
    if len(data["contacts/point"]):
        ren.AddActor(_contacts(vtk, numpy_to_vtk, data["contacts/point"],
                               np.linalg.norm(data["contacts/force"], axis=1)))
    text = vtk.vtkTextActor()
    text.SetInput(f"{os.path.basename(path)}   frame {k}   t = {t:.6g} s")
    text.GetTextProperty().SetColor(0, 0, 0)
    ren.AddViewProp(text)
    camera = ren.GetActiveCamera()
    camera.SetPosition(1.0, -2.0, 1.2)
    camera.SetFocalPoint(0, 0, 0)
    camera.SetViewUp(0, 0, 1)
    ren.ResetCamera()
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


def _points(vtk, numpy_to_vtk, x):
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(x, float), deep=True))
    poly = vtk.vtkPolyData()
    poly.SetPoints(points)
    return poly


def _spheres(vtk, numpy_to_vtk, x, radius):
    poly = _points(vtk, numpy_to_vtk, x)
    scale = numpy_to_vtk(2.0 * np.ascontiguousarray(radius, float), deep=True)
    scale.SetName("diameter")
    poly.GetPointData().SetScalars(scale)
    source = vtk.vtkSphereSource()
    source.SetThetaResolution(16)
    source.SetPhiResolution(12)
    glyph = vtk.vtkGlyph3D()
    glyph.SetInputData(poly)
    glyph.SetSourceConnection(source.GetOutputPort())
    glyph.SetScaleModeToScaleByScalar()
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(glyph.GetOutputPort())
    mapper.ScalarVisibilityOff()
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetColor(0.55, 0.65, 0.85)
    return actor


def _boxes(vtk, numpy_to_vtk, numpy_to_ids, vertices, connectivity):
    grid = vtk.vtkUnstructuredGrid()
    points = vtk.vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(vertices, float), deep=True))
    grid.SetPoints(points)
    first = connectivity.min() if len(connectivity) else 0
    cells = np.hstack([np.full((len(connectivity), 1), 8), connectivity - first]).ravel()
    array = vtk.vtkCellArray()
    array.SetCells(len(connectivity), numpy_to_ids(cells.astype(np.int64), deep=True))
    grid.SetCells(vtk.VTK_HEXAHEDRON, array)
    mapper = vtk.vtkDataSetMapper()
    mapper.SetInputData(grid)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetColor(0.85, 0.6, 0.45)
    actor.GetProperty().EdgeVisibilityOn()
    return actor


def _contacts(vtk, numpy_to_vtk, points, magnitude):
    poly = _points(vtk, numpy_to_vtk, points)
    scalars = numpy_to_vtk(np.ascontiguousarray(magnitude, float), deep=True)
    poly.GetPointData().SetScalars(scalars)
    verts = vtk.vtkVertexGlyphFilter()
    verts.SetInputData(poly)
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(verts.GetOutputPort())
    mapper.SetScalarRange(0.0, float(magnitude.max()) or 1.0)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    actor.GetProperty().SetPointSize(5)
    return actor
