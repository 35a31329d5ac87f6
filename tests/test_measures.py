"""Measures of regions, coarse-grained fields, force chains and masonry joints against
analytic cases: a crystal's packing and coordination, a column's weight, a compressed
packing's plate force, an arch's statics."""
import os

import numpy as np
import pytest

import parsolve as ps
from parsolve.errors import InputError
from parsolve.measures import Ball, Box, Grid, coarse, overlap, parse_region, slabs
from parsolve.measures import chains, masonry, tables
from parsolve.measures.region import measure
from parsolve.parallel.reduce import exact_binned_sums
from tests.scenes import G, run


def sums(t, c, n):
    return exact_binned_sums(t, c, n)


def tables_of(sim):
    b = tables.bodies_table(sim.owned)
    return b, tables.attach(tables.ends_table(sim.contacts, sim.h), b)


def test_binned_exact_sums_depend_on_the_set_of_terms_alone():
    rng = np.random.default_rng(5)
    t = rng.normal(size=(2000, 4)) * np.array([1.0, 1e-3, 1e3, 1.0])
    b = rng.integers(-1, 7, 2000)                      # bin -1: left out
    s = exact_binned_sums(t, b, 7)
    want = np.array([t[b == i].sum(axis=0) for i in range(7)])
    assert np.all(np.abs(s - want).max(axis=0) <= 1e-13 * np.abs(t).max(axis=0))
    p = rng.permutation(2000)
    np.testing.assert_array_equal(exact_binned_sums(t[p], b[p], 7), s)
    t[3, 1], b[3] = np.nan, 2                         # a term that is not finite: its bin's
    s = exact_binned_sums(t, b, 7)                     # sum of that column alone is NaN
    assert np.isnan(s[2, 1]) and np.isnan(s).sum() == 1


# -- overlap volumes ---------------------------------------------------------------------------
def test_sphere_box_overlaps_are_exact():
    r = 0.7
    full = 4 / 3 * np.pi * r ** 3
    cap = lambda hgt: np.pi * hgt * hgt * (3 * r - hgt) / 3           # noqa: E731
    vol = overlap.sphere_box([[0, 0, 0]] * 5, [r] * 5,
                             [[0.3, -9, -9], [0, 0, 0], [-9, -9, -9], [0, 0, -9], [-0.2, -9, -9]],
                             [[9, 9, 9], [9, 9, 9], [9, 9, 9], [9, 9, 9], [0.2, 9, 9]])
    np.testing.assert_allclose(vol, [cap(r - 0.3), full / 8, full, full / 4,
                                     full - 2 * cap(r - 0.2)], rtol=1e-14)
    # any sphere is split without loss among the cells of a grid (cuts by faces, edges and
    # corners of every sign)
    rng = np.random.default_rng(3)
    x = rng.uniform(0.2, 0.8, (200, 3))
    rad = rng.uniform(0.02, 0.19, 200)
    rows, cells, v = Grid((0, 0, 0), (1, 1, 1), (4, 3, 5)).sphere_volumes(x, rad)
    np.testing.assert_allclose(np.bincount(rows, v, minlength=200), 4 / 3 * np.pi * rad ** 3,
                               rtol=1e-13)
    assert len(rows) > 600                                     # most spheres are cut


def test_sphere_ball_overlap_is_the_lens():
    # two unit balls at distance 1: the lens is 5 pi / 12
    np.testing.assert_allclose(overlap.sphere_ball([[1, 0, 0], [3, 0, 0], [0.1, 0, 0]],
                                                   [1, 1, 0.5], [0, 0, 0], 1.0),
                               [5 * np.pi / 12, 0.0, 4 / 3 * np.pi / 8], rtol=1e-14)


