"""Convex polyhedra and masonry: exact mass properties, the contact polygon of two blocks, the
compiled narrow phase against its twin, a block sliding or sticking on an incline, a cube
falling flat from an edge, arches standing or collapsing by their thickness, bad input."""
import numpy as np
import pytest

import parsolve as ps
from parsolve import shapes
from parsolve.contact import polyhedra
from parsolve.dynamics.rotation import axis_angle_to_quat, quat_to_matrix
from parsolve.errors import InputError
from parsolve.shapes import polyhedron
from tests.scenes import G, run


def cube(a):
    return np.array([(x, y, z) for x in (-a, a) for y in (-a, a) for z in (-a, a)], float)


def test_tetrahedron_mass_properties_are_exact():
    a, b, c = 1.0, 2.0, 3.0
    V = np.array([[0, 0, 0], [a, 0, 0], [0, b, 0], [0, 0, c]], float)
    faces, _ = polyhedron.convex_hull("tet", V)
    vol, centre, J = polyhedron.mass_properties(V, faces)
    m = a * b * c / 6
    assert vol == pytest.approx(m, rel=1e-12, abs=0)
    assert np.allclose(centre, (a / 4, b / 4, c / 4), rtol=0, atol=1e-12)
    exact = m * np.array([[3 / 80 * (b * b + c * c), a * b / 80, a * c / 80],
                          [a * b / 80, 3 / 80 * (a * a + c * c), b * c / 80],
                          [a * c / 80, b * c / 80, 3 / 80 * (a * a + b * b)]])
    assert np.abs(J - exact).max() <= 1e-12 * np.abs(exact).max()
    # the body frame: the same moments as the tensor's eigenvalues, the vertices' centroid 0
    h, vol2, moments, c0, Q = polyhedron.make("tet", V)
    assert np.allclose(np.sort(moments), np.linalg.eigvalsh(exact), rtol=1e-12, atol=0)
    assert np.allclose(Q @ np.diag(moments) @ Q.T, exact, rtol=0, atol=1e-12)
    assert np.abs(h.vertices.mean(axis=0)).max() < 1e-12       # a tetrahedron's centroid


def test_wedge_mass_properties_are_exact_and_given_faces_agree_with_the_hull():
    a, b, L = 0.3, 0.5, 2.0          # a right-triangle prism: legs a (x), b (z), length L (y)
    V = np.array([[0, y, 0] for y in (0, L)] + [[a, y, 0] for y in (0, L)] +
                 [[0, y, b] for y in (0, L)], float)
    m = a * b * L / 2
    exact = m * np.array([[L * L / 12 + b * b / 18, 0, a * b / 36],
                          [0, (a * a + b * b) / 18, 0],
                          [a * b / 36, 0, a * a / 18 + L * L / 12]])
    faces = [[0, 2, 4], [1, 5, 3], [0, 1, 3, 2], [0, 4, 5, 1], [2, 3, 5, 4]]
    for f in (None, faces, [f[::-1] for f in faces]):       # hull, given, given inwards
        fs = polyhedron.convex_hull("wedge", V)[0] if f is None else \
            polyhedron.check_faces("wedge", V, f)
        vol, centre, J = polyhedron.mass_properties(V, fs)
        assert vol == pytest.approx(m, rel=1e-12, abs=0)
        assert np.allclose(centre, (a / 3, L / 2, b / 3), rtol=0, atol=1e-12)
        assert np.abs(J - exact).max() <= 1e-12 * np.abs(exact).max()
    model = ps.Model()
    model.surface("s", "s", friction=0.5)
    model.polyhedron(V, "s", faces=faces, density=2.0)
    body = model.build()
    assert body.mass[0] == pytest.approx(2 * m, rel=1e-12)
    assert np.allclose(np.sort(body.inertia[0]), 2 * np.linalg.eigvalsh(exact), rtol=1e-12)
    assert np.allclose(body.x[0], (a / 3, L / 2, b / 3), atol=1e-12)


