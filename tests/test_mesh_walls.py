"""Mesh obstacles and turning obstacles in runs (issue 35): a body resting on any feature of a
triangulated floor carries its weight on one contact (a sphere) or its corners (a block); a
sphere rolls across thousands of triangles without a bump; thrown spheres stay in a closed
box mesh; a drum and its lifter turning about an axis carry a sphere at v = omega x r; a
tilting floor lets a block slide where tan(angle) passes mu; the energy balance closes with
turning walls; a restart continues a turning drum bit for bit; ParaView draws the moving
obstacles at their pose; a mesh is part of the model's fingerprint."""
import math

import numpy as np
import pytest

import parsolve as ps
from parsolve.dynamics.rotation import axis_angle_to_quat
from parsolve.errors import InputError
from parsolve.io import meshfile
from parsolve.run import Simulation
from parsolve.shapes.mesh import (TriangleMesh, box_surface, cylinder_surface, grid_surface,
                                  place)

G = 9.81


def sim_of(m, h=1e-3, tol=1e-12, **options):
    return Simulation(m, step=h, solver=ps.GaussSeidel(tol=tol, max_iter=500), progress=0,
                      quiet=True, verify_every=0, **options)


def floor_model(mu=0.5, n=4, size=1.0):
    m = ps.Model()
    m.surface("a", "a", friction=mu)
    m.mesh(TriangleMesh(*grid_surface((0, 0), (size, size), n)), "a", name="floor")
    return m