def test_regions_from_text_and_bad_input():
    g = parse_region("grid:0,0,0,1,2,3,1,2,3")
    assert g.ncells == 6 and np.allclose(g.volume, 1.0)
    assert list(g.locate([[0.5, 1.5, 0.5], [0.5, 0.5, 2.5], [2, 0, 0]])) == [1, 4, -1]
    s = parse_region("slabs:0,0,0,1,1,1,z,4")
    assert s.shape == (1, 1, 4)
    assert parse_region("ball:0,0,0,2").volume[0] == pytest.approx(32 / 3 * np.pi)
    with pytest.raises(InputError, match="region 'cube:1'"):
        parse_region("cube:1")
    with pytest.raises(InputError, match="box: needs lo < hi"):
        Box((0, 0, 0), (1, -1, 1))


def gas(x, v, mass=1.0, shape=0, radius=0.1, volume=None):
    """A body table of free bodies (no contacts) and its empty ends."""
    n = len(x)
    b = {"gid": np.arange(n), "x": np.asarray(x, float), "v": np.asarray(v, float),
         "mass": np.full(n, mass), "radius": np.full(n, radius), "shape": np.full(n, shape),
         "volume": np.full(n, 4 / 3 * np.pi * radius ** 3 if volume is None else volume)}
    e = tables.ends_of(np.zeros(0, int), np.zeros(0, int), np.zeros((0, 3)),
                       np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros(0), 1.0)
    return b, tables.attach(e, b)


def test_the_kinetic_stress_is_the_momentum_flux_about_the_mean_velocity():
    """Two bodies of mass m moving at +-u along x and a common drift w: sigma_kin = 2 m u^2 / V
    along xx alone, the mean velocity w; the coarse-grained velocity of a uniform flow is it."""
    u, w = 0.3, np.array([0.0, 1.0, -2.0])
    b, e = gas([[0.2, 0.5, 0.5], [0.8, 0.5, 0.5]], [w + (u, 0, 0), w - (u, 0, 0)], mass=2.0)
    out = measure(Box((0, 0, 0), (1, 1, 1)), b, e, sums, kinetic=True)
    want = np.zeros((3, 3))
    want[0, 0] = 2 * 2.0 * u * u
    np.testing.assert_allclose(out["stress"][0], want, atol=1e-15)
    np.testing.assert_allclose(out["velocity"][0], w)
    assert out["coordination"][0] == 0 and np.isnan(out["mean_force"][0])
    rng = np.random.default_rng(1)
    b, e = gas(rng.uniform(0.3, 0.7, (50, 3)), np.tile(w, (50, 1)))
    f = coarse.fields(Grid((0, 0, 0), (1, 1, 1), (10, 10, 10)), b, e, sums, "lucy", 0.2)
    # (the exact sums quantize every term to ~1e-17 of the largest: a cell with 1e-3 of the
    # densest cell's mass has its velocity to ~1e-13)
    moving = f["density"] > 1e-3 * f["density"].max()
    np.testing.assert_allclose(f["velocity"][moving], np.tile(w, (moving.sum(), 1)),
                               rtol=1e-12)
    np.testing.assert_allclose(f["stress_kinetic"][moving], 0.0,
                               atol=1e-12 * f["density"].max())


def test_packing_of_other_shapes_is_bounded_by_the_bodies_across_the_boundary():
    """Cubes of side 1/2 on the unit lattice fill 1/8 of any box of whole cells, offset or
    not: the centre rule's value lies within its stated bound of it."""
    ijk = np.array(list(np.ndindex(6, 6, 6)), float) + 0.5
    b, e = gas(ijk, np.zeros_like(ijk), shape=1, radius=np.sqrt(3) / 4, volume=0.125)
    for lo in (1.0, 1.3, 1.5):
        out = measure(Box((lo,) * 3, (lo + 3,) * 3), b, e, sums)
        assert abs(out["packing"][0] - 0.125) <= out["packing_error"][0]
        # no cube crosses the faces of the box from 1 to 4: the value is exact there
        assert (out["packing_error"][0] > 0) == (lo != 1.0) and out["packing_error"][0] < 0.5
    out = measure(Ball((3, 3, 3), 0.4), b, e, sums)
    assert out["packing"][0] == 0 and out["packing_error"][0] == 0