def test_bad_polyhedra_are_named():
    model = ps.Model()
    model.surface("s", "s", friction=0.5)
    with pytest.raises(InputError, match="coplanar"):
        model.polyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], "s", density=1)
    with pytest.raises(InputError, match="n >= 4"):
        model.polyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "s", density=1)
    V = cube(1.0)
    with pytest.raises(InputError, match="face 0"):
        model.polyhedron(V, "s", faces=[[0, 1, 7], [0, 1, 2]], density=1)
    with pytest.raises(InputError, match="close"):
        model.polyhedron(V[[0, 4, 2, 1]], "s", faces=[[0, 1, 2], [0, 3, 1], [0, 2, 3]],
                         density=1)
    with pytest.raises(InputError, match="takes no density"):
        model.polyhedron(V, "s", density=1, fixed=True)


def pair_of(hA, xA, qA, hB, xB, qB, margin=0.0, kernel=None):
    """Contacts of two placed hulls through the packed narrow phase."""
    keys = [shapes.LIBRARY.add(shapes.POLYHEDRON, h.params()) for h in (hA, hB)]
    t = polyhedra.PACK.index(np.array(keys, np.int64), polyhedron.hull)
    R = quat_to_matrix(np.array([qA, qB], float))
    return polyhedra.contacts(t[:1], np.array([xA], float), R[:1], t[1:], np.array([xB], float),
                              R[1:], margin, kernel=kernel)


def hull(V):
    return polyhedron.make("test", V)[0]


def test_two_cubes_face_to_face_touch_at_the_corners_of_their_overlap():
    """Cube A (half 0.5) above cube B (half 0.5) turned by 45 degrees about z, overlapping
    by 1e-3: the contact polygon is the regular octagon of a square over a square turned
    by 45 degrees."""
    c = hull(cube(0.5))
    q = axis_angle_to_quat((0, 0, 1), np.pi / 4)
    got = pair_of(c, (0.1, 0.05, 0.999), (1, 0, 0, 0), c, (0, 0, 0), q)
    pts = got["point"]
    assert len(pts) == 8 and len(set(got["feature"].tolist())) == 8
    assert np.allclose(got["normal"], (0, 0, 1), atol=1e-12)
    assert np.allclose(got["gap"], -1e-3, atol=1e-12)
    assert np.allclose(pts[:, 2], 0.5 - 5e-4, atol=1e-12)
    # the corners of the intersection of the square |x - 0.1|, |y - 0.05| <= 0.5 and the
    # diamond |x| + |y| <= 1 / sqrt(2)
    r = 0.5 * np.sqrt(2)
    for x, y in pts[:, :2]:
        on_square = np.isclose(abs(x - 0.1), 0.5) or np.isclose(abs(y - 0.05), 0.5)
        on_diamond = np.isclose(abs(x) + abs(y), r)
        assert on_square and on_diamond
        assert abs(x - 0.1) <= 0.5 + 1e-12 and abs(y - 0.05) <= 0.5 + 1e-12
        assert abs(x) + abs(y) <= r + 1e-12


def test_two_aligned_cubes_touch_at_the_four_corners_of_the_smaller_face():
    big, small = hull(cube(1.0)), hull(cube(0.25))
    got = pair_of(small, (0.2, -0.3, 1.2499), (1, 0, 0, 0), big, (0, 0, 0), (1, 0, 0, 0))
    assert len(got["point"]) == 4
    corners = {(round(x, 9), round(y, 9)) for x, y in got["point"][:, :2]}
    assert corners == {(round(0.2 + sx * 0.25, 9), round(-0.3 + sy * 0.25, 9)) for sx in (-1, 1)
                       for sy in (-1, 1)}
    assert np.allclose(got["gap"], -1e-4, atol=1e-12)
    # separated by more than the margin: nothing; within it: the same four at gap 1e-4
    assert len(pair_of(small, (0, 0, 1.2501), (1, 0, 0, 0), big, (0, 0, 0),
                       (1, 0, 0, 0))["point"]) == 0
    near = pair_of(small, (0, 0, 1.2501), (1, 0, 0, 0), big, (0, 0, 0), (1, 0, 0, 0), 2e-4)
    assert len(near["point"]) == 4 and np.allclose(near["gap"], 1e-4, atol=1e-12)


