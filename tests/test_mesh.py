"""Triangle-mesh obstacles: files read as written (STL ASCII and binary, OBJ), placed in the
units asked; bad surfaces named or repaired; a sphere on a face, on an edge between coplanar
faces or at a vertex inside a flat patch meets one contact carrying the exact normal and gap;
rolling across a floor of many triangles or over a ridge the normal stays continuous; in a
closed box mesh, random throws meet exactly the walls' contacts; the compiled kernel equals
its twin."""
import numpy as np
import pytest

from parsolve.contact import mesh as cm
from parsolve.contact import mesh_poly as mp
from parsolve.dynamics.rotation import axis_angle_to_quat, quat_to_matrix
from parsolve.errors import FileFormatError, InputError
from parsolve.io import meshfile
from parsolve.shapes.mesh import TriangleMesh, box_surface, grid_surface

KERNELS = [pytest.param(cm.sphere_mesh, id="twin")]
try:
    from parsolve._kernels import mesh as _km
    from parsolve._kernels import mesh_poly as _kp
    KERNELS.append(pytest.param(_km.sphere_mesh, id="compiled"))
except ImportError:                                        # not built: the twin alone
    _km = _kp = None


def floor(n=4, size=1.0):
    return TriangleMesh(*grid_surface((0, 0), (size, size), n), name="floor")


def contacts(mesh, x, r, margin=0.0, kernel=None, pose=None):
    return cm.sphere_contacts(mesh, np.atleast_2d(np.asarray(x, float)), r, margin, pose=pose,
                              kernel=kernel)


# -- files -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["stl-binary", "stl-ascii", "obj"])
def test_files_read_back_the_surface_that_was_written(tmp_path, fmt):
    V, T = box_surface((0, 0, 0), (0.1, 0.2, 0.3), 2)
    path = tmp_path / ("box.obj" if fmt == "obj" else "box.stl")
    if fmt == "obj":
        meshfile.write_obj(path, V, T)
    else:
        meshfile.write_stl(path, V, T, binary=fmt == "stl-binary")
    m = TriangleMesh.read(path)
    assert m.closed and len(m.triangles) == len(T) and len(m.vertices) == len(V)
    tol = 1e-7 if fmt == "stl-binary" else 1e-15           # binary STL stores float32
    assert m.volume() == pytest.approx(0.1 * 0.2 * 0.3, rel=tol)
    assert m.name == path.name


def test_units_scale_rotation_and_translation_place_the_surface(tmp_path):
    V, T = box_surface((0, 0, 0), (10, 20, 30), 1)                       # millimetres
    meshfile.write_obj(tmp_path / "b.obj", V, T)
    q = axis_angle_to_quat((0, 0, 1), np.pi / 2)
    m = TriangleMesh.read(tmp_path / "b.obj", units="mm", scale=2.0, rotation=q,
                          translation=(1, 2, 3))
    lo, hi = m.vertices.min(axis=0), m.vertices.max(axis=0)
    assert np.allclose(lo, (1 - 0.04, 2, 3), atol=1e-15)
    assert np.allclose(hi, (1, 2 + 0.02, 3 + 0.06), atol=1e-15)
    assert m.volume() == pytest.approx(0.02 * 0.04 * 0.06, rel=1e-12)
    with pytest.raises(InputError, match="units"):
        TriangleMesh.read(tmp_path / "b.obj", units="furlong")


def test_bad_files_are_named(tmp_path):
    (tmp_path / "a.stl").write_text("solid x\n facet normal 0 0 1\n outer loop\n"
                                    "  vertex 0 0 zero\n")
    with pytest.raises(FileFormatError, match="a.stl.*line 4"):
        meshfile.read(tmp_path / "a.stl")
    (tmp_path / "b.stl").write_bytes(b"\x00" * 90)
    with pytest.raises(FileFormatError, match="b.stl"):
        meshfile.read(tmp_path / "b.stl")
    (tmp_path / "c.obj").write_text("v 0 0 0\nv 1 0 0\nf 1 2 3\n")
    with pytest.raises(FileFormatError, match="c.obj.*line 3"):
        meshfile.read(tmp_path / "c.obj")
    with pytest.raises(InputError, match="does not exist"):
        meshfile.read(tmp_path / "none.stl")


def test_other_formats_go_through_meshio_or_say_it_is_needed(tmp_path):
    (tmp_path / "m.off").write_text("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n")
    try:
        import meshio  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="meshio"):
            meshfile.read(tmp_path / "m.off")
        return
    V, T = meshfile.read(tmp_path / "m.off")
    assert V.shape == (3, 3) and T.tolist() == [[0, 1, 2]]