# -- a crystal ----------------------------------------------------------------------------------
def fcc(n, r):
    a = 2 * np.sqrt(2) * r
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    cells = np.array(list(np.ndindex(n, n, n)))
    return (cells[:, None, :] + basis[None]).reshape(-1, 3) * a, a


def test_an_fcc_crystal_packs_at_pi_over_sqrt18_with_twelve_neighbours():
    r = 0.01
    x, a = fcc(5, r)
    m = ps.Model(gravity=(0, 0, 0))
    m.surface("g", "g", friction=0.5)
    m.spheres(x, r, "g", density=1000)
    sim = run(m, 1e-5, 1e-5)
    b, e = tables_of(sim)
    for lo, cells in ((1.3 * a, 3), (0.9 * a, 2)):          # any aligned box of whole cells
        out = measure(Box((lo,) * 3, (lo + cells * a,) * 3), b, e, sums, contact_gap=1e-12)
        assert out["packing"][0] == pytest.approx(np.pi / np.sqrt(18), abs=1e-12)
        assert out["packing_error"][0] == 0.0
        assert out["coordination"][0] == 12 and out["coordination_mechanical"][0] == 12
        assert out["rattlers"][0] == 0
        np.testing.assert_allclose(out["fabric"][0], np.eye(3) / 3, atol=1e-14)
    # a ball about a site holds the site's centre, and a lens of each of its 12 neighbours
    centre = x[np.argmin(np.linalg.norm(x - 2.5 * a, axis=1))]
    out = measure(Ball(centre, 1.5 * r), b, e, sums, contact_gap=1e-12)
    assert out["bodies"][0] == 1 and out["coordination"][0] == 12
    lens = overlap.sphere_ball([[2 * r, 0, 0]], [r], [0, 0, 0], 1.5 * r)[0]
    vol = 4 / 3 * np.pi * r ** 3 + 12 * lens
    assert out["packing"][0] == pytest.approx(vol / (4 / 3 * np.pi * (1.5 * r) ** 3),
                                              rel=1e-13)


# -- a column at rest, a packing under a plate ------------------------------------------------
R, NC, LAYERS = 0.01, 3, 6


def stack(gravity, top_load=None, friction=0.5):
    """NC x NC columns of LAYERS touching spheres (simple cubic) in a box of frictionless
    walls on a floor; with top_load, a plate (a box body) on top pressed down by that force."""
    m = ps.Model(gravity=gravity)
    m.surface("g", "g", friction=friction)
    m.surface("g", "w", friction=0.0)
    L = 2 * R * NC
    m.box_walls((0, 0, 0), (L, L, 1.0), "w")
    ijk = np.array(list(np.ndindex(NC, NC, LAYERS)), float)
    m.spheres(R + 2 * R * ijk, R, "g", density=2000)
    if top_load is not None:
        plate = m.box((L / 2, L / 2, 2 * R * LAYERS + 0.005), (L / 2 - 1e-4, L / 2 - 1e-4,
                                                               0.005), "g", density=2000)
        m.load(plate, force=(0, 0, -top_load))
    return m, L


