"""Contact polygons in the results: one cell per contact pair (its points ordered around
their centre), with the pair's total force on A, its normal and tangential parts."""
import h5py
import numpy as np
import pytest

import parsolve as ps
from parsolve.dynamics.rotation import axis_angle_to_quat, quat_to_matrix
from parsolve.io.results import contact_polygons
from tests.scenes import G, run

A = 0.05


def cube(a):
    return np.array([(x, y, z) for x in (-a, a) for y in (-a, a) for z in (-a, a)], float)


def stack():
    """A cube (half A) on a fixed slab and a second cube on it turned 45 degrees about z:
    the upper pair touches on the octagon of a square over a square turned by 45 degrees."""
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("stone", "stone", friction=0.6, restitution=0.0)
    m.polyhedron(np.array([(x, y, z) for x in (-0.3, 0.3) for y in (-0.3, 0.3)
                           for z in (-0.1, 0.0)]), "stone", fixed=True, name="slab")
    low = m.polyhedron(cube(A) + (0, 0, A), "stone", density=1000)
    R = quat_to_matrix(axis_angle_to_quat((0, 0, 1), np.pi / 4)[None])[0]
    high = m.polyhedron(cube(A) @ R.T + (0, 0, 3 * A), "stone", density=1000)
    return m, low, high


def pairs_of(frame):
    """The polygons of a frame as {(k1, b): (points (n, 3), force, normal_force, ...)}."""
    p = frame["polygons"]
    topo, verts = p["topology"][()], p["vertices"][()]
    out, at = {}, 0
    for c in range(len(p["points"])):
        kind, n = topo[at], topo[at + 1]
        ids = topo[at + 2:at + 2 + n]
        at += 2 + n
        out[(int(p["k1"][c]), int(p["b"][c]))] = dict(
            kind=int(kind), points=verts[ids], force=p["force"][c], normal=p["normal"][c],
            normal_force=float(p["normal_force"][c]),
            tangential_force=p["tangential_force"][c], count=int(p["points"][c]))
    return out


def test_a_cube_on_a_cube_carries_its_weight_on_one_octagon(tmp_path):
    """The upper cube rests on the lower one on one polygon of 8 points ordered around it
    (a convex octagon: consecutive edges turn the same way); its force is the sum of its
    points' forces and carries the upper cube's weight; the lower cube's square carries
    both. VTK's XDMF reader (ParaView's) reads the grid with its cell data."""
    m, low, high = stack()
    bodies = m.build()
    mass = bodies.mass
    out = tmp_path / "stack.h5"
    run(m, 0.02, 1e-3, tol=1e-12, output=str(out), frames=0.01)
    with h5py.File(out, "r") as f:
        last = f["frames"][f"{len(f['frames/time']) - 1:06d}"]
        cells = pairs_of(last)
        c = last["contacts"]
        k1, k2, force = c["k1"][()], c["k2"][()], c["force"][()]
    assert len(cells) == 2
    upper = [v for v in cells.values() if v["count"] == 8]
    lower = [v for v in cells.values() if v["count"] == 4]
    assert len(upper) == 1 and len(lower) == 1
    for (a, b), cell in cells.items():
        rows = (k1 == a) & (k2 // 64 == b)
        assert cell["count"] == rows.sum() and cell["kind"] == 3          # polygons
        assert np.allclose(cell["force"], force[rows].sum(axis=0), rtol=1e-12, atol=1e-12)
        assert np.allclose(cell["normal"], (0, 0, np.sign(cell["normal"][2])), atol=1e-9)
        assert cell["normal_force"] == pytest.approx(cell["force"] @ cell["normal"], rel=1e-12)
        assert np.allclose(cell["tangential_force"], 0, atol=1e-9)
        # ordered around the centre: every turn has the same sense, one full turn in all
        p = cell["points"]
        e = np.roll(p, -1, axis=0) - p
        turn = np.cross(e, np.roll(e, -1, axis=0)) @ cell["normal"]
        assert (turn > 0).all() or (turn < 0).all()
    up, down = upper[0], lower[0]
    assert abs(up["force"][2]) == pytest.approx(mass[high] * G, rel=1e-8)
    assert abs(down["force"][2]) == pytest.approx((mass[low] + mass[high]) * G, rel=1e-8)
    assert up["normal_force"] == pytest.approx(mass[high] * G, rel=1e-8)   # pushes A off B
    r = A * np.sqrt(2)                                # the octagon's corners: square & diamond
    xy = up["points"][:, :2]
    assert np.allclose(np.maximum(np.abs(xy).max(axis=1), np.abs(xy).sum(axis=1) / r * A), A,
                       atol=1e-6)
    vtk = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(tmp_path / "stack.xdmf"))
    reader.UpdateTimeStep(0.02)                  # the last frame (the first has no contacts)
    data = reader.GetOutputDataObject(0)
    blocks = {data.GetMetaData(i).Get(data.NAME()): data.GetBlock(i)
              for i in range(data.GetNumberOfBlocks())}
    grid = blocks["contact_polygons"]
    assert grid.GetNumberOfCells() == 2
    sizes = sorted(grid.GetCell(k).GetNumberOfPoints() for k in range(2))
    assert sizes == [4, 8] and grid.GetCell(0).GetClassName() == "vtkPolygon"
    f = grid.GetCellData().GetArray("force")
    total = np.array([f.GetTuple3(k) for k in range(2)])
    assert np.allclose(np.sort(np.abs(total[:, 2])), np.sort([abs(up["force"][2]),
                                                             abs(down["force"][2])]))