# -- checks and repairs ----------------------------------------------------------------------
def test_bad_surfaces_are_named_with_their_repair():
    V, T = box_surface((0, 0, 0), (1, 1, 1), 1)
    with pytest.raises(InputError, match=r"triangle 12 is degenerate.*repair='degenerate'"):
        TriangleMesh(V, np.concatenate([T, [[0, 0, 1]]]), name="b")
    m = TriangleMesh(V, np.concatenate([T, [[0, 0, 1]]]), repair="degenerate")
    assert len(m.triangles) == 12 and m.closed
    with pytest.raises(InputError, match=r"triangle 12 repeats triangle 3.*'duplicates'"):
        TriangleMesh(V, np.concatenate([T, T[3:4, [1, 2, 0]]]))
    assert len(TriangleMesh(V, np.concatenate([T, T[3:4]]), repair="duplicates").triangles) \
        == 12
    flipped = T.copy()
    flipped[5] = flipped[5, ::-1]
    with pytest.raises(InputError, match="the same way.*repair='orientation'"):
        TriangleMesh(V, flipped)
    m = TriangleMesh(V, flipped, repair="orientation")
    assert m.volume() == pytest.approx(1.0, rel=1e-14)                    # turned outwards
    fin = np.array([[0, 1, 8]])                                       # a third triangle on 0-1
    V2 = np.concatenate([V, [[0.5, -1, 0.5]]])
    e = T[np.flatnonzero(((T == 0) | (T == 1)).sum(axis=1) == 2)[0]]
    with pytest.raises(InputError, match="non-manifold"):
        TriangleMesh(V2, np.concatenate([T, [[e[0], e[1], 8]]]))
    del fin
    with pytest.raises(InputError, match="triangle 0 names a vertex"):
        TriangleMesh(V, T + 100)
    with pytest.raises(InputError, match="unknown repair"):
        TriangleMesh(V, T, repair="glue")


def test_open_and_closed_surfaces_and_their_sides():
    V, T = box_surface((0, 0, 0), (1, 2, 3), 3)
    out = TriangleMesh(V, T[:, ::-1])                       # given inwards: turned outwards
    assert out.closed and out.sides == 1 and out.volume() == pytest.approx(6.0, rel=1e-14)
    assert (out.dihedral > 0).sum() == 12 * 3 and (out.dihedral < 0).sum() == 0
    assert len(np.unique(out.patch)) == 6                  # one patch per face of the box
    box = TriangleMesh(V, T, inside=True)                  # a container: normals inwards
    assert box.volume() == pytest.approx(-6.0, rel=1e-14) and (box.dihedral < 0).sum() == 36
    f = floor()
    assert not f.closed and f.sides == 2 and len(np.unique(f.patch)) == 1
    assert f.vertex_flat.sum() == 9                         # the inner vertices of a 4 x 4 grid
    with pytest.raises(InputError, match="closed surface"):
        TriangleMesh(*grid_surface((0, 0), (1, 1), 2), inside=True)
    d = out.box_distance(np.array([[0.5, 1.0, 1.5], [3.0, 2.0, 3.0], [-3.0, 6.0, 1.0]]))
    assert np.allclose(d, (0.0, 2.0, 5.0), rtol=0, atol=1e-15)
    with pytest.raises(InputError, match=r"not closed: edge \[\d+, \d+\] of triangle \d+"):
        TriangleMesh(V, T[1:], closed=True)