def test_a_column_s_slab_stress_is_the_weight_above_and_its_density_integrates_to_its_mass():
    m, L = stack((0, 0, -G))
    sim = run(m, 0.02, 1e-3, tol=1e-12)
    b, e = tables_of(sim)
    mg = 2000 * 4 / 3 * np.pi * R ** 3 * G
    out = measure(slabs((0, 0, 0), (L, L, 2 * R * LAYERS), "z", LAYERS), b, e, sums,
                  kinetic=True)
    above = NC * NC * mg * (LAYERS - 0.5 - np.arange(LAYERS))     # above each layer's middle
    np.testing.assert_allclose(out["stress"][:, 2, 2], above / L ** 2, rtol=1e-8)
    np.testing.assert_allclose(out["stress"][:, 0, 0], 0.0, atol=1e-8 * above[0] / L ** 2)
    assert np.all(out["bodies"] == NC * NC)
    assert out["packing"] == pytest.approx(np.pi / 6, rel=1e-13)      # simple cubic
    # vertical chains: 2 partners inside, 1 at the top (the floor is a wall, not a partner)
    np.testing.assert_allclose(out["coordination"], [1] + [2] * (LAYERS - 2) + [1])
    # coarse-grained: the density integrates to the mass, the stress to Love-Weber's total
    grid = Grid((-0.05, -0.05, -0.05), (L + 0.05, L + 0.05, 2 * R * LAYERS + 0.05),
                (14, 14, 20))
    for kernel in ("gaussian", "lucy"):
        f = coarse.fields(grid, b, e, sums, kernel=kernel, width=1.5 * R)
        dV = np.prod(grid.spacing)
        assert f["density"].sum() * dV == pytest.approx(b["mass"].sum(), rel=1e-12)
        total = out["stress_contact"].sum(axis=0) * L * L * 2 * R
        np.testing.assert_allclose(f["stress_contact"].sum(axis=0) * dV, total,
                                   rtol=1e-10, atol=1e-12 * abs(total).max())
        assert np.abs(f["velocity"]).max() < 1e-9


def test_love_weber_stress_of_a_compressed_packing_is_the_plate_force_over_its_area():
    F = 50.0
    m, L = stack((0, 0, 0), top_load=F, friction=0.0)
    sim = run(m, 0.01, 1e-3, tol=1e-12)
    b, e = tables_of(sim)
    # the lateral contacts carry nothing but the solver's round-off
    assert 0 < e["fn"][np.abs(e["normal"][:, 2]) < 0.5].max() < 1e-9 * F
    out = measure(Box((0, 0, 0), (L, L, 2 * R * LAYERS)), b, e, sums, contact_force=1e-6 * F)
    sigma = out["stress"][0]
    assert sigma[2, 2] == pytest.approx(F / L ** 2, rel=1e-8)
    np.testing.assert_allclose(sigma - np.diag(np.diag(sigma)), 0.0, atol=1e-8 * F / L ** 2)
    assert out["mean_force"][0] == pytest.approx(F / NC ** 2, rel=1e-8)
    inner = measure(Box((0, 0, 0), (L, L, 2 * R * LAYERS - R)), b, e, sums,
                    contact_force=1e-6 * F)           # without the plate's contact points
    assert inner["force_histogram"][0].sum() == inner["contacts"][0] == NC * NC * (LAYERS - 1)
    # the rigid plate shares F among the columns as the solver chose (statically
    # indeterminate), each column carries its share down to the floor: force chains
    vertical = np.flatnonzero((np.abs(e["normal"][:, 2]) > 0.5) & ~tables.wall(e))
    weakest = e["fn"][vertical].min()
    assert weakest > 0.5 * F / NC ** 2
    ch = chains.chains(e, 0.99 * weakest)
    assert len(ch["force"]) == len(vertical) == 2 * NC * NC * LAYERS      # the plate's too
    length = np.linalg.norm(ch["points"][1::2] - ch["points"][0::2], axis=1)
    np.testing.assert_allclose(length[ch["gid"] < NC * NC * LAYERS], R, rtol=1e-9)
    assert len(chains.chains(e, e["fn"].max())["force"]) == 0