def test_crossed_edges_touch_at_one_point():
    """Two long bars crossed at right angles, each turned 45 degrees about its length, so
    that an edge of one lies across an edge of the other: one point, the normal along z."""
    bar = hull(np.array([(x, y, z) for x in (-1, 1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)]))
    qa = axis_angle_to_quat((1, 0, 0), np.pi / 4)
    qb = ps.dynamics.rotation.quat_mul(axis_angle_to_quat((0, 0, 1), np.pi / 2)[None],
                                       axis_angle_to_quat((1, 0, 0), np.pi / 4)[None])[0]
    d = 0.1 * np.sqrt(2)
    got = pair_of(bar, (0, 0, 2 * d - 1e-3), qa, bar, (0, 0, 0), qb)
    assert len(got["point"]) == 1
    assert np.allclose(got["normal"][0], (0, 0, 1), atol=1e-9)
    assert got["gap"][0] == pytest.approx(-1e-3, abs=1e-12)
    assert np.allclose(got["point"][0], (0, 0, d - 5e-4), atol=1e-12)


def test_compiled_narrow_phase_equals_its_twin():
    from parsolve._kernels.polyhedra import poly_contacts as compiled

    rng = np.random.default_rng(3)
    hs = [hull(rng.normal(size=(12, 3)) * (1.0, 0.6, 0.4)) for _ in range(4)] + \
        [hull(cube(0.5))]
    keys = np.array([shapes.LIBRARY.add(shapes.POLYHEDRON, h.params()) for h in hs])
    t = polyhedra.PACK.index(keys, polyhedron.hull)
    n = 300
    ta, tb = t[rng.integers(0, 5, n)], t[rng.integers(0, 5, n)]
    xa = rng.normal(size=(n, 3)) * 0.8
    qa, qb = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
    Ra = quat_to_matrix(qa / np.linalg.norm(qa, axis=1)[:, None])
    Rb = quat_to_matrix(qb / np.linalg.norm(qb, axis=1)[:, None])
    xb = np.zeros((n, 3))
    twin = polyhedra.contacts(ta, xa, Ra, tb, xb, Rb, 0.05, kernel=polyhedra.poly_contacts)
    comp = polyhedra.contacts(ta, xa, Ra, tb, xb, Rb, 0.05, kernel=compiled)
    assert len(twin["pair"]) > 300                          # many pairs touch, several points
    assert len(np.unique(twin["pair"])) < n                  # and some do not
    for f in ("pair", "feature"):
        assert np.array_equal(twin[f], comp[f])
    for f in ("normal", "point", "gap"):
        assert np.allclose(twin[f], comp[f], rtol=0, atol=1e-12)


def prism(r, height, sides=6):
    """A right prism on a regular polygon of circumradius r, axis along z, base at z = 0."""
    a = 2 * np.pi * np.arange(sides) / sides
    ring = np.stack([r * np.cos(a), r * np.sin(a), np.zeros(sides)], axis=1)
    return np.concatenate([ring, ring + (0, 0, height)])


def incline(theta, mu, v0=0.0):
    """A hexagonal prism lying on a fixed slab (a polyhedron) inclined by theta about y, so
    that +x runs downhill along d = (cos theta, 0, -sin theta); launched downhill at v0."""
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("block", "slab", friction=mu, restitution=0.0)
    turn = [((0, 1, 0), theta)]
    slab = np.array([(x, y, z) for x in (-2, 2) for y in (-0.5, 0.5) for z in (-0.2, 0.0)])
    m.polyhedra(slab, [(0, 0, 0)], "slab", orientations=turn, fixed=True, names=["slab"])
    d = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    b = m.polyhedra(prism(0.1, 0.05), [(0, 0, 0)], "block", orientations=turn, density=2000,
                    velocities=[v0 * d])[0]
    return m, b, d


@pytest.mark.parametrize("theta, mu, v0", [(0.5, 0.3, 0.0), (0.3, 0.5, 0.2), (0.3, 0.5, 0.0)])
def test_a_block_on_an_incline_slides_at_g_sin_minus_mu_cos_or_sticks(theta, mu, v0):
    """Above the friction angle (theta = 0.5 rad, mu = 0.3) the block slides from rest at
    a = g (sin theta - mu cos theta); below it (mu = 0.5 > tan 0.3) a block launched
    downhill slows at that (negative) rate until it stops, and one at rest stays."""
    m, b, d = incline(theta, mu, v0)
    h, T = 1e-3, 0.2
    sim = run(m, T, h, tol=1e-12)
    a = G * (np.sin(theta) - mu * np.cos(theta))
    v = sim.bodies.v[0]
    expect = max(v0 + a * T, 0.0)
    assert v @ d == pytest.approx(expect, abs=1e-9 + 1e-9 * abs(a) * T)
    assert np.linalg.norm(v - (v @ d) * d) < 1e-9                  # along the slope
    assert np.abs(sim.bodies.w[0]).max() < 1e-8                     # no tipping
    assert len(sim.contacts) == 6                                   # the hexagon's corners


