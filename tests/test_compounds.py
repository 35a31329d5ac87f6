"""Compound bodies in runs (issue 35): a clump's mass and inertia within their stated bound of
the solid of revolution; a gallows-shaped block (a post with an arm) stands where its convex
hull topples and topples where it should; clumps stacked carry each other's weight, never
touching themselves; compounds on a triangle mesh and against boxes and polyhedra; more than
64 points between two bodies keep the 64 deepest; ParaView draws each part; a compound is in
the model's fingerprint."""
import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.run import Simulation
from parsolve.shapes import compound as C
from parsolve.shapes.mesh import TriangleMesh, grid_surface
from test_compound import brick, revolution

G = 9.81


def sim_of(m, h=1e-3, tol=1e-10, **options):
    return Simulation(m, step=h, solver=ps.GaussSeidel(tol=tol, max_iter=1000), progress=0,
                      quiet=True, verify_every=0, **options)


def test_a_clump_of_overlapping_spheres_has_the_mass_and_inertia_of_its_union():
    """Two overlapping spheres (exact through their lens) and a rod of three with a triple
    overlap (within the stated bound): the body's mass and principal moments equal the
    solid of revolution's, integrated apart, within the bound; its centre where the solid's
    is; the body turned so that its axis lies along the given one."""
    rho = 2500.0
    for spheres in ([(0.0, 0.05), (0.06, 0.04)], [(0.0, 0.05), (0.03, 0.04), (0.06, 0.05)]):
        parts = [C.sphere((0, 0, z), r) for z, r in spheres]
        props = C.mass_properties(parts, density=rho)
        m = ps.Model()
        m.surface("a", "a", friction=0.5)
        b = m.compound(parts, "a", density=rho, position=(1, 2, 3))
        o = m.build()
        V, c, Jaxis, Jtrans = revolution(spheres)
        bound_m = rho * props.bound["volume"]
        assert abs(o.mass[b] - rho * V) <= bound_m + 1e-12 * rho * V
        np.testing.assert_allclose(o.x[b], (1, 2, 3 + c), atol=1e-15 + 3 * props.bound["volume"] / V)
        moments = np.sort(o.inertia[b])
        assert abs(moments[0] - rho * Jaxis) <= props.bound["inertia"] + 1e-12 * rho * Jaxis
        assert np.abs(moments[1:] - rho * Jtrans).max() <= props.bound["inertia"] + \
            1e-12 * rho * Jtrans
        assert (props.bound["volume"] == 0) == (len(spheres) == 2)


def gallows(arm):
    """A post 0.1 x 0.1 x 0.5 on the floor with an arm 0.1 thick reaching `arm` beyond it
    at its top (in the x-z plane, 0.1 deep): its parts, and its hull's vertices."""
    post = brick((0, 0, 0), (0.1, 0.1, 0.5))
    beam = brick((0.1, 0, 0.4), (0.1 + arm, 0.1, 0.5))
    return [C.block(post), C.block(beam)], np.vstack([post, beam])


def tilt(sim, q0, body=0):
    """The angle the body turned through since it had orientation q0."""
    from parsolve.dynamics.rotation import quat_to_matrix

    R = quat_to_matrix(sim.owned.q[body:body + 1])[0] @ quat_to_matrix(q0[None])[0].T
    return float(np.arccos(np.clip(0.5 * (np.trace(R) - 1), -1, 1)))