# -- an arch ---------------------------------------------------------------------------------
def test_an_arch_at_rest_carries_its_weight_along_a_thrust_line_within_every_joint():
    t, blocks = 0.25, 7
    m = ps.Model(gravity=(0, 0, -G))
    m.surface("stone", "stone", friction=0.8, restitution=0.0)
    ids = m.arch(span=2 * (1.0 - t / 2), thickness=t, depth=0.3, blocks=blocks,
                 material="stone", density=2000)
    sim = run(m, 0.1, 2e-3, tol=1e-10, max_iter=2000)
    b, e = tables_of(sim)
    j = masonry.joints(e)
    assert len(j["a"]) == blocks + 1 and np.all(j["state"] < 2)
    # the thrust point lies within its joint: between intrados and extrados, along the joint
    radial = j["centre"] - [0, j["centre"][0, 1], 0]
    radial[:, 1] = 0
    radial /= np.linalg.norm(radial, axis=1)[:, None]
    ecc = np.einsum("ij,ij->i", j["thrust"] - j["centre"], radial)
    assert np.all(np.abs(ecc) <= t / 2 * (1 + 1e-9)) and np.abs(ecc).max() > 0.2 * t
    # statics of every voussoir: the joints' forces at their thrust points balance its weight
    order = np.argsort(b["gid"])
    for k, gid in enumerate(ids):
        x, mass = b["x"][order][gid], b["mass"][order][gid]
        F, M = np.array([0, 0, -mass * G]), np.zeros(3)
        for sign, mine in ((1, j["a"] == gid), (-1, j["b"] - 2 ** 20 == gid)):
            for q in np.flatnonzero(mine):
                F += sign * j["force"][q]
                M += np.cross(j["thrust"][q] - x, sign * j["force"][q])
        assert np.linalg.norm(F) < 1e-6 * mass * G
        assert abs(M[1]) < 1e-6 * mass * G * t


# -- sensors -----------------------------------------------------------------------------------
def test_a_region_sensor_records_what_the_frames_measure(tmp_path):
    """A measure sensor's samples equal the measures of the frames at the same steps."""
    from parsolve.io.measures import read_frame
    from parsolve.io.hdf5 import h5py_module as _h5py

    m, L = stack((0, 0, -G))
    cells = slabs((0, 0, 0), (L, L, 2 * R * LAYERS), "z", 3)
    m.sensor("bed", region=cells, every=5, kinetic=True,
             quantities=("packing", "coordination", "stress", "fabric", "force_histogram"))
    m.sensor("ball", region="ball:0.03,0.03,0.06,0.025", every=5)
    out = str(tmp_path / "bed.h5")
    run(m, 0.02, 1e-3, tol=1e-12, output=out, frames=5e-3)
    with _h5py().File(out, "r") as f:
        s = f["sensors/bed"]
        assert s["stress"].shape == (5, 3, 9) and s["packing"].shape == (5, 3, 1)
        steps = list(s["step"][()])
        for k, step in enumerate(f["frames/step"][()]):
            b, e, h, t, _ = read_frame(f, k)
            got = measure(cells, b, e, sums, kinetic=True)
            i = steps.index(step)
            np.testing.assert_array_equal(s["stress"][i], got["stress"].reshape(3, 9))
            np.testing.assert_array_equal(s["coordination"][i, :, 0], got["coordination"])
            np.testing.assert_array_equal(s["force_histogram"][i], got["force_histogram"])
        assert s["stress"][-1, 0, 8] > 0 and "slabs" not in s.attrs["region"]
        assert f["sensors/ball/packing"].shape == (5, 1, 1)


def test_field_and_joint_sensors_record_what_the_frames_give(tmp_path):
    from parsolve.io.measures import read_frame
    from parsolve.io.hdf5 import h5py_module as _h5py

    m, L = stack((0, 0, -G))
    grid = Grid((0, 0, -R / 2), (L, L, 2 * R * LAYERS), (1, 1, 3))
    m.sensor("cg", region=grid, every=5, kernel="lucy", width=0.03,
             quantities=("field_density", "field_stress", "joints"))
    out = str(tmp_path / "cg.h5")
    run(m, 0.01, 1e-3, tol=1e-12, output=out, frames=5e-3)
    with _h5py().File(out, "r") as f:
        s = f["sensors/cg"]
        b, e, *_ = read_frame(f, 2)
        want = coarse.fields(grid, b, e, sums, "lucy", 0.03)
        np.testing.assert_array_equal(s["field_density"][-1, :, 0], want["density"])
        np.testing.assert_array_equal(s["field_stress"][-1], want["stress"].reshape(3, 9))
        j = masonry.joints(e)
        cell = grid.locate(j["centre"])
        inside = cell >= 0                       # (the joints on the walls x, y = L are not)
        counts = np.zeros((3, 4))
        np.add.at(counts, (cell[inside], j["state"][inside]), 1)
        counts[:, 3] = np.bincount(cell[inside], j["sliding_points"][inside] > 0, minlength=3)
        np.testing.assert_array_equal(s["joints"][-1], counts)
        # the columns' joints and their feet on the floor closed, the lateral ones open
        assert counts[:, 0].sum() == NC * NC * LAYERS and counts[:, 2].sum() > 0


