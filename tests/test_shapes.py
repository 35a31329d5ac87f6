"""Shapes and fixed bodies of any shape: fixed boxes as obstacles (a container of five boxes,
a sphere sliding then rolling on a fixed slab, a box resting on a fixed box), the shape
library and the narrow phase's pair registry, and bad input named."""
import numpy as np
import pytest

import parsolve as ps
from parsolve import shapes
from parsolve.contact import narrow
from parsolve.errors import InputError
from tests.scenes import G, run

R = 0.02                    # the spheres' radius in the container
INNER = (0.162, 0.082)      # the container's inner half widths in x and y: 8 x 4 diameters


def container(seed=1, speed=0.3):
    """32 spheres thrown sideways in a container of five fixed boxes (a floor slab and four
    walls, thick and overlapping at the corners), open at the top (height 0.3). Its floor
    holds 8 x 4 of them side by side with 4 mm to spare, so they end jammed in one layer (on
    a wider floor, or on top of others, a sphere that rolls goes on rolling: there is no
    rolling resistance)."""
    m = ps.Model(gravity=(0.0, 0.0, -G))
    m.surface("g", "g", friction=0.4, restitution=0.0)
    m.surface("g", "wall", friction=0.3, restitution=0.0)
    ax, ay = INNER
    m.box((0, 0, -0.05), (ax + 0.05, ay + 0.05, 0.05), "wall", fixed=True, name="floor")
    for s in (-1, 1):
        m.box((s * (ax + 0.02), 0, 0.15), (0.02, ay + 0.04, 0.15), "wall", fixed=True,
              name=f"wall x{s:+d}")
        m.box((0, s * (ay + 0.02), 0.15), (ax + 0.04, 0.02, 0.15), "wall", fixed=True,
              name=f"wall y{s:+d}")
    k = np.arange(32)
    x = np.stack([-0.1405 + 0.0401 * (k % 8), -0.0602 + 0.0401 * (k // 8),
                  np.full(32, R + 0.005)], axis=1)
    rng = np.random.default_rng(seed)
    v = rng.normal(0, speed, (32, 3)) * (1, 0, 0)        # thrown along the rows, 5 mm up
    m.spheres(x, R, "g", density=1000, velocities=v)
    return m


def energy(sim):
    return np.array([r["kinetic_energy"] + r["potential_energy"] for r in sim.history])


def test_spheres_thrown_into_a_container_of_fixed_boxes_come_to_rest_inside_it():
    sim = run(container(), 1.0, 1e-3, tol=1e-9, max_iter=300)
    b = sim.bodies
    ax, ay = INNER
    # none escapes: every centre a radius inside the walls and above the floor (to the
    # scheme's overlap: Moreau-Jean closes gaps at the velocity level, a step's impact
    # leaves an overlap of at most the impact speed times the step)
    tol = 0.05 * R
    assert np.all(np.abs(b.x[:, 0]) <= ax - R + tol)
    assert np.all(np.abs(b.x[:, 1]) <= ay - R + tol)
    assert np.all(np.abs(b.x[:, 2] - R) <= tol)           # one layer, on the floor
    c = sim.contacts
    assert c.gap.min() > -tol                              # no deep overlap
    walls = set(c.obstacle[c.obstacle >= 0].tolist())
    assert 0 in walls and len(walls) > 1 and np.any(c.b >= 0)   # floor, a wall, neighbours
    E = energy(sim)
    assert np.all(np.diff(E) <= 1e-8 * E[0])              # never rises (to the tolerance)
    assert b.kinetic_energy().sum() < 1e-6 * E[0]         # at rest
    assert np.linalg.norm(b.v, axis=1).max() < 1e-3
    counts = {r["contacts"] for r in sim.history[-200:]}
    assert len(counts) == 1                                # the contacts are settled


def slab_model(mu, v0, angle=0.0):
    """A sphere of radius r resting on a fixed slab turned by `angle` about z, launched along
    the slab's long axis at v0 without spin."""
    m = ps.Model(gravity=(0.0, 0.0, -G))
    m.surface("ball", "slab", friction=mu, restitution=0.0)
    d = np.array([np.cos(angle), np.sin(angle), 0.0])
    m.box((0, 0, -0.1), (5.0, 0.5, 0.1), "slab", fixed=True, orientation=((0, 0, 1), angle))
    m.sphere(-2.0 * d + (0, 0, 0.05), 0.05, "ball", density=1000, velocity=v0 * d)
    return m, d


@pytest.mark.parametrize("angle", [0.0, 0.5])
def test_a_sphere_slides_on_a_fixed_slab_with_deceleration_mu_g_then_rolls_at_five_sevenths(
        angle):
    mu, v0, h, r = 0.3, 2.0, 1e-3, 0.05
    m, d = slab_model(mu, v0, angle)
    sim = ps.Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-12, max_iter=200), progress=0,
                        quiet=True)
    t_roll = 2 * v0 / (7 * mu * G)                       # v0 - mu g t = 5/2 mu g t
    speeds, spins = [], []
    for _ in range(int(1.5 * t_roll / h)):
        sim.step()
        speeds.append(sim.bodies.v[0] @ d)
        spins.append(np.linalg.norm(sim.bodies.w[0]))
    speeds, spins = np.array(speeds), np.array(spins)
    t = h * np.arange(1, len(speeds) + 1)
    slide = t < t_roll - 2 * h
    np.testing.assert_allclose(speeds[slide], v0 - mu * G * t[slide], rtol=0, atol=1e-9)
    np.testing.assert_allclose(spins[slide], 2.5 * mu * G * t[slide] / r, rtol=1e-9)
    roll = t > t_roll + 2 * h
    np.testing.assert_allclose(speeds[roll], 5.0 / 7.0 * v0, rtol=1e-9)
    np.testing.assert_allclose(spins[roll] * r, 5.0 / 7.0 * v0, rtol=1e-9)
    assert abs(sim.bodies.x[0, 2] - r) < 1e-9             # on the slab all along