@pytest.mark.parametrize("arm, stands, floor", [(0.2, True, "mesh"), (0.25, False, "plane")])
def test_a_gallows_stands_where_its_hull_topples_and_topples_where_it_should(arm, stands,
                                                                             floor):
    """The gallows' mass centre lies over its post's base with an arm of 0.2 (x = 0.093 of
    0.1) and beyond it with 0.25 (x = 0.108); the convex hull of the same vertices (filled in
    under the arm: x = 0.120 with 0.2) topples in both. On a triangle mesh or a half-space."""
    def model(parts=None, hull=None):
        m = ps.Model()
        m.surface("a", "a", friction=0.8)
        if floor == "mesh":
            m.mesh(TriangleMesh(*grid_surface((-1, -1), (1, 1), 8)), "a", name="floor")
        else:
            m.half_space((0, 0, 0), (0, 0, 1), "a")
        if parts is not None:
            m.compound(parts, "a", density=1000)
        else:
            m.polyhedron(hull, "a", density=1000)
        return m

    parts, vertices = gallows(arm)
    props = C.mass_properties(parts, density=1000)
    assert (props.centre[0] < 0.1) == stands
    for m, up in ((model(parts=parts), stands), (model(hull=vertices), False)):
        sim = sim_of(m, h=2e-3)
        q0 = sim.owned.q[0].copy()
        for _ in range(400):
            sim.step()
        if up:
            assert tilt(sim, q0) < 1e-4 and np.abs(sim.owned.v).max() < 1e-6
        else:
            assert tilt(sim, q0) > 0.3


def test_stacked_clumps_carry_each_others_weight_and_never_touch_themselves():
    """Three clumps of three overlapping spheres stacked crosswise on a floor, at rest after
    0.3 s: the floor's contacts carry the three weights, the middle clump's lower contacts
    two; no contact between two parts of one body (every row's bodies differ); a clump alone
    in free fall has no contact at all."""
    rod = [C.sphere((-0.04, 0, 0), 0.03), C.sphere((0, 0, 0), 0.03), C.sphere((0.04, 0, 0), 0.03)]
    m = ps.Model()
    m.surface("a", "a", friction=0.6)
    m.half_space((0, 0, 0), (0, 0, 1), "a")
    turn = ((0, 0, 1), np.pi / 2)
    ids = m.compounds(rod, [(0, 0, 0.03), (0, 0, 0.09), (0, 0, 0.15)], "a",
                      orientations=[((0, 0, 1), 0.0), turn, ((0, 0, 1), 0.0)], density=1000)
    free = m.compound(rod, "a", density=1000, position=(3, 0, 5))
    h = 1e-3
    sim = sim_of(m, h)
    for _ in range(300):
        sim.step()
        c = sim.contacts
        assert not np.any(c.b == c.a)
        assert not np.any((c.a == free) | (c.b == free))
    o = sim.owned
    weight = o.mass[0] * G * h
    floor = c.b < 0
    assert c.R[floor, 0].sum() == pytest.approx(3 * weight, rel=1e-6)
    assert c.R[(c.a == ids[0]) & (c.b == ids[1]), 0].sum() == pytest.approx(2 * weight,
                                                                             rel=1e-6)
    assert np.abs(o.v[:3]).max() < 1e-6


def test_compounds_meet_boxes_polyhedra_and_spheres_as_their_parts_do():
    """A clump resting across a box and a polyhedron (its two end spheres on them) carries
    its weight on those two contacts, one each; a sphere resting in the notch of an L-shaped
    compound touches both of its blocks."""
    m = ps.Model()
    m.surface("a", "a", friction=0.6)
    m.half_space((0, 0, 0), (0, 0, 1), "a")
    m.box((-0.1, 0, 0.05), (0.05, 0.05, 0.05), "a", density=1000)
    cube = brick((-0.05, -0.05, 0.0), (0.05, 0.05, 0.1)) + (0.1, 0, 0)
    m.polyhedron(cube, "a", density=1000)
    rod = [C.sphere((-0.1, 0, 0), 0.03), C.sphere((0, 0, 0), 0.02), C.sphere((0.1, 0, 0), 0.03)]
    clump = m.compound(rod, "a", density=1000, position=(0, 0, 0.13))
    ell = m.compound([C.block(brick((0, 0, 0), (0.1, 0.1, 0.3))),
                      C.block(brick((0.1, 0, 0), (0.3, 0.1, 0.1)))], "a", density=1000,
                     position=(1, 0, 0))
    ball = m.sphere((1.15, 0.05, 0.15), 0.05, "a", density=500)
    h = 1e-3
    sim = sim_of(m, h)
    for _ in range(200):
        sim.step()
    c, o = sim.contacts, sim.owned
    on = (c.a == clump) | (c.b == clump)
    assert on.sum() == 2
    assert c.R[on, 0].sum() == pytest.approx(o.mass[clump] * G * h, rel=1e-6)
    notch = (c.a == ell) & (c.b == ball)
    assert notch.sum() == 2                                   # the post's face, the foot's
    assert np.abs(o.v).max() < 1e-6