def test_a_cube_released_on_one_edge_falls_flat_and_rests():
    """A cube (a polyhedron) turned 30 degrees about y with one edge on a fixed slab: its
    centre is beyond the edge on the side of the face that was down, so it falls back onto
    that face and comes to rest flat, its four corners on the slab."""
    a = 0.05
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("cube", "slab", friction=0.6, restitution=0.0)
    m.polyhedron(np.array([(x, y, z) for x in (-1, 1) for y in (-0.5, 0.5)
                           for z in (-0.2, 0.0)]), "slab", fixed=True)
    phi = np.pi / 6
    R = quat_to_matrix(axis_angle_to_quat((0, 1, 0), phi)[None])[0]
    corners = cube(a) @ R.T
    lift = -corners[:, 2].min()
    m.polyhedron(corners + (0, 0, lift), "cube", density=1000)
    h = 1e-3
    sim = run(m, 0.8, h, tol=1e-10)
    b = sim.bodies
    normals = polyhedron.hull(int(b.template[0])).normals
    before = normals @ quat_to_matrix(m.build().q)[0].T
    after = normals @ quat_to_matrix(b.q)[0].T
    down = int(np.argmin(after[:, 2]))
    # a face down, to the overlap the impact leaves (Moreau-Jean closes gaps at the velocity
    # level: the edge lands at ~0.6 m/s, so up to ~h * 0.6 m/s over the cube's width 2a)
    assert np.arccos(-after[down, 2]) < h * 0.6 / (2 * a)
    assert down == int(np.argmin(before[:, 2]))                      # it fell back
    assert b.x[0, 2] == pytest.approx(a, abs=h * 0.6)
    assert np.linalg.norm(b.v[0]) < 1e-6 and np.linalg.norm(b.w[0]) < 1e-5
    assert len(sim.contacts) == 4                                    # resting on its corners


def arch_model(ratio, blocks=11):
    """A semicircular arch of centreline radius 1 m and thickness ratio t / R on fixed
    abutments, mu = 0.8 (no sliding: the limit is by hinges)."""
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("stone", "stone", friction=0.8, restitution=0.0)
    t = ratio * 1.0
    ids = m.arch(span=2 * (1.0 - t / 2), thickness=t, depth=0.3, blocks=blocks,
                 material="stone", density=2000)
    return m, ids


def test_a_thick_arch_stands_and_a_thin_one_collapses():
    """Heyman's minimum thickness of a semicircular arch is t / R = 0.1075 (Milankovitch):
    at 0.2 it stands (the keystone moves less than 1e-4 R in 1 s), at 0.05 it falls
    within 0.4 s by a four-hinge mechanism (the keystone drops, the haunches move out)."""
    m, ids = arch_model(0.2)
    x0 = m.build().x
    sim = run(m, 1.0, 2e-3, tol=1e-9, max_iter=500)
    key = len(ids) // 2
    assert np.linalg.norm(sim.bodies.x[key] - x0[key]) < 1e-4
    m, ids = arch_model(0.05)
    x0 = m.build().x
    sim = run(m, 0.4, 2e-3, tol=1e-9, max_iter=500)
    x = sim.bodies.x
    assert x0[key, 2] - x[key, 2] > 0.1                              # the crown falls
    left, right = x[2] - x0[2], x[-3] - x0[-3]
    assert left[0] < -1e-3 and right[0] > 1e-3                       # haunches thrust out