def test_a_box_rests_on_a_fixed_box_on_its_four_corners_carrying_its_weight():
    m = ps.Model(gravity=(0.0, 0.0, -G))
    m.surface("b", "base", friction=0.5)
    m.box((0.1, 0.0, -0.2), (0.3, 0.3, 0.2), "base", fixed=True, name="base",
          orientation=((1, 0, 0), 0.0))
    m.box((0.05, 0.02, 0.04), (0.08, 0.06, 0.04), "b", density=700)
    sim = run(m, 0.3, 1e-3, tol=1e-12)
    b, c = sim.bodies, sim.contacts
    np.testing.assert_allclose(b.x[0], (0.05, 0.02, 0.04), atol=1e-9)
    assert np.abs(b.v).max() < 1e-9 and np.abs(b.w).max() < 1e-9
    assert len(c) == 4 and np.all(c.obstacle == 0) and np.all(c.b == -1)
    np.testing.assert_allclose(np.sort(c.point[:, :2], axis=0),
                               [[-0.03, -0.04], [-0.03, -0.04], [0.13, 0.08], [0.13, 0.08]],
                               atol=1e-9)
    assert abs(c.R[:, 0].sum() - b.mass[0] * G * 1e-3) < 1e-9 * b.mass[0] * G * 1e-3


def test_a_box_tumbling_onto_a_huge_fixed_slab_moves_as_onto_a_half_space():
    """The fixed box's face is the plane: the same trajectory to round-off (box-box clipping
    against the slab's top face gives the corners the box-plane function gives)."""
    from parsolve.dynamics.rotation import axis_angle

    def model(fixed):
        m = ps.Model()
        m.surface("b", "f", friction=0.5)
        if fixed:
            m.box((0, 0, -5), (50, 50, 5), "f", fixed=True)
        else:
            m.half_space((0, 0, 0), (0, 0, 1), "f")
        m.box((0.0, 0, 0.2), (0.05, 0.04, 0.03), "b", density=1000,
              orientation=axis_angle((1, 0.5, 0.2), 0.7), velocity=(0.5, 0, 0),
              angular_velocity=(0, 3, 1))
        return m

    plane, slab = (run(model(fixed), 0.6, 1e-3, tol=1e-10).bodies for fixed in (False, True))
    for f in ("x", "q", "v", "w"):
        np.testing.assert_allclose(getattr(slab, f), getattr(plane, f), rtol=0, atol=1e-12)
    assert np.abs(plane.v).max() < 1e-9 and np.abs(plane.w).max() < 1e-9       # at rest
    from parsolve.dynamics.rotation import quat_to_matrix

    z = np.sort(shapes.box.cell_points(plane, [0], quat_to_matrix(plane.q))[0, :, 2])
    assert np.abs(z[:4]).max() < 1e-4                               # on a face, on the slab