def test_past_64_points_between_two_bodies_the_deepest_64_are_kept():
    """A flat clump of 9 x 9 spheres lying on a floor mesh: 81 points with the floor, of
    which the 64 deepest are kept, with distinct features (contact keys); it rests."""
    k = np.arange(81)
    parts = [C.sphere((0.02 * (i % 9), 0.02 * (i // 9), 0.0), 0.0101) for i in k]
    m = ps.Model()
    m.surface("a", "a", friction=0.5)
    m.mesh(TriangleMesh(*grid_surface((-1, -1), (1, 1), 3)), "a", name="floor")
    m.compound(parts, "a", density=1000, position=(0, 0, 0.0101))
    sim = sim_of(m)
    for _ in range(50):
        sim.step()
    c = sim.contacts
    assert len(c) == 64 and len(np.unique(c.k2)) == 64
    assert np.abs(sim.owned.v).max() < 1e-6


def test_paraview_draws_a_compound_by_its_parts(tmp_path):
    """The frames hold a compound's blocks as polygon faces and its spheres as points with
    their radii, at the body's pose; VTK's XDMF reader reads them."""
    vtk = pytest.importorskip("vtk", reason="make setup installs the vtk wheel")
    m = ps.Model()
    m.surface("a", "a", friction=0.5)
    m.half_space((0, 0, 0), (0, 0, 1), "a")
    m.compound([C.block(brick((0, 0, 0), (0.1, 0.1, 0.1))), C.sphere((0.05, 0.05, 0.15), 0.05)],
               "a", density=1000, position=(0.5, 0, 0))
    out = tmp_path / "c.h5"
    sim_of(m, output=str(out), frames=0.05).run(0.1)
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(tmp_path / "c.xdmf"))
    reader.UpdateInformation()
    reader.UpdateTimeStep(0.1)
    found, it = {}, reader.GetOutputDataObject(0).NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        found[it.GetCurrentMetaData().Get(vtk.vtkCompositeDataSet.NAME())] = \
            it.GetCurrentDataObject()
        it.GoToNextItem()
    faces, spheres = found["compounds"], found["clumps"]
    assert faces.GetNumberOfCells() == 6
    np.testing.assert_allclose(faces.GetBounds(), (0.5, 0.6, 0, 0.1, 0, 0.1), atol=1e-6)
    assert spheres.GetNumberOfPoints() == 1
    np.testing.assert_allclose(spheres.GetPoint(0), (0.55, 0.05, 0.15), atol=1e-6)
    assert spheres.GetPointData().GetArray("radius").GetValue(0) == pytest.approx(0.05)


def test_bad_compounds_are_named_and_a_compound_is_in_the_fingerprint():
    m = ps.Model()
    m.surface("a", "a", friction=0.5)
    with pytest.raises(InputError, match="non-empty list"):
        m.compound([], "a", density=1000)
    with pytest.raises(InputError, match="non-empty list"):
        m.compound([((0, 0, 0), 0.1)], "a", density=1000)
    with pytest.raises(InputError, match="overlap and one is a polyhedron"):
        m.compound([C.block(brick((0, 0, 0), (1, 1, 1))), C.sphere((1, 1, 1), 0.2)], "a",
                   density=1000)
    with pytest.raises(InputError, match="positions"):
        m.compounds([C.sphere((0, 0, 0), 0.1)], [1, 2, 3], "a", density=1000)

    def model(r):
        m = ps.Model()
        m.surface("a", "a", friction=0.5)
        m.compound([C.sphere((0, 0, 0), 0.1), C.sphere((0.1, 0, 0), r)], "a", density=1000)
        return m

    assert model(0.1).fingerprint() == model(0.1).fingerprint() != model(0.1001).fingerprint()