def test_pairs_of_one_and_two_points_are_a_vertex_and_a_line_and_order_does_not_matter():
    """Rows of three pairs (1, 2 and 5 points) given in two orders give the same cells bit for
    bit; the pentagon's points come out around its centre, the others as they are."""
    rng = np.random.default_rng(3)
    ang = np.array([0.0, 2.5, 1.0, 4.0, 5.5])
    pent = np.stack([np.cos(ang), np.sin(ang), np.zeros(5)], axis=1) + (1, 2, 3)
    pair = np.array([[7, 9]] * 5 + [[4, 2]] * 2 + [[4, 1]], np.int64)
    k2 = np.array([9 * 64 + f for f in (3, 1, 0, 4, 2)] + [2 * 64 + 5, 2 * 64 + 1, 64])
    point = np.concatenate([pent, rng.normal(size=(3, 3))])
    normal = np.tile((0.0, 0.0, 1.0), (8, 1))
    force = rng.normal(size=(8, 3))
    a = contact_polygons(pair, k2, point, normal, force)
    o = rng.permutation(8)
    b = contact_polygons(pair[o], k2[o], point[o], normal[o], force[o])
    for name in a:
        assert np.array_equal(a[name], b[name])
    assert a["topology"][:3].tolist() == [1, 1, 0]                       # (4, 1): a vertex
    assert a["topology"][3:5].tolist() == [2, 2]                         # (4, 2): a line
    assert a["topology"][7:9].tolist() == [3, 5]                         # (7, 9): a polygon
    d = a["vertices"][3:, :2] - a["vertices"][3:, :2].mean(axis=0)
    angles = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))          # counter-clockwise about +z
    assert np.all(np.diff(angles) > 0) and angles[-1] - angles[0] < 2 * np.pi
    assert a["points"].tolist() == [1, 2, 5]
    assert np.allclose(a["force"][2], force[:5].sum(axis=0), rtol=0, atol=1e-14)


def test_a_face_an_edge_and_a_sphere_give_a_polygon_a_line_and_a_vertex(tmp_path):
    """On a fixed slab: a cube on a face (4 points: a polygon), a cube balanced on an edge
    (2 points: a line), a sphere (1 point: a vertex); VTK reads each cell as its type, with
    the force carrying the body's weight."""
    vtk = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("s", "s", friction=0.6, restitution=0.0)
    m.polyhedron(np.array([(x, y, z) for x in (-0.3, 0.3) for y in (-0.3, 0.3)
                           for z in (-0.1, 0.0)]), "s", fixed=True)
    m.polyhedron(cube(A) + (0.1, 0, A), "s", density=1000)
    R = quat_to_matrix(axis_angle_to_quat((0, 1, 0), np.pi / 4)[None])[0]
    turned = cube(A) @ R.T
    m.polyhedron(turned + (0, 0.15, -turned[:, 2].min()), "s", density=1000)
    m.spheres(np.array([(-0.1, 0, 0.02)]), 0.02, "s", density=1000)
    weight = m.build().mass * G
    run(m, 0.002, 1e-3, tol=1e-12, output=str(tmp_path / "three.h5"), frames=0.002)
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(tmp_path / "three.xdmf"))
    reader.UpdateTimeStep(0.002)
    data = reader.GetOutputDataObject(0)
    grid = {data.GetMetaData(i).Get(data.NAME()): data.GetBlock(i)
            for i in range(data.GetNumberOfBlocks())}["contact_polygons"]
    cells = {}
    for k in range(grid.GetNumberOfCells()):
        cells[grid.GetCell(k).GetClassName()] = (
            grid.GetCell(k).GetNumberOfPoints(), grid.GetCellData().GetArray("k1").GetValue(k),
            grid.GetCellData().GetArray("force").GetTuple3(k))
    assert sorted(cells) == ["vtkPolyLine", "vtkPolyVertex", "vtkPolygon"]
    for name, points in (("vtkPolygon", 4), ("vtkPolyLine", 2), ("vtkPolyVertex", 1)):
        n, body, force = cells[name]
        assert n == points
        assert force[2] == pytest.approx(weight[body], rel=1e-6)