# -- a sphere on every feature ---------------------------------------------------------------
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("where", ["face", "edge", "vertex-of-4", "vertex-of-8"])
def test_a_sphere_on_a_face_an_edge_or_a_vertex_of_a_flat_mesh_meets_one_contact(kernel,
                                                                                  where):
    """The floor's grid has squares of 0.25 cut into two triangles, alternate diagonals: a
    point inside a triangle, on an edge between two coplanar ones, at a vertex of 4 and of 8
    triangles. Tilted and moved by a pose, the contact turns with it."""
    m = floor()
    xy = {"face": (0.3, 0.4), "edge": (0.25, 0.4), "vertex-of-4": (0.25, 0.5),
          "vertex-of-8": (0.25, 0.25)}[where]
    r, gap = 0.05, 0.001
    c = contacts(m, (*xy, r + gap), r, margin=0.01, kernel=kernel)
    assert len(c["gap"]) == 1
    assert np.array_equal(c["normal"][0], (0.0, 0.0, 1.0))
    assert c["gap"][0] == pytest.approx(gap, abs=1e-15)
    assert np.allclose(c["point"][0], (*xy, 0.5 * gap), atol=1e-15)
    assert c["raw"][0] >> cm.SHIFT == cm.PATCH
    R = quat_to_matrix(axis_angle_to_quat((1, 2, 3), 0.7)[None])[0]
    t = np.array([0.3, -2.0, 5.0])
    x = t + R @ np.array([*xy, r + gap])
    c2 = contacts(m, x, r, margin=0.01, kernel=kernel, pose=(t, R))
    assert len(c2["gap"]) == 1 and c2["gap"][0] == pytest.approx(gap, abs=1e-12)
    assert np.allclose(c2["normal"][0], R[:, 2], atol=1e-15)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_sphere_rolling_across_a_floor_of_many_triangles_keeps_one_contact_and_normal(
        kernel):
    m = floor(n=25)
    r = 0.02
    s = np.linspace(0.03, 0.97, 3001)
    x = np.stack([s, 0.31 + 0.4 * s, np.full_like(s, r - 1e-4)], axis=1)   # crosses edges
    c = contacts(m, x, r, margin=1e-3, kernel=kernel)
    assert np.array_equal(c["sphere"], np.arange(len(s)))     # one contact each, none lost
    assert (c["normal"] == (0.0, 0.0, 1.0)).all()             # bit for bit the same normal
    assert np.allclose(c["gap"], -1e-4, rtol=0, atol=1e-16)
    assert len(np.unique(c["raw"])) == 1 and len(np.unique(c["feature"])) == 1  # warm start