# -- resting ---------------------------------------------------------------------------------
def test_a_sphere_on_any_feature_and_a_block_on_a_triangulated_floor_carry_their_weight():
    """Spheres on a face, on an edge between two coplanar triangles, on the diagonal inside a
    square and on a vertex inside the flat patch: one contact each, its normal straight up,
    carrying the weight exactly (R_N = m g h); a brick across four triangles: four corner
    contacts carrying its weight; a polyhedron the same; nothing moves."""
    m = floor_model(n=4)
    at = [(0.3, 0.4), (0.25, 0.6), (0.6, 0.6 + 1e-9), (0.5, 0.5), (0.75, 0.25)]
    for x, y in at:
        m.sphere((x, y, 0.05), 0.05, "a", density=1000)
    m.box((0.5, 0.25, 0.02), (0.1, 0.07, 0.02), "a", density=800,
          orientation=((0, 0, 1), 0.3))
    cube = np.array([(sx, sy, sz) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * 0.04
    m.polyhedron(cube + (0.25, 0.75, 0.04), "a", density=500)
    h = 1e-3
    sim = sim_of(m, h)
    for _ in range(20):
        sim.step()
    c, o = sim.contacts, sim.owned
    weight = o.mass * G * h
    for body in range(len(at)):
        rows = np.flatnonzero(c.a == body)
        assert len(rows) == 1, body
        assert np.allclose(c.frame[rows[0], 0], (0, 0, 1), atol=1e-15)
        assert c.R[rows[0], 0] == pytest.approx(weight[body], rel=1e-9)
    for body, points in ((len(at), 4), (len(at) + 1, 4)):
        rows = np.flatnonzero(c.a == body)
        assert len(rows) == points, body
        assert c.R[rows, 0].sum() == pytest.approx(weight[body], rel=1e-9)
    assert np.abs(o.v).max() < 1e-12


def test_a_sphere_rolling_across_thousands_of_triangles_keeps_its_energy():
    """A sphere rolling without slip (mu = 0.5) across a floor of 5,000 triangles for 1 s:
    one contact at every step, its velocity and its kinetic energy unchanged (drift below
    1e-9 J): no bump at the triangles' edges."""
    m = floor_model(n=50, size=2.0)
    r, v = 0.03, np.array([1.3, 0.47, 0.0])
    m.sphere((0.1, 0.13, r), r, "a", density=2000, velocity=v,
             angular_velocity=np.cross((0, 0, 1), v) / r)
    sim = sim_of(m)
    e0 = None
    for _ in range(1000):
        row = sim.step()
        assert len(sim.contacts) == 1
        e0 = row["kinetic_energy"] if e0 is None else e0
        assert abs(row["kinetic_energy"] - e0) < 1e-9
    assert np.allclose(sim.owned.v[0], v, rtol=0, atol=1e-12)
    assert sim.owned.x[0, 0] == pytest.approx(0.1 + 1.3, rel=1e-9)


def test_spheres_thrown_in_a_turned_box_mesh_stay_inside():
    """10^4 spheres thrown at random (up to 2 m/s, under gravity) in a closed box mesh turned
    by 30 degrees and moved (the placement of a file): after 40 steps every one is inside,
    none deeper in a wall than the step's travel allows (faces, edges and corners alike)."""
    lo, hi = np.zeros(3), np.array([1.0, 0.8, 0.6])
    q = axis_angle_to_quat((1, 1, 1), math.pi / 6)
    shift = np.array([0.3, -0.2, 0.1])
    V, T = box_surface(lo, hi, 4)
    m = ps.Model()
    m.surface("a", "a", friction=0.2, restitution=0.5)
    m.mesh(TriangleMesh(place("box", V, rotation=q, translation=shift), T, inside=True), "a",
           name="box")
    rng = np.random.default_rng(35)
    n, r = 10_000, 0.008
    local = rng.uniform(lo + r, hi - r, (n, 3))
    from parsolve.dynamics.rotation import quat_to_matrix

    R = quat_to_matrix(q[None])[0]
    v = rng.normal(size=(n, 3))
    v *= 2.0 * rng.uniform(0, 1, n)[:, None] / np.linalg.norm(v, axis=1)[:, None]
    m.spheres(local @ R.T + shift, r, "a", density=1000, velocities=v)
    sim = Simulation(m, step=1e-3, solver=ps.GaussSeidel(tol=1e-6, max_iter=50), progress=0,
                     quiet=True, verify_every=0, guards="off")
    walls = 0
    for _ in range(40):
        sim.step()
        walls += int((sim.contacts.b < 0).sum())
    back = (sim.owned.x - shift) @ R                       # in the box's frame
    depth = np.minimum(back - lo, hi - back).min(axis=1) - r
    assert depth.min() > -2.0 * 1e-3 * 2.5                   # within a step's travel
    assert ((back > lo) & (back < hi)).all()
    assert walls > 1000


# -- turning obstacles -------------------------------------------------------------------------
def drum_model(w, mu=0.9, sides=64, R=0.5, L=0.3, margin=None):
    """A drum of radius R about the x axis (a closed cylinder mesh, normals inwards) with a
    lifter bar (a fixed box) on its wall, both turning at w."""
    V, T = cylinder_surface(R, L, sides, 1)
    V = place("drum", V, rotation=axis_angle_to_quat((0, 1, 0), math.pi / 2),
              translation=(-L / 2, 0, 0))
    m = ps.Model(contact_margin=margin)
    m.surface("a", "a", friction=mu)
    m.mesh(TriangleMesh(V, T, inside=True), "a", name="drum")
    a = -0.35
    m.box((0, 0.97 * R * math.sin(a), -0.97 * R * math.cos(a)), (L / 2, 0.01, 0.04), "a",
          fixed=True, name="lifter", orientation=((1, 0, 0), a))
    for name in ("drum", "lifter"):
        m.move(name, angle=lambda t: w * t, rate=lambda t: w, axis=(1, 0, 0), centre=(0, 0, 0))
    return m


def test_a_turning_drum_and_its_lifter_carry_a_resting_sphere_at_omega_cross_r():
    """A sphere dropped in a drum turning at 2 rad/s about x settles in the corner of the wall
    and the lifter, and is then carried round with them: at every step where both contacts
    are closed its velocity is omega x (x - c) at the half step's position and its angular
    velocity omega, to round-off (both stick); the energy balance closes with the turning
    walls' work. (The scheme carries a point round a circle outwards by h^2 w^2 r / 2 a step,
    a micrometre here: the lifter's contact opens by more than the margin now and then, and
    the step that closes it again approaches at gap / h.)"""
    w = 2.0
    m = drum_model(w)
    m.sphere((0, -0.05, -0.44), 0.04, "a", density=1000)
    h = 1e-3
    sim = sim_of(m, h, tol=1e-13)
    carried = 0
    omega = np.array([w, 0.0, 0.0])
    for k in range(500):
        x0, v0 = sim.owned.x[0].copy(), sim.owned.v[0].copy()
        row = sim.step()
        assert abs(row["energy_error"]) < 1e-12
        c = sim.contacts
        if k >= 200 and len(c) == 2 and (c.gap <= 0).all():
            half = x0 + 0.5 * h * v0
            assert np.abs(sim.owned.v[0] - np.cross(omega, half)).max() < 1e-14
            assert np.abs(sim.owned.w[0] - omega).max() < 1e-13
            carried += 1
    assert carried > 270
    assert sim.owned.x[0, 1] > 0.3                          # lifted up the far side
    assert row["work_loads"] > 0.5                           # the drum's work on it


def test_a_block_on_a_turntable_is_carried_round_at_omega_cross_r():
    """A brick on the bottom of a drum turning about its vertical axis (a turntable, mu =
    0.8, omega^2 r well below mu g; the cap a fan of thin triangles) is carried: four corner
    contacts, v = omega x (x - c) at the half step and w = omega to round-off at every
    step, its radius growing as the scheme's."""
    w, h = 3.0, 1e-3
    m = ps.Model()
    m.surface("a", "a", friction=0.8)
    m.mesh(TriangleMesh(*cylinder_surface(0.5, 0.3, 48, 1), inside=True), "a", name="drum")
    m.move("drum", angle=lambda t: w * t, rate=lambda t: w, centre=(0, 0, 0))
    x = np.array([0.3, 0.1, 0.02])
    m.box(x, (0.04, 0.03, 0.02), "a", density=1000, velocity=np.cross((0, 0, w), x),
          angular_velocity=(0, 0, w))
    sim = sim_of(m, h, tol=1e-13)
    for k in range(400):
        x0, v0 = sim.owned.x[0].copy(), sim.owned.v[0].copy()
        sim.step()
        assert len(sim.contacts) == 4
        half = x0 + 0.5 * h * v0
        assert np.abs(sim.owned.v[0] - np.cross((0, 0, w), half)).max() < 1e-13
        assert np.abs(sim.owned.w[0] - (0, 0, w)).max() < 1e-12
    # the half steps' positions follow x' = (1 + h W) x, W = [omega]x: the radius grows by
    # (1 + (h w)^2)^(1/2) a step (and (1 + (h w / 2)^2)^(1/2) at each end), the scheme's
    # drift outwards
    assert np.linalg.norm(sim.owned.x[0, :2]) == pytest.approx(
        np.hypot(0.3, 0.1) * (1 + (h * w / 2) ** 2) * (1 + (h * w) ** 2) ** 199.5, rel=1e-9)


def test_a_block_on_a_tilting_floor_slides_once_the_slope_passes_its_friction_angle():
    """A half-space turning about the x axis at 0.2 rad/s (a tilting box's floor: its normal
    turns): a block on it sticks while tan(angle) < mu = 0.3 and slides downhill beyond."""
    rate, mu = 0.2, 0.3
    m = ps.Model()
    m.surface("a", "a", friction=mu)
    m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
    m.move("floor", angle=lambda t: rate * t, rate=lambda t: rate, axis=(1, 0, 0),
           centre=(0, 0, 0))
    x = np.array([0.0, 0.0, 0.05])
    m.box(x, (0.05, 0.05, 0.05), "a", density=1000, velocity=np.cross((rate, 0, 0), x),
          angular_velocity=(rate, 0, 0))                   # moving with the floor
    h = 5e-3
    sim = sim_of(m, h)
    onset = None
    while sim.time < 2.0:
        sim.step()
        angle = rate * sim.time
        n = np.array([0.0, -math.sin(angle), math.cos(angle)])
        slip = sim.owned.v[0] - np.cross((rate, 0, 0), sim.owned.x[0])
        down = slip - (slip @ n) * n
        if onset is None and np.linalg.norm(down) > 1e-3:
            onset = angle
    assert onset == pytest.approx(math.atan(mu), abs=0.02)


def test_turning_walls_energy_balance_closes_with_grains_tumbling():
    """Sixty spheres (e = 0.3, mu = 0.5) tumbling in the turning drum with its lifter for
    0.3 s: E(0) + the walls' and gravity's work = E(t) + dissipated, to 1e-9 of E(0)."""
    m = drum_model(3.0, mu=0.5)
    m.surface("a", "a", friction=0.5, restitution=0.3)
    rng = np.random.default_rng(5)
    x = np.column_stack([rng.uniform(-0.1, 0.1, 60), rng.uniform(-0.25, 0.25, 60),
                         rng.uniform(-0.3, 0.1, 60)])
    keep = np.ones(60, bool)
    for i in range(60):                         # no two overlap
        keep[i] = np.linalg.norm(x[:i][keep[:i]] - x[i], axis=1).min(initial=1) > 0.06
    m.spheres(x[keep], 0.025, "a", density=1000)
    sim = sim_of(m, tol=1e-10)
    rows = [sim.step() for _ in range(300)]
    e0 = rows[0]["kinetic_energy"] + rows[0]["potential_energy"] - rows[0]["work_loads"] \
        + rows[0]["dissipated"]
    assert max(abs(r["energy_error"]) for r in rows) < 1e-9 * abs(e0)
    assert rows[-1]["dissipated"] > 0.01 and abs(rows[-1]["work_loads"]) > 0.01


TURNING = """
import math
import numpy as np
import parsolve as ps
from parsolve.shapes.mesh import TriangleMesh, cylinder_surface
V, T = cylinder_surface(0.4, 0.3, 40, 2)
m = ps.Model(gravity=(0, -9.81, 0))
m.surface("a", "a", friction=0.5, restitution=0.2)
m.mesh(TriangleMesh(V, T, inside=True), "a", name="drum")
m.move("drum", angle=([0.0, 0.02, 1.0], [0.0, 0.02, 2.0]), axis=(0, 0, 1),
       centre=(0, 0, 0))
k = np.arange(24)
m.spheres(np.stack([0.05 * (k % 6) - 0.12, -0.3 + 0.05 * (k // 6), 0.1 + 0.002 * k], 1),
          0.022, "a", density=1000)
m.run(0.06, 1e-3, output="res.h5", frames=0.03, progress=0,
      solver=ps.GaussSeidel(tol=1e-12, max_iter=300))
"""


def test_a_turning_drum_restarts_on_another_rank_count_bit_for_bit(tmp_path):
    """A drum turned by an angle spline (its rate the spline's slopes): a run checkpointed at
    1 rank and continued at 2 ends where the whole run ends, bit for bit; the drum is drawn
    at its pose in each frame."""
    from test_restart import assert_restart_continues

    from parsolve.io.hdf5 import h5py_module

    whole = assert_restart_continues(tmp_path, TURNING)
    with h5py_module().File(whole, "r") as f:
        first = f["frames/000000/obstacles/meshes/vertices"][()]
        last = f["frames/000002/obstacles/meshes/vertices"][()]
        q = f["frames/000002/obstacles/q"][()]
        model = f["model/obstacles/meshes/vertices"][()]
    assert np.array_equal(first, model)
    angle = 0.02 + (0.06 - 0.02) * (2.0 - 0.02) / (1.0 - 0.02)
    assert q[0] == pytest.approx(axis_angle_to_quat((0, 0, 1), angle), abs=1e-15)
    c, s = math.cos(angle), math.sin(angle)
    np.testing.assert_allclose(last[:, :2], model[:, :2] @ np.array([[c, s], [-s, c]]),
                               atol=1e-15)


def test_paraview_draws_a_moving_mesh_at_its_pose_and_the_still_ones_in_place(tmp_path):
    """The XDMF's obstacles at each time, read by VTK's reader: the turning lifter (a box)
    and drum (a mesh) at their pose, the still floor mesh where it is."""
    vtk = pytest.importorskip("vtk", reason="make setup installs the vtk wheel")
    m = drum_model(2.0)
    m.mesh(TriangleMesh(*grid_surface((-1, -1), (1, 1), 2)), "a", name="ground")
    m.sphere((0, 0, -0.4), 0.04, "a", density=1000)
    out = tmp_path / "drum.h5"
    sim_of(m, 1e-3, output=str(out), frames=0.1).run(0.2)
    found = {}
    for t in (0.0, 0.1, 0.2):
        reader = vtk.vtkXdmfReader()
        reader.SetFileName(str(tmp_path / "drum.xdmf"))
        reader.UpdateInformation()
        reader.UpdateTimeStep(t)
        it = reader.GetOutputDataObject(0).NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            d = it.GetCurrentDataObject()
            if it.GetCurrentMetaData().Get(vtk.vtkCompositeDataSet.NAME()) not in (
                    "bodies", "contacts"):
                found.setdefault(d.GetNumberOfCells(), []).append(np.array(d.GetBounds()))
            it.GoToNextItem()
    lifter, drum, ground = found[1], found[256], found[8]
    assert len(lifter) == len(drum) == len(ground) == 3
    for k, t in enumerate((0.0, 0.1, 0.2)):
        a = -0.35 + 2.0 * t                                   # the lifter's angle
        centre = np.array([0, 0.97 * 0.5 * math.sin(a), -0.97 * 0.5 * math.cos(a)])
        mid = 0.5 * (lifter[k][::2] + lifter[k][1::2])
        np.testing.assert_allclose(mid, centre, atol=1e-6)
        np.testing.assert_allclose(ground[k], (-1, 1, -1, 1, 0, 0), atol=1e-12)
        assert drum[k][0] == pytest.approx(-0.15) and drum[k][1] == pytest.approx(0.15)


# -- the model's commands ------------------------------------------------------------------------
def test_a_mesh_from_a_file_is_placed_and_its_geometry_enters_the_fingerprint(tmp_path):
    """model.mesh reads the file in its units and placement; a model with a mesh that differs
    in one vertex by 1e-12 m has another fingerprint (its checkpoints are refused)."""
    V, T = grid_surface((0, 0), (1000, 1000), 3)                       # millimetres
    meshfile.write_stl(tmp_path / "floor.stl", V, T)

    def model(dz=0.0):
        m = ps.Model()
        m.surface("a", "a", friction=0.5)
        m.mesh(tmp_path / "floor.stl", "a", units="mm", translation=(0, 0, dz))
        m.sphere((0.5, 0.5, 0.1 + dz), 0.1, "a", density=1000)
        return m

    m = model()
    assert m.obstacles.names == ["floor.stl"]
    sim = sim_of(m)
    for _ in range(5):
        sim.step()
    assert len(sim.contacts) == 1 and sim.contacts.gap[0] == pytest.approx(0.0, abs=1e-12)
    assert model().fingerprint() == m.fingerprint() != model(1e-12).fingerprint()


def test_a_convex_block_from_a_file_is_the_hull_of_its_vertices(tmp_path):
    """model.polyhedron_from_file: the hull of an OBJ's vertices (a cube with a dent and a
    point inside: neither is a vertex of the hull), in its units and placement."""
    V, T = box_surface((0, 0, 0), (20, 20, 20), 2)                     # centimetres
    V = np.vstack([V, [(10, 10, 10)]])
    meshfile.write_obj(tmp_path / "cube.obj", V, T)
    m = ps.Model()
    m.surface("a", "a", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "a")
    b = m.polyhedron_from_file(tmp_path / "cube.obj", "a", units="cm", translation=(1, 2, 0),
                               density=1000)
    o = m.build()
    assert o.mass[b] == pytest.approx(8.0, rel=1e-12)
    np.testing.assert_allclose(o.x[b], (1.1, 2.1, 0.1), atol=1e-15)


@pytest.mark.parametrize("command, match", [
    (lambda m, mesh: m.mesh(mesh, "a", units="mm"), "placed already"),
    (lambda m, mesh: m.mesh(mesh, "a", name="floor"), "an obstacle of that name exists"),
    (lambda m, mesh: m.move("floor", angle=lambda t: t), "needs its rate"),
    (lambda m, mesh: m.move("floor", rate=lambda t: 1.0), "give its angle"),
    (lambda m, mesh: m.move("floor"), "give a displacement, an angle or both"),
    (lambda m, mesh: m.move("floor", angle=([0, 1], [0, 1]), axis=(0, 0, 0)), "zero vector"),
    (lambda m, mesh: m.move("floor", angle=lambda t: math.log(-1.0 + t), rate=lambda t: 1.0),
     "angle: the callable raised"),
])
def test_bad_meshes_and_turns_are_named(command, match):
    m = ps.Model()
    m.surface("a", "a", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "a", name="floor")
    m.sphere((0, 0, 0.2), 0.05, "a", density=1000)
    with pytest.raises(InputError, match=match):
        command(m, TriangleMesh(*grid_surface((0, 0), (1, 1), 2)))
        sim_of(m).step()