def test_a_sphere_slides_off_a_fixed_sphere_where_the_normal_force_vanishes():
    """Frictionless, from the top at v0: the centre moves on a circle of radius L = R + r and
    leaves it when g cos(theta) = v^2 / L, v^2 = v0^2 + 2 g L (1 - cos(theta)): at
    cos(theta) = 2/3 + v0^2 / (3 g L)."""
    R_dome, r, v0, h = 0.5, 0.05, 0.5, 2e-4
    # on a curved path, closing the gap at the velocity level lets the centre drift outwards
    # by about v^2 h^2 / (2 L) a step: a margin above that keeps the contact active
    m = ps.Model(gravity=(0.0, 0.0, -G), contact_margin=1e-6)
    m.surface("ball", "dome", friction=0.0)
    assert m.sphere((0, 0, 0), R_dome, "dome", fixed=True, name="dome") == "dome"
    m.sphere((0, 0, R_dome + r), r, "ball", density=1000, velocity=(v0, 0, 0))
    sim = ps.Simulation(m, step=h, solver=ps.GaussSeidel(tol=1e-12, max_iter=100),
                        progress=0, quiet=True)
    L = R_dome + r
    while True:
        sim.step()
        x, v, c = sim.bodies.x[0], sim.bodies.v[0], sim.contacts
        if len(c) == 0 or c.R[0, 0] <= 0:                         # no longer pressed
            break
        assert abs(np.linalg.norm(x) - L) < 1e-6                  # on the dome until then
    theta = np.arctan2(x[0], x[2])
    expected = np.arccos(2.0 / 3.0 + v0 ** 2 / (3 * G * L))
    assert abs(theta - expected) < 3 * h * np.linalg.norm(v) / L  # within 3 steps' travel


def test_a_box_rests_on_top_of_a_fixed_sphere():
    m = ps.Model(gravity=(0.0, 0.0, -G))
    m.surface("b", "ball", friction=0.5)
    m.sphere((0, 0, -1.0), 1.0, "ball", fixed=True)
    m.box((0, 0, 0.05), (0.2, 0.15, 0.05), "b", density=700)
    sim = run(m, 0.2, 1e-3, tol=1e-12)
    b, c = sim.bodies, sim.contacts
    np.testing.assert_allclose(b.x[0], (0, 0, 0.05), atol=1e-9)
    assert len(c) == 1 and c.obstacle[0] == 0 and c.b[0] == -1 and c.k1[0] == 0
    np.testing.assert_allclose(c.frame[0, 0], (0, 0, 1), atol=1e-12)   # from the sphere
    assert abs(c.R[0, 0] - b.mass[0] * G * 1e-3) < 1e-9 * b.mass[0] * G * 1e-3


def test_a_fixed_box_is_no_body_and_does_not_size_the_cells():
    m = ps.Model()
    m.surface("g", "wall", friction=0.3)
    m.box((0, 0, -5), (50.0, 50.0, 5.0), "wall", fixed=True)
    m.sphere((0, 0, 0.01), 0.01, "g", density=1000)
    sim = run(m, 0.01, 1e-3)
    assert sim.n_bodies == 1
    assert sim.cell < 0.021                               # a sphere's diameter, not the wall's
    assert m.obstacles.names == ["box 0"] and m.obstacles.shape[0] == shapes.BOX


def test_the_library_keys_templates_by_content_and_the_fingerprint_sees_fixed_boxes():
    lib = shapes.ShapeLibrary()
    a = lib.add(shapes.BOX, (1, 2, 3))
    assert a == lib.add(shapes.BOX, (1.0, 2.0, 3.0)) == shapes.LIBRARY.add(shapes.BOX, (1, 2, 3))
    b = lib.add(shapes.BOX, (1, 2, 4))
    assert len(lib) == 2 and a != b and min(a, b) >= 0
    np.testing.assert_array_equal(lib.params(shapes.BOX, [b, a, b]), [[1, 2, 4], [1, 2, 3],
                                                                      [1, 2, 4]])
    with pytest.raises(InputError, match="no box template with key 7"):
        lib.params(shapes.BOX, [a, 7])

    def model(half):
        m = ps.Model()
        m.surface("g", "w", friction=0.3)
        m.half_space((0, 0, 0), (0, 0, 1), "w")
        m.sphere((0, 0, 1), 0.1, "g", density=1)
        if half is not None:
            m.box((0, 0, -1), half, "w", fixed=True)
        return m.fingerprint()

    assert model(None) != model((1, 1, 1)) != model((1, 1, 2))
    assert model((1, 1, 1)) == model((1, 1, 1))


def test_box_bodies_carry_a_template_key_not_their_half_extents():
    m = ps.Model()
    m.surface("b", "b", friction=0.3)
    for k in range(3):
        m.box((k, 0, 0), (0.1, 0.2, 0.3) if k < 2 else (0.3, 0.2, 0.1), "b", density=1)
    m.sphere((5, 0, 0), 0.1, "b", density=1)
    b = m.build()
    assert "half" not in b.FIELDS and b.template[0] == b.template[1] != b.template[2]
    assert b.template[3] == shapes.NONE
    np.testing.assert_array_equal(shapes.box.half_extents(b, [2, 0]),
                                  [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])