@pytest.mark.parametrize("kernel", KERNELS)
def test_over_a_ridge_the_normal_turns_continuously_and_a_valley_gives_both_faces(kernel):
    """A roof of two planes at +-20 degrees meeting at x = 0, many triangles each: a sphere
    at constant height over it meets one contact whose normal turns from one face's to the
    other's through the edge's fan without a jump; upside down (a valley), two contacts."""
    a = np.radians(20.0)
    V, T = grid_surface((-1, -1), (1, 1), 16, height=lambda x, y: -np.tan(a) * np.abs(x))
    roof = TriangleMesh(V, T, sides=1)
    r = 0.05
    s = np.linspace(-0.3, 0.3, 2001)
    z = np.where(np.abs(s) >= r * np.sin(a), r / np.cos(a) - np.tan(a) * np.abs(s),
                 np.sqrt(np.maximum(r * r - s * s, 0.0)))          # touching all along
    x = np.stack([s, np.full_like(s, 0.1), z - 1e-5], axis=1)
    c = contacts(roof, x, r, margin=0.0, kernel=kernel)
    assert np.array_equal(c["sphere"], np.arange(len(s)))
    n = c["normal"]
    step = np.linalg.norm(np.diff(n, axis=0), axis=1)
    assert step.max() < 1.5 * 2 * a / (2 * r * np.sin(a) / (s[1] - s[0]))   # no jump anywhere
    assert np.allclose(n[0], (-np.sin(a), 0, np.cos(a)), atol=1e-14)
    assert np.allclose(n[-1], (np.sin(a), 0, np.cos(a)), atol=1e-14)
    kinds = c["raw"] >> cm.SHIFT
    assert set(kinds.tolist()) == {cm.PATCH, cm.EDGE}
    valley = TriangleMesh(V * (1, 1, -1), T, sides=1)      # a mirror turns them: facing up
    c = contacts(valley, (0.0, 0.1, r / np.cos(a) - 1e-4), r, margin=0.0, kernel=kernel)
    assert len(c["gap"]) == 2 and (c["raw"] >> cm.SHIFT == cm.PATCH).all()
    assert np.allclose(np.sort(c["normal"][:, 0]), (-np.sin(a), np.sin(a)), atol=1e-14)
    assert np.allclose(c["normal"][:, 2], np.cos(a), atol=1e-14)
    assert np.allclose(c["gap"], -1e-4 * np.cos(a), atol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_cube_mesh_corner_and_edge_give_one_contact_along_the_centre(kernel):
    m = TriangleMesh(*box_surface((0, 0, 0), (1, 1, 1), 3))
    r = 0.1
    for x, p, kind in (((1.05, 1.05, 1.05), (1, 1, 1), cm.VERTEX),
                       ((1.05, 0.4, 1.05), (1, 0.4, 1), cm.EDGE),
                       ((0.3, 0.6, 1.05), (0.3, 0.6, 1), cm.PATCH),
                       ((1.0, 0.4, 1.05), (1, 0.4, 1), None),      # on the borders of a
                       ((1.05, 0.4, 1.0), (1, 0.4, 1), None),      # face's region and an
                       ((1.0, 1.0, 1.05), (1, 1, 1), None)):       # edge's or a corner's
        c = contacts(m, x, r, margin=0.0, kernel=kernel)
        d = np.subtract(x, p)
        assert len(c["gap"]) == 1 and kind in (None, c["raw"][0] >> cm.SHIFT)
        assert np.allclose(c["normal"][0], d / np.linalg.norm(d), atol=1e-15)
        assert c["gap"][0] == pytest.approx(np.linalg.norm(d) - r, abs=1e-15)


@pytest.mark.parametrize("kernel", KERNELS)
def test_random_throws_in_a_closed_box_mesh_meet_exactly_the_walls(kernel):
    """10^4 spheres placed at random in a box mesh (each face 5 x 5 squares of 2 triangles,
    normals inwards), a fifth of them over the grid's edges and vertices, a third thrown past
    one wall by less than their radius: inside, the contacts are those of the six walls as
    half-spaces; past a wall, that wall's alone (pushing back in); no more, no fewer, with
    their normals and gaps."""
    lo, hi = np.zeros(3), np.array([1.0, 0.7, 0.5])
    box = TriangleMesh(*box_surface(lo, hi, 5), inside=True)
    rng = np.random.default_rng(35)
    n, margin = 10_000, 0.01
    r = rng.uniform(0.02, 0.1, n)
    x = rng.uniform(lo, hi, (n, 3))
    x[:2000] = np.clip(np.round(x[:2000] * 10) / 10, lo + 1e-3, hi - 1e-3)
    out = rng.random(n) < 1 / 3
    axis, side = rng.integers(0, 3, n), rng.integers(0, 2, n)
    past = rng.uniform(0, 0.9, n) * r
    k = np.flatnonzero(out)
    x[k, axis[k]] = np.where(side[k] == 1, hi[axis[k]] + past[k], lo[axis[k]] - past[k])
    h = np.concatenate([x - lo, hi - x], axis=1)               # heights over the six walls
    walls = np.concatenate([np.eye(3), -np.eye(3)])
    expect = np.where((h < 0).any(axis=1)[:, None], h < 0, h - r[:, None] <= margin)
    c = contacts(box, x, r, margin=margin, kernel=kernel)
    assert len(c["sphere"]) == expect.sum()
    wall = np.argmax(c["normal"] @ walls.T, axis=1)
    got = np.zeros_like(expect)
    got[c["sphere"], wall] = True
    assert np.array_equal(got, expect)
    assert np.allclose(c["normal"], walls[wall], rtol=0, atol=1e-15)
    assert np.allclose(c["gap"], h[c["sphere"], wall] - r[c["sphere"]], rtol=0, atol=1e-15)


@pytest.mark.skipif(_km is None, reason="kernels not built")
def test_the_compiled_sphere_mesh_kernel_equals_its_twin():
    """Spheres of many sizes thrown at a wavy terrain (two-sided), a closed box and a
    non-convex closed L-prism (one-sided), placed by a pose: the same contacts bit for bit."""
    rng = np.random.default_rng(5)
    terrain = TriangleMesh(*grid_surface((0, 0), (1, 1), 12,
                                         lambda x, y: 0.1 * np.sin(6 * x) * np.cos(5 * y)))
    box = TriangleMesh(*box_surface((0, 0, 0), (1, 1, 0.3), 3))
    P = np.array([(0, 0), (1, 0), (1, 0.4), (0.4, 0.4), (0.4, 1), (0, 1)], float)
    top = [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)]
    V = np.concatenate([np.column_stack([P, np.zeros(6)]), np.column_stack([P, np.full(6, .3)])])
    T = [t[::-1] for t in top] + [(a + 6, b + 6, c + 6) for a, b, c in top]
    for k in range(6):
        j = (k + 1) % 6
        T += [(k, j, j + 6), (k, j + 6, k + 6)]
    ell = TriangleMesh(V, np.array(T), repair="orientation")
    assert ell.closed and ell.volume() == pytest.approx(0.3 * (1 - 0.36), rel=1e-12)
    assert (ell.dihedral < 0).sum() == 1                       # the inner corner's edge
    total = 0
    for m in (terrain, box, ell):
        n = 4000
        x = rng.uniform(-0.15, 1.15, (n, 3)) * (1, 1, 0.5)
        x[:800] = np.round(x[:800] * 5) / 5
        r = rng.uniform(0.005, 0.15, n)
        R = quat_to_matrix(axis_angle_to_quat((0.3, -1, 2), 0.4)[None])[0]
        pose = (np.array([0.1, 0.2, -0.3]), R)
        xw = x @ R.T + pose[0]
        a = cm.sphere_contacts(m, xw, r, 0.01, pose=pose, kernel=cm.sphere_mesh)
        b = cm.sphere_contacts(m, xw, r, 0.01, pose=pose, kernel=_km.sphere_mesh)
        for f in a:
            assert np.array_equal(a[f], b[f]), f
        total += len(a["gap"])
        assert len(np.unique(a["raw"] >> cm.SHIFT)) == 3       # patches, edges and vertices
    assert total > 3000