def test_bad_region_sensors_are_refused():
    m = ps.Model()
    with pytest.raises(InputError, match="unknown quantity 'porosity'"):
        m.sensor("s", region="box:0,0,0,1,1,1", quantities=("porosity",))
    with pytest.raises(InputError, match="unknown option 'gap'"):
        m.sensor("s", region="box:0,0,0,1,1,1", gap=1e-3)
    with pytest.raises(InputError, match="give region= alone"):
        m.sensor("s", region="box:0,0,0,1,1,1", bodies=[0])
    with pytest.raises(InputError, match="coarse-grained fields need a grid"):
        m.sensor("s", region="ball:0,0,0,1", quantities=("field_density",))
    with pytest.raises(InputError, match="options of a region sensor"):
        m.sensor("s", bodies=[0], kinetic=True)


# -- the command ------------------------------------------------------------------------------
def test_parsolve_measure_writes_the_measures_fields_chains_and_plots(tmp_path, capsys):
    from parsolve.cli import main
    from parsolve.io.measures import read_frame
    from parsolve.io.hdf5 import h5py_module as _h5py

    m, L = stack((0, 0, -G))
    out = str(tmp_path / "col.h5")
    run(m, 0.01, 1e-3, tol=1e-12, output=out, frames=5e-3)
    H = 2 * R * LAYERS
    slab = f"slabs:0,0,0,{L},{L},{H},z,{LAYERS}"
    grid = f"grid:-0.02,-0.02,-0.02,{L + 0.02},{L + 0.02},{H + 0.02},5,5,8"
    assert main(["measure", out, "--region", slab, "--region", "ball:0.03,0.03,0.06,0.02",
                 "--grid", grid, "--width", "0.01", "--chains", "1", "--joints"]) == 0
    written = capsys.readouterr().out.split()
    assert written[:2] == [str(tmp_path / "col-measures.h5"),
                           str(tmp_path / "col-measures.xdmf")]
    assert {os.path.basename(p) for p in written[2:]} >= {
        "col-measures-region0.png", "col-measures-region0-profile.png",
        "col-measures-region0-forces.png", "col-measures-region1.png"}
    h5py = _h5py()
    with h5py.File(out, "r") as f, h5py.File(written[0], "r") as o:
        b, e, *_ = read_frame(f, 2)
        want = measure(parse_region(slab), b, e, sums)
        np.testing.assert_array_equal(o["region0/stress"][2], want["stress"])
        assert list(o["frames/step"][()]) == [0, 5, 10]
        rho = o["fields/000002/density"][()]
        assert rho.shape == (8, 5, 5)
        dV = (L + 0.04) ** 2 * (H + 0.04) / 200
        assert rho.sum() * dV == pytest.approx(b["mass"].sum(), rel=1e-12)
        assert o["chains/000002/force"].shape[0] > 0
        # joints: every contact pair; closed where the columns carry their weight
        state = o["joints/000002/state"][()]
        assert len(state) == len(np.unique(np.stack([e["gid"], e["partner"]])[:, e["first"]],
                                           axis=1).T)
        assert np.sum(state == 0) == NC * NC * LAYERS
    vtk = pytest.importorskip("vtkmodules.vtkIOXdmf2")
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(written[1])
    reader.UpdateTimeStep(0.01)                           # the last frame's
    data = reader.GetOutputDataObject(0)
    blocks = {data.GetMetaData(i).Get(data.NAME()): data.GetBlock(i)
              for i in range(data.GetNumberOfBlocks())}
    assert blocks["fields"].GetNumberOfCells() == 200
    assert blocks["fields"].GetCellData().GetArray("density").GetNumberOfTuples() == 200
    assert blocks["fields"].GetCellData().GetArray("stress").GetNumberOfComponents() == 9
    assert blocks["chains"].GetNumberOfCells() > 0
    with pytest.raises(SystemExit):
        main(["measure"])
    assert main(["measure", out]) == 2
    assert "give --region" in capsys.readouterr().err
    assert main(["measure", out, "--region", "cube:1"]) == 2