@pytest.mark.parametrize("kwargs, message", [
    ({"half_extents": (0.1, 0.0, 0.1)}, r"fixed box 'w': half_extents\[1\] must be .* got 0"),
    ({"half_extents": (0.1, -1, 0.1)}, r"half_extents\[1\] must be .* got -1"),
    ({"half_extents": (0.1, 0.1)}, r"fixed box 'w': half_extents must be 3 numbers"),
    ({"center": (0, np.nan, 0)}, r"fixed box 'w': center: not a finite number"),
    ({"orientation": (0, 0, 0, 0)}, r"fixed box 'w': orientation.*zero"),
    ({"density": 1000}, r"fixed box 'w': a fixed box takes no density"),
    ({"mass": 1.0}, r"takes no mass"),
    ({"velocity": (1, 0, 0)}, r"takes no velocity"),
])
def test_bad_fixed_boxes_are_named(kwargs, message):
    m = ps.Model()
    m.surface("g", "w", friction=0.3)
    args = dict(center=(0, 0, 0), half_extents=(1, 1, 1), material="w", fixed=True, name="w")
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        m.box(**args)


@pytest.mark.parametrize("kwargs, message", [
    ({"radius": 0.0}, r"fixed sphere 's': radius: must be > 0, got 0"),
    ({"center": (np.inf, 0, 0)}, r"fixed sphere 's': center: not a finite number"),
    ({"inertia": 1.0}, r"fixed sphere 's': a fixed sphere takes no inertia"),
    ({"angular_velocity": (0, 0, 1)}, r"takes no angular_velocity"),
])
def test_bad_fixed_spheres_are_named(kwargs, message):
    m = ps.Model()
    m.surface("g", "w", friction=0.3)
    args = dict(center=(0, 0, 0), radius=1.0, material="w", fixed=True, name="s")
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        m.sphere(**args)


def test_a_fixed_box_of_an_undefined_material_pair_is_named():
    m = ps.Model()
    m.surface("g", "g", friction=0.3)
    m.box((0, 0, -1), (1, 1, 1), "steel", fixed=True, name="base")
    m.sphere((0, 0, 0.1), 0.1, "g", density=1)
    with pytest.raises(InputError, match="base"):
        run(m, 0.001, 1e-3)


def test_a_pair_of_kinds_without_a_narrow_phase_is_named():
    with pytest.raises(InputError, match="no narrow phase for plane-plane"):
        narrow.lookup(shapes.PLANE, shapes.PLANE)
    f, swapped = narrow.lookup(shapes.BOX, shapes.SPHERE)
    assert f is narrow.sphere_box and swapped


def test_fixed_boxes_are_drawn_as_hexahedra_in_the_xdmf_and_the_results(tmp_path):
    vtk = pytest.importorskip("vtk", reason="make setup installs the vtk wheel")
    import h5py

    out = tmp_path / "box.h5"
    run(container(), 0.02, 1e-3, output=str(out), frames=0.01)
    with h5py.File(out) as f:
        o = f["model/obstacles"]
        assert list(o.attrs["names"]) == ["floor", "wall x-1", "wall y-1", "wall x+1",
                                          "wall y+1"]
        np.testing.assert_array_equal(o["shape"][()], [shapes.BOX] * 5)
        np.testing.assert_allclose(o["half"][0], (INNER[0] + 0.05, INNER[1] + 0.05, 0.05))
        v = o["boxes/vertices"][()].reshape(5, 8, 3)
        np.testing.assert_allclose(v[0].min(0), (-INNER[0] - 0.05, -INNER[1] - 0.05, -0.1))
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(out.with_suffix(".xdmf")))
    reader.UpdateInformation()
    names = {reader.GetGridName(i).split()[0] for i in range(reader.GetNumberOfGrids())}
    assert names == {"bodies", "contacts", "obstacles"}
    reader.UpdateTimeStep(0.02)
    it = reader.GetOutputDataObject(0).NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        if it.GetCurrentMetaData().Get(vtk.vtkCompositeDataSet.NAME()).startswith("obstacles"):
            walls = it.GetCurrentDataObject()
        it.GoToNextItem()
    assert walls.GetNumberOfCells() == 5 and walls.GetCellType(0) == vtk.VTK_HEXAHEDRON
    assert walls.GetCellData().GetArray("material").GetNumberOfTuples() == 5
    lo, hi = np.array(walls.GetBounds()[::2]), np.array(walls.GetBounds()[1::2])
    # the floor's extent in x and y, the walls' height
    np.testing.assert_allclose(hi - lo, (2 * INNER[0] + 0.1, 2 * INNER[1] + 0.1, 0.4))