# -- blocks on a mesh ------------------------------------------------------------------------
def brick_hull(a=0.2, b=0.1, c=0.05):
    from parsolve.shapes import polyhedron
    return polyhedron.make("brick", np.array([(x, y, z) for x in (-a, a) for y in (-b, b)
                                              for z in (-c, c)]))[0]


def turn(axis, angle):
    return quat_to_matrix(axis_angle_to_quat(axis, angle)[None])[0]


@pytest.mark.parametrize("n", [1, 8, 25])
def test_a_brick_on_a_floor_of_many_triangles_touches_at_its_four_corners(n):
    """On a floor of 2 n^2 triangles the brick's contacts are those on one plane: its four
    bottom corners, normal up, whatever edges of the floor run under it; sliding it across
    the floor keeps them four (no contact from the triangles' inner edges), with their keys."""
    m = floor(n=n, size=2.0)
    h = brick_hull()
    R = turn((0, 0, 1), 0.3)
    for shift in np.linspace(0.5, 1.5, 41):
        x = np.array([shift, 1.0 + 0.1 * shift, 0.05 - 1e-4])
        c = mp.poly_contacts(m, [h], x[None], R[None], margin=0.01)
        corners = x + (h.vertices @ R.T)[h.vertices[:, 2] < 0]
        assert len(c["gap"]) == 4
        assert (c["normal"] == (0.0, 0.0, 1.0)).all()
        assert np.allclose(c["gap"], -1e-4, atol=1e-15)
        assert np.allclose(np.sort(c["point"][:, 0]), np.sort(corners[:, 0]), atol=1e-14)
        assert len(np.unique(c["feature"])) == 4
        if shift == 0.5:
            first = c["raw"]
        assert np.array_equal(c["raw"], first)        # the same four keys all along (warm start)


def test_a_brick_across_a_ridge_rests_on_the_ridge_line_and_one_on_its_edge_touches_twice():
    """A brick lying flat across the convex ridge of a roof (many triangles) touches at the
    two points where the ridge line leaves its bottom face, normal its face's; a brick
    tilted onto one long edge on a floor touches at that edge's two ends."""
    a = np.radians(10.0)
    roof = TriangleMesh(*grid_surface((-1, -1), (1, 1), 16,
                                      height=lambda x, y: -np.tan(a) * np.abs(x)), sides=1)
    h = brick_hull()
    R = turn((0, 0, 1), np.pi / 2)                 # its long side across the ridge (along x)
    c = mp.poly_contacts(roof, [h], np.array([[0.0, 0.03, 0.05 - 1e-5]]), R[None], margin=0.0)
    assert len(c["gap"]) == 2
    assert np.allclose(c["normal"], (0, 0, 1), atol=1e-14)
    assert np.allclose(np.sort(c["point"][:, 1]), (0.03 - 0.2, 0.03 + 0.2), atol=1e-12)
    assert np.allclose(c["point"][:, 0], 0.0, atol=1e-12)
    assert np.allclose(c["gap"], -1e-5, atol=1e-14)
    m = floor(n=12)
    tilt = turn((1, 0, 0), 0.4)                    # about its long axis: one long edge down
    low = (h.vertices @ tilt.T)[:, 2].min()
    c = mp.poly_contacts(m, [h], np.array([[0.5, 0.5, -low - 1e-5]]), tilt[None], margin=0.0)
    assert len(c["gap"]) == 2 and np.allclose(c["normal"], (0, 0, 1), atol=1e-14)
    assert np.allclose(np.sort(c["point"][:, 0]), (0.3, 0.7), atol=1e-12)