def test_polyhedra_are_drawn_in_the_xdmf_as_closed_surfaces_with_their_data(tmp_path):
    """A run's XDMF holds each block as its faces (polygons whose corners are the block's
    vertices at that frame) with the block's id per face, and a fixed polyhedron's faces
    among the obstacles; VTK's XDMF reader (ParaView's) reads both."""
    vtk = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    m, b, d = incline(0.5, 0.3)
    out = tmp_path / "incline.h5"
    sim = run(m, 0.01, 1e-3, output=str(out), frames=0.005)
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(tmp_path / "incline.xdmf"))
    reader.Update()
    data = reader.GetOutputDataObject(0)
    blocks = {data.GetMetaData(i).Get(data.NAME()): data.GetBlock(i)
              for i in range(data.GetNumberOfBlocks())}
    faces = blocks["polyhedra"]
    assert faces.GetNumberOfCells() == 8                       # a hexagonal prism's faces
    assert faces.GetCell(0).GetClassName() == "vtkPolygon"
    ids = faces.GetCellData().GetArray("id")
    assert {ids.GetValue(k) for k in range(8)} == {b}
    pts = np.array([faces.GetPoint(k) for k in range(faces.GetNumberOfPoints())])
    hull = polyhedron.hull(int(sim.bodies.template[0]))
    start = m.build()
    expect = start.x[0] + hull.vertices @ quat_to_matrix(start.q)[0].T
    assert np.allclose(pts, expect, atol=1e-12)                # the first frame's corners
    assert blocks["obstacles"].GetNumberOfCells() == 6          # the slab's faces


def test_a_sphere_finds_the_nearest_point_of_a_block_face_edge_or_vertex_or_leaves_inside():
    """Sphere centres around a unit cube (a polyhedron) turned about z: above a face, beside
    an edge, beyond a vertex and inside, against the distance to the box computed directly."""
    from parsolve.contact.polyhedra import closest_points

    h = hull(cube(0.5))
    c = np.array([[0.1, 0.2, 0.9], [0.8, 0.8, 0.0], [0.9, -0.8, 0.7], [0.1, 0.0, 0.3],
                  [-0.2, 0.45, -0.1]])
    y, d, n = closest_points(h, c)
    outside = np.linalg.norm(c - np.clip(c, -0.5, 0.5), axis=1)
    depth = 0.5 - np.abs(c).max(axis=1)
    assert np.allclose(d, np.where(outside > 0, outside, -depth), atol=1e-12)
    assert np.allclose(y[:3], np.clip(c[:3], -0.5, 0.5), atol=1e-12)
    assert np.allclose(n[0], (0, 0, 1)) and np.allclose(n[3], (0, 0, 1))
    assert np.allclose(n[4], (0, 1, 0))
    # a sphere resting on a tilted block through the narrow phase
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("s", "s", friction=0.5)
    m.polyhedra(cube(0.5), [(0, 0, 0)], "s", orientations=[((0, 0, 1), 0.3)], fixed=True)
    m.sphere((0.2, 0.1, 0.6), 0.1, "s", density=1000)
    sim = run(m, 0.05, 1e-3)
    assert sim.bodies.x[0, 2] == pytest.approx(0.6, abs=1e-6)
    assert np.allclose(sim.contacts.frame[:, 0], (0, 0, 1), atol=1e-12)


def test_mixed_sizes_broad_phase_finds_the_pairs_of_one_grid():
    """Radii over a factor 300 (grains and blocks): the pairs of the grids per level of
    sizes are exactly the pairs within reach, found here by brute force, in the same order."""
    from parsolve.contact import broadphase

    rng = np.random.default_rng(5)
    n = 600
    x = rng.uniform(0, 1, (n, 3))
    r = np.where(rng.uniform(size=n) < 0.05, rng.uniform(0.05, 0.3, n),
                 rng.uniform(0.001, 0.01, n))
    pairs = broadphase.candidate_pairs(x, r, 1e-3)
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    i, j = np.nonzero(np.triu(d <= r[:, None] + r[None] + 1e-3, 1))
    assert len(pairs) > 400
    np.testing.assert_array_equal(pairs, np.stack([i, j], axis=1))
    assert r.max() > broadphase.LEVEL_RATIO ** 2 * r.min()      # three levels and more