# -- pictures ----------------------------------------------------------------------------------
def test_render_draws_walls_a_colour_bar_and_force_chains(tmp_path):
    """The column between its walls: the half-spaces drawn (grey where there are no bodies), a
    colour bar at the right, and the force chains (coloured tubes, only with --chains); an
    arch's voussoirs and abutments drawn by their faces."""
    vtk = pytest.importorskip("vtk", reason="make setup installs the vtk wheel")
    from vtkmodules.util.numpy_support import vtk_to_numpy

    from parsolve.io.render import render

    def pixels(path):
        reader = vtk.vtkPNGReader()
        reader.SetFileName(str(path))
        reader.Update()
        image = reader.GetOutput()
        w, h, _ = image.GetDimensions()
        return vtk_to_numpy(image.GetPointData().GetScalars()).reshape(h, w, -1)[::-1, :, :3]

    m, L = stack((0, 0, -G))
    out = str(tmp_path / "col.h5")
    run(m, 0.005, 1e-3, tol=1e-12, output=out)
    size = (400, 300)
    plain = pixels(render(out, out=str(tmp_path / "a.png"), size=size, color="none"))
    bar = pixels(render(out, out=str(tmp_path / "b.png"), size=size, color="velocity"))
    chains_png = pixels(render(out, out=str(tmp_path / "c.png"), size=(640, 480), chains=0.5))
    grey = np.all(np.abs(plain.astype(int) - 190) < 40, axis=2) & \
        (np.ptp(plain.astype(int), axis=2) < 8)
    assert grey.mean() > 0.05                                  # the walls and the floor
    saturated = lambda p: np.ptp(p.astype(int), axis=2) > 120  # noqa: E731
    right = slice(int(0.8 * size[0]), size[0])
    middle = slice(int(0.35 * size[1]), int(0.75 * size[1]))
    assert not saturated(plain)[middle, right].any()
    assert saturated(bar)[middle, right].mean(axis=0).max() == 1.0    # the colour bar
    assert saturated(chains_png)[:, :500].sum() > 200          # the chains' coloured tubes
    assert not saturated(plain)[:, :int(0.78 * size[0])].any()
    t = 0.25
    a = ps.Model(gravity=(0, 0, -G))
    a.surface("stone", "stone", friction=0.8)
    a.arch(span=2 * (1.0 - t / 2), thickness=t, depth=0.3, blocks=5, material="stone",
           density=2000)
    out = str(tmp_path / "arch.h5")
    run(a, 0.002, 1e-3, output=out)
    from parsolve.io.measures import read_frame
    from parsolve.io.hdf5 import h5py_module as _h5py

    with _h5py().File(out, "r") as f:                # a block's volume from its drawn faces
        b, *_ = read_frame(f, 1)
    np.testing.assert_allclose(b["volume"], b["mass"] / 2000, rtol=1e-12)
    arch = pixels(render(out, out=str(tmp_path / "d.png"), size=size, color="velocity"))
    drawn = np.any(arch != arch[0, 0], axis=2)
    assert 0.03 < drawn[:, :int(0.78 * size[0])].mean() < 0.9
    with pytest.raises(InputError, match="color must be one of"):
        render(out, color="pink")