def test_a_brick_in_a_box_mesh_meets_the_floor_and_the_near_wall_placed_by_a_pose():
    box = TriangleMesh(*box_surface((0, 0, 0), (1, 1, 1), 4), inside=True)
    h = brick_hull()
    t = np.array([5.0, 0.0, 1.0])
    Rm = turn((0, 1, 0), 0.5)
    x = np.array([0.2 + 0.002, 0.5, 0.05 - 1e-4])  # 2 mm from the wall x = 0, sunk 0.1 mm
    c = mp.poly_contacts(box, [h], (t + Rm @ x)[None], (Rm @ np.eye(3))[None], margin=0.005,
                         pose=(t, Rm))
    local = (c["normal"] @ Rm)
    floor_ = np.isclose(local[:, 2], 1.0)
    wall = np.isclose(local[:, 0], 1.0)
    assert floor_.sum() == 4 and wall.sum() == 4 and len(c["gap"]) == 8
    assert np.allclose(c["gap"][floor_], -1e-4) and np.allclose(c["gap"][wall], 0.002)


# -- convex blocks from files: the hull, own or Qhull's --------------------------------------
def test_a_block_from_an_stl_file_is_its_hull(tmp_path):
    """A subdivided box (98 vertices, most inside its faces) and an L-prism written as STL:
    the blocks are the box itself and the L's hull, exact (Qhull's path past 64 vertices)."""
    from parsolve.shapes import polyhedron
    from parsolve.shapes.mesh import read_vertices

    V, T = box_surface((0, 0, 0), (10, 20, 30), 4)
    meshfile.write_stl(tmp_path / "b.stl", V, T, binary=False)
    P = read_vertices(tmp_path / "b.stl", units="mm", translation=(1, 0, 0))
    h, vol, moments, c, Q = polyhedron.make("b", P)
    assert len(P) == 98 and len(h.faces) == 6 and len(h.vertices) == 8
    assert vol == pytest.approx(6e-6, rel=1e-12)
    assert np.allclose(c, (1.005, 0.01, 0.015), atol=1e-15)
    L = np.array([(0, 0), (3, 0), (3, 1), (1, 1), (1, 2), (0, 2)], float)
    V = np.concatenate([np.column_stack([L, np.zeros(6)]), np.column_stack([L, np.ones(6)])])
    h, vol, *_ = polyhedron.make("L hull", V)
    assert vol == pytest.approx(3 * 2 - 0.5 * 2 * 1, rel=1e-14)       # the cut corner filled


