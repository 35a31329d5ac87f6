"""What ParaView users see: the XDMF index read back by VTK's own XDMF reader (the one ParaView
uses), not by parsing its XML, and `parsolve render`'s offscreen pictures."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.scenes import on_floor, run

vtk = pytest.importorskip("vtk", reason="make setup installs the vtk wheel for these tests")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("paraview")
    m = on_floor(mu=0.5, e=0.0)
    k = np.arange(12)
    m.spheres(np.stack([0.1 * (k % 4), 0.1 * (k // 4), 0.06 + 0 * k], 1), 0.05, "body",
              density=1000)
    m.box((0.15, 0.5, 0.3), (0.1, 0.05, 0.04), "body", density=800,
          orientation=((1, 1, 0), 0.3))
    m.box((0.6, 0.5, 0.2), (0.05, 0.05, 0.05), "body", density=800)
    out = d / "res.h5"
    run(m, 0.2, 1e-3, output=str(out), frames=0.1)
    return out


def blocks(path, time):
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(path))
    reader.UpdateInformation()
    reader.UpdateTimeStep(time)
    found, it = {}, reader.GetOutputDataObject(0).NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        found[it.GetCurrentMetaData().Get(vtk.vtkCompositeDataSet.NAME())] = \
            it.GetCurrentDataObject()
        it.GoToNextItem()
    return reader, found


def arrays(data):
    return {data.GetArrayName(i): data.GetArray(i).GetNumberOfComponents()
            for i in range(data.GetNumberOfArrays())}


def test_the_xdmf_opens_in_vtk_s_reader_with_every_field(results):
    reader, found = blocks(results.with_suffix(".xdmf"), 0.2)
    assert {reader.GetGridName(i).split()[0] for i in range(reader.GetNumberOfGrids())} == \
        {"bodies", "boxes", "contacts"}
    bodies = next(v for k, v in found.items() if k.startswith("bodies"))
    boxes = next(v for k, v in found.items() if k.startswith("boxes"))
    contacts = next(v for k, v in found.items() if k.startswith("contacts"))
    assert bodies.GetNumberOfPoints() == 14
    assert arrays(bodies.GetPointData()) == {"id": 1, "shape": 1, "material": 1, "radius": 1,
                                             "velocity": 3, "angular_velocity": 3,
                                             "orientation": 9}
    assert boxes.GetNumberOfCells() == 2 and boxes.GetNumberOfPoints() == 16
    assert arrays(boxes.GetCellData()) == {"id": 1, "material": 1, "velocity": 3,
                                           "angular_velocity": 3, "orientation": 9}
    ids = [boxes.GetCellData().GetArray("id").GetValue(i) for i in range(2)]
    assert sorted(ids) == [12, 13]
    assert contacts.GetNumberOfPoints() >= 12 + 2 * 4 - 4
    assert arrays(contacts.GetPointData()) == {"force": 3, "normal": 3, "R": 3, "gap": 1,
                                               "status": 1}
    # a resting sphere's contact pushes up with its weight over the step
    force = contacts.GetPointData().GetArray("force")
    fz = sorted(force.GetTuple3(i)[2] for i in range(contacts.GetNumberOfPoints()))
    weight = 1000 * 4 / 3 * np.pi * 0.05 ** 3 * 9.81
    assert any(abs(f - weight) < 1e-6 * weight for f in fz)
    # the box's hexahedron has the box's volume
    cell = boxes.GetCell(int(np.argmax(ids)))
    lo, hi = np.min([cell.GetPoints().GetPoint(i) for i in range(8)], 0), \
        np.max([cell.GetPoints().GetPoint(i) for i in range(8)], 0)
    np.testing.assert_allclose(hi - lo, (0.1, 0.1, 0.1), atol=1e-6)


def test_parsolve_render_draws_the_bodies(results, tmp_path):
    png = tmp_path / "frame.png"
    p = subprocess.run([sys.executable, "-m", "parsolve.cli", "render", str(results), "--out",
                        str(png), "--size", "320x240"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert p.returncode == 0, p.stderr
    reader = vtk.vtkPNGReader()
    reader.SetFileName(str(png))
    reader.Update()
    image = reader.GetOutput()
    assert image.GetDimensions()[:2] == (320, 240)
    from vtkmodules.util.numpy_support import vtk_to_numpy

    pixels = vtk_to_numpy(image.GetPointData().GetScalars()).reshape(240, 320, -1)[..., :3]
    background = pixels[0, 0]
    drawn = np.any(pixels != background, axis=2)
    assert 0.02 < drawn.mean() < 0.9                         # bodies cover part of the view
    assert drawn[80:160, 100:220].mean() > 0.2                # and the middle of the frame