def test_a_large_block_pairs_only_with_the_grains_near_its_box():
    """With the shapes' extents the broad phase looks for a long beam's neighbours in its
    box, not its bounding sphere: far fewer candidates, the same contacts."""
    from parsolve.contact import broadphase
    from parsolve.contact.detect import detect

    m = ps.Model(gravity=(0, 0, -G))
    m.surface("g", "g", friction=0.5)
    r = 0.01
    g = np.arange(40) * 2.02 * r
    X, Y = np.meshgrid(g, g)
    m.spheres(np.stack([X.ravel(), Y.ravel(), np.full(X.size, r)], axis=1), r, "g",
              density=2500)
    beam = np.array([(a, b, c) for a in (-0.3, 0.3) for b in (-0.05, 0.05)
                     for c in (-0.05, 0.05)])
    m.polyhedron(beam + (0.4, 0.4, 0.05 + 2 * r - 1e-3), "g", density=2500)
    bodies = m.build()
    mu, e = np.full((1, 1), 0.5), np.zeros((1, 1))
    boxed = broadphase.candidate_pairs(bodies.x, bodies.radius, 1e-4,
                                       lambda rows: shapes.extents(bodies, rows))
    spheres = broadphase.candidate_pairs(bodies.x, bodies.radius, 1e-4)
    assert len(boxed) < 0.35 * len(spheres)
    assert set(map(tuple, boxed)) <= set(map(tuple, spheres))
    c = detect(bodies, m.obstacles, mu, e, 1e-4)
    big = len(bodies) - 1
    under = np.flatnonzero((c.a == big) | (c.b == big))
    assert len(under) >= 16                                # the grains under the beam
    assert set(np.where(c.a[under] == big, c.b[under], c.a[under])) <= \
        set(boxed[boxed[:, 1] == big, 0])


def test_masonry_generators_make_the_blocks_they_describe():
    """A vault of two rings (the second staggered: halves at its ends) has the volume of its
    voussoirs' trapezoids; a pointed arch is symmetric about its crown, its halves' equal
    voussoirs share one template, and it stands; a wall in running bond has its courses."""
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("s", "s", friction=0.8)
    R, t, L, n = 1.0, 0.2, 0.6, 6
    ids = m.vault(span=2 * R, thickness=t, length=L, blocks=n, rings=2, material="s",
                  density=1.0)
    assert len(ids) == 2 * n + 1 and len(m.obstacles) == 4
    b = m.build()
    trapezoid = lambda a: 0.5 * np.sin(a) * ((R + t) ** 2 - R ** 2)  # noqa: E731
    d = np.pi / n
    assert b.mass[:n].sum() == pytest.approx(n * trapezoid(d) * L / 2, rel=1e-12)
    assert b.mass[n:].sum() == pytest.approx(((n - 1) * trapezoid(d) + 2 * trapezoid(d / 2))
                                             * L / 2, rel=1e-12)
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("s", "s", friction=0.8)
    with pytest.raises(InputError, match="even number"):
        m.arch(span=2.0, thickness=0.3, depth=0.3, blocks=7, material="s", density=2000,
               pointed=True)
    ids = m.arch(span=2.0, thickness=0.3, depth=0.3, blocks=8, material="s", density=2000,
                 pointed=True)
    x0 = m.build().x
    assert np.allclose(x0[::-1] * (-1, 1, 1), x0, atol=1e-12)          # mirror symmetric
    assert x0[:, 2].max() < 2.0 * np.sqrt(3) / 2 + 0.3                  # under the apex
    assert len(set(m.build().template[:3].tolist())) == 1
    sim = run(m, 0.3, 2e-3, tol=1e-9, max_iter=500)
    assert np.abs(sim.bodies.x - x0).max() < 1e-4
    m = ps.Model()
    m.surface("s", "s", friction=0.6)
    ids = m.wall(length=1.0, height=0.3, brick=(0.2, 0.1, 0.05), material="s", density=1)
    b = m.build()
    assert len(ids) == 3 * 5 + 3 * 6                      # courses of 5 and of 4 + two halves
    assert b.mass.sum() == pytest.approx(1.0 * 0.3 * 0.1, rel=1e-12)   # the wall's volume