@pytest.mark.parametrize("n", [20, 48, 64, 90])
def test_qhull_gives_the_own_hulls_faces(n):
    """The same faces and vertices; past qhull.SMALL points in the same order too, so that a
    block's mass properties have the same bits with SciPy and without."""
    pytest.importorskip("scipy.spatial")
    from parsolve.shapes import polyhedron, qhull

    rng = np.random.default_rng(n)
    P = rng.normal(size=(n, 3))
    P[: n // 2] = np.round(P[: n // 2])                    # many points on common planes
    P = np.unique(P, axis=0)
    own, used = polyhedron.convex_hull("own", P, method="own")
    mine, used2 = qhull.convex_hull("qhull", P)
    assert np.array_equal(used, used2)
    key = lambda fs: sorted(tuple(np.roll(f, -int(np.argmin(f)))) for f in fs)  # noqa: E731
    assert key(own) == key(mine)
    if n > qhull.SMALL:
        keep, qhull.available = qhull.available, lambda: False
        try:
            alone, _ = polyhedron.convex_hull("no scipy", P)
        finally:
            qhull.available = keep
        assert [f.tolist() for f in alone] == [f.tolist() for f in mine]
        for a, b in zip(polyhedron.mass_properties(P[used], alone),
                        polyhedron.mass_properties(P[used], mine)):
            assert np.array_equal(a, b)


def test_nearly_coplanar_points_give_a_closed_hull():
    """A cube's corners and 100 points on its faces, 1e-10 off their planes: the own hull's
    planes through three points overlap there; its check sends it to Qhull: six faces."""
    pytest.importorskip("scipy.spatial")
    from parsolve.shapes import polyhedron

    rng = np.random.default_rng(1)
    face = rng.integers(0, 6, 100)
    Q = rng.uniform(-1, 1, (100, 3))
    Q[np.arange(100), face % 3] = np.where(face < 3, 1.0, -1.0) + rng.uniform(-1e-10, 0, 100)
    C = np.array([(a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)], float)
    for P in (np.concatenate([C, Q[:40]]), np.concatenate([C, Q])):   # own path, Qhull's
        faces, used = polyhedron.convex_hull("cube", P)
        assert polyhedron._closed(faces)
        assert polyhedron.mass_properties(P[used], faces)[0] == pytest.approx(8.0, rel=1e-9)


@pytest.mark.skipif(_km is None, reason="kernels not built")
def test_the_compiled_block_mesh_kernel_equals_its_twin():
    """Bricks, a stretched icosahedron-like hull and boxes thrown at a wavy terrain (two-sided,
    from both sides), a box mesh and the L-prism's (one-sided): the same points."""
    from parsolve.shapes import polyhedron

    rng = np.random.default_rng(11)
    hulls = [brick_hull(0.1, 0.05, 0.03), brick_hull(0.02, 0.02, 0.02),
             polyhedron.make("rock", rng.normal(size=(14, 3)) * (0.08, 0.05, 0.04))[0]]
    terrain = TriangleMesh(*grid_surface((0, 0), (1, 1), 10,
                                         lambda x, y: 0.08 * np.sin(6 * x) * np.cos(5 * y)))
    box = TriangleMesh(*box_surface((0, 0, 0), (1, 1, 0.4), 3), inside=True)
    total = 0
    for m in (terrain, box):
        n = 300
        which = rng.integers(0, 3, n)
        x = rng.uniform(-0.05, 1.05, (n, 3)) * (1, 1, 0.4) + (0, 0, -0.05 if m is terrain
                                                               else 0.0)
        q = rng.normal(size=(n, 4))
        R = quat_to_matrix(q / np.linalg.norm(q, axis=1)[:, None])
        R[: n // 3] = np.eye(3)                                      # some flat on the floor
        hs = [hulls[w] for w in which]
        a = mp.poly_contacts(m, hs, x, R, 0.01, kernel=mp.poly_mesh)
        b = mp.poly_contacts(m, hs, x, R, 0.01, kernel=_kp.poly_mesh)
        for f in ("block", "raw", "feature"):
            assert np.array_equal(a[f], b[f]), f
        for f in ("normal", "point", "gap"):
            assert np.allclose(a[f], b[f], rtol=0, atol=1e-13), f
        total += len(a["gap"])
        assert len(np.unique(a["block"])) > n // 8               # a fair share touch
    assert total > 500


def _project(x, v, r, mesh, h, margin, sweeps=3):
    """One step of spheres moving inside `mesh` with contacts that close no gap: each
    contact's normal velocity raised to -gap / h where it would close more (a Gauss-Seidel
    sweep over each sphere's few contacts, Moreau's projection without friction)."""
    c = cm.sphere_contacts(mesh, x, r, margin)
    s, n, need = c["sphere"], c["normal"], -c["gap"] / h
    first = np.searchsorted(s, s)                  # each sphere's contacts are contiguous
    rank = np.arange(len(s)) - first
    for _ in range(sweeps):
        for j in range(rank.max(initial=-1) + 1):  # the j-th contact of every sphere at once
            k = np.flatnonzero(rank == j)
            vn = np.einsum("ij,ij->i", v[s[k]], n[k])
            v[s[k]] += np.maximum(need[k] - vn, 0.0)[:, None] * n[k]
    return x + h * v, v, c


def test_ten_thousand_spheres_thrown_in_a_closed_box_mesh_stay_inside():
    """10^4 spheres thrown at random in a box mesh (normals inwards, 4 x 4 squares a face)
    under gravity, 300 steps of a projection that closes no detected gap: none leaves the box,
    none sinks into a wall by more than round-off, at faces, edges and corners alike (a missed
    contact would let a sphere through: the step carries it past its margin)."""
    lo, hi = np.zeros(3), np.array([1.0, 0.8, 0.6])
    box = TriangleMesh(*box_surface(lo, hi, 4), inside=True)
    rng = np.random.default_rng(350)
    compiled = cm._kernel(cm.sphere_mesh) is not cm.sphere_mesh
    n, h = (10_000 if compiled else 300), 1e-3      # the twin's pace: a few hundred
    r = rng.uniform(0.01, 0.05, n)
    x = rng.uniform(lo + r[:, None], hi - r[:, None], (n, 3))
    v = rng.normal(size=(n, 3)) * 3.0
    vmax = 20.0
    worst = np.inf
    for step in range(300):
        v[:, 2] -= 9.81 * h
        np.clip(v, -vmax, vmax, out=v)
        x, v, c = _project(x, v, r, box, h, margin=1.1 * np.sqrt(3) * vmax * h)
        depth = np.minimum(x - lo, hi - x).min(axis=1) - r
        worst = min(worst, depth.min())
    assert worst > -1e-12
    assert len(c["gap"]) > n // 10               # resting on the floor, many on two walls


def test_a_sphere_sliding_across_a_floor_of_many_triangles_keeps_its_velocity():
    """Frictionless, under gravity, across 5,000 triangles and their edges for 1 s: no bump:
    the velocity along the floor and the height stay what they were, bit for bit."""
    m = floor(n=50, size=2.0)
    x = np.array([[0.1, 0.13, 0.03]])
    v = np.array([[1.7, 0.61, 0.0]])
    r = np.array([0.03])
    h = 1e-3
    for step in range(1000):
        v[:, 2] -= 9.81 * h
        x, v, c = _project(x, v, r, m, h, margin=0.01)
        assert len(c["gap"]) == 1
    assert np.array_equal(v[0, :2], (1.7, 0.61)) and v[0, 2] == 0.0
    assert x[0, 2] == pytest.approx(0.03, abs=1e-15)
    assert x[0, 0] == pytest.approx(1.8, rel=1e-12)


def test_as_pair_functions_a_floor_mesh_meets_spheres_and_boxes_as_the_half_space_does():
    """The adapters in narrow.py's shape (a, b, feature, normal, point, gap): spheres and
    boxes above a floor of many triangles get the contacts a half-space z >= 0 gives them
    (contact/narrow.py's sphere_plane and box_plane), the same numbers."""
    from types import SimpleNamespace

    from parsolve import shapes
    from parsolve.contact import narrow
    from parsolve.dynamics.rotation import axis_angle_to_quat

    rng = np.random.default_rng(9)
    n = 500
    r = rng.uniform(0.01, 0.05, n)
    x = np.column_stack([rng.uniform(0.1, 0.9, (n, 2)), rng.uniform(-0.5, 1.5, n) * r])
    A = SimpleNamespace(x=x, radius=r)
    B = SimpleNamespace(point=np.zeros((1, 3)), normal=np.array([[0.0, 0.0, 1.0]]))
    m = TriangleMesh(*grid_surface((0, 0), (1, 1), 20), sides=1)    # one-sided: a half-space
    got = cm.sphere_pairs(A, np.arange(n), m, 0, 0.01)
    ref = narrow.sphere_plane(A, np.arange(n), B, np.zeros(n, np.int64), 0.01)
    keep = ref["gap"] <= 0.01
    assert np.array_equal(got["a"], ref["a"][keep]) and (got["b"] == 0).all()
    for f in ("normal", "point", "gap"):
        assert np.allclose(got[f], ref[f][keep], rtol=0, atol=1e-15), f
    half = np.array([0.04, 0.02, 0.01])
    key = shapes.LIBRARY.add(shapes.BOX, half)
    q = np.array([axis_angle_to_quat((0, 0, 1), a) for a in rng.uniform(0, 3, 50)])
    xb = np.column_stack([rng.uniform(0.1, 0.9, (50, 2)), 0.01 + rng.uniform(-2e-3, 5e-3, 50)])
    Ab = SimpleNamespace(x=xb, q=q, shape=np.full(50, shapes.BOX), template=np.full(50, key))
    got = mp.block_pairs(Ab, np.arange(50), m, 0, 1e-3)
    ref = narrow.box_plane(Ab, np.arange(50), B, np.zeros(50, np.int64), 1e-3)
    keep = ref["gap"] <= 1e-3
    assert len(got["a"]) == keep.sum() and np.array_equal(np.unique(got["a"]),
                                                          np.unique(ref["a"][keep]))
    a = np.lexsort((ref["point"][keep][:, 1], ref["point"][keep][:, 0], ref["a"][keep]))
    b = np.lexsort((got["point"][:, 1], got["point"][:, 0], got["a"]))
    for f in ("normal", "point", "gap"):
        assert np.allclose(got[f][b], ref[f][keep][a], rtol=0, atol=1e-15), f