def test_a_bridge_has_its_vault_and_spandrel_walls_without_overlaps():
    """model.bridge: a bonded barrel vault on two fixed abutments and spandrel walls whose
    bricks over the arch are cut along its extrados: no block overlaps another or an
    abutment, and the walls fill the spandrels (between the extrados' inscribed polygon and
    the circle it approximates, less the left-out slivers)."""
    from parsolve.contact.detect import detect

    m = ps.Model(gravity=(0, 0, -G))
    m.surface("s", "s", friction=0.6)
    R, t, W, n, rings, deck, (lx, ly, lz) = 1.0, 0.25, 0.8, 12, 4, 1.6, (0.2, 0.1, 0.1)
    with pytest.raises(InputError, match="deck"):
        m.bridge(span=2 * R, thickness=t, width=W, blocks=n, rings=rings, deck=1.2,
                 brick=(lx, ly, lz), material="s", density=1.0)
    ids = m.bridge(span=2 * R, thickness=t, width=W, blocks=n, rings=rings, deck=deck,
                   brick=(lx, ly, lz), material="s", density=1.0, leaves=2)
    b = m.build()
    assert len(m.obstacles) == 2 and len(b) == len(ids)
    voussoirs = rings * n + rings // 2                       # odd rings: two halves more
    trapezoid = lambda a: 0.5 * np.sin(a) * ((R + t) ** 2 - R ** 2)  # noqa: E731
    d = np.pi / n
    ring = W / rings * (n * trapezoid(d) + (n - 1) * trapezoid(d) + 2 * trapezoid(d / 2)) / 2
    assert b.mass[:voussoirs].sum() == pytest.approx(rings * ring, rel=1e-10)  # 1e-12 m corners
    c = detect(b, m.obstacles, np.full((1, 1), 0.6), np.zeros((1, 1)), 1e-6)
    assert c.gap.min() > -1e-9                                # nothing overlaps
    end, H = R + t + t, int(deck / lz) * lz
    walls = b.mass[voussoirs:].sum() / (2 * 2 * ly)           # per unit of wall thickness
    under_polygon = 0.5 * n * (R + t) ** 2 * np.sin(np.pi / n)
    assert walls <= 2 * end * H - under_polygon
    assert walls >= 0.95 * (2 * end * H - np.pi / 2 * (R + t) ** 2)


def test_compiled_sphere_closest_points_equal_their_twin():
    """The compiled sphere-polyhedron search equals its Python twin (the same flags, the
    same numbers to round-off) on points inside, on and around a cube and a 30-vertex hull,
    beyond the reach and within it."""
    kernels = pytest.importorskip("parsolve._kernels.polyhedra")
    rng = np.random.default_rng(7)
    hs = [hull(cube(1.0)), hull(rng.normal(size=(30, 3)))]
    keys = np.array([shapes.LIBRARY.add(shapes.POLYHEDRON, h.params()) for h in hs])
    t = polyhedra.PACK.index(keys[rng.integers(0, 2, 4000)], polyhedron.hull)
    c = rng.normal(size=(4000, 3)) * 1.5
    c[:500] = np.round(c[:500])                             # on the cube's faces and edges
    reach = rng.uniform(0.0, 1.5, 4000)
    a = polyhedra.PACK.arrays
    out = []
    for f in (polyhedra.sphere_closest, kernels.sphere_closest):
        y, d, n = np.zeros((4000, 3)), np.zeros(4000), np.zeros((4000, 3))
        f(a["V"], a["vptr"], a["N"], a["D"], a["fptr"], a["FV"], a["fvptr"], t, c, reach,
          y, d, n)
        out.append((y, d, n))
    (y0, d0, n0), (y1, d1, n1) = out
    near = np.isfinite(d0)
    assert np.array_equal(near, np.isfinite(d1)) and 500 < near.sum() < 3900
    for u, v in ((y0, y1), (d0, d1), (n0, n1)):
        assert np.allclose(u[near], v[near], rtol=0, atol=1e-12)
    assert (d0[near] < 0).any() and (d0[near] > 0).any()     # inside and outside


def test_the_principal_frame_is_plain_arithmetic_whatever_blas_threads():
    """symmetric_eigen agrees with LAPACK to round-off, and a skew block's principal frame
    has the same bits with 1 and 4 OpenBLAS threads (LAPACK's eigh did not: a plain run and
    an mpirun run then followed different trajectories)."""
    import os
    import subprocess
    import sys

    from parsolve.shapes.polyhedron import symmetric_eigen

    rng = np.random.default_rng(4)
    for _ in range(20):
        A = rng.normal(size=(3, 3))
        J = A @ A.T
        w, Q = symmetric_eigen(J)
        np.testing.assert_allclose(w, np.linalg.eigh(J)[0], rtol=0, atol=1e-14 * w.max())
        np.testing.assert_allclose(Q @ np.diag(w) @ Q.T, J, rtol=0, atol=1e-14 * w.max())
        np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-15)
    code = ("import numpy as np; from parsolve.shapes.polyhedron import make; "
            "v = np.random.default_rng(0).normal(size=(12, 3)) * [1.0, 0.6, 0.3]; "
            "out = make('block', v); print(out[2].tobytes().hex(), out[4].tobytes().hex())")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS=t)).stdout
            for t in ("1", "4")}
    assert len(runs) == 1 and len(next(iter(runs))) > 100, runs
