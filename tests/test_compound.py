"""Compound bodies' mass properties: an L of two bricks and a keyed block exact, a clump of two
overlapping spheres exact (its lens), a rod of three with a triple overlap within its stated
bound of the exact solid of revolution, overlapping polyhedra refused unless the values are
given."""
import numpy as np
import pytest

from parsolve.errors import InputError
from parsolve.shapes import compound as C
from parsolve.shapes import polyhedron


def brick(lo, hi):
    return np.array([(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                     for z in (lo[2], hi[2])], float)


def revolution(spheres):
    """(volume, centre z, moment about the axis, moment about a transverse axis through the
    centre) of the union of balls (z_k, R_k) centred on the z axis: the union's slice at z is
    a disc of radius^2 max_k (R_k^2 - (z - z_k)^2), polynomial between the crossings of the
    circles, integrated exactly by Gauss-Legendre (5 points: degree 9)."""
    cuts = {z - R for z, R in spheres} | {z + R for z, R in spheres}
    for (z1, R1) in spheres:
        for (z2, R2) in spheres:
            if z1 < z2:
                cuts.add((R1 * R1 - R2 * R2 + z2 * z2 - z1 * z1) / (2 * (z2 - z1)))
    cuts = sorted(cuts)
    g, w = np.polynomial.legendre.leggauss(5)
    out = np.zeros(4)                                     # V, int z, int z^2, int rho^4 / 4
    for a, b in zip(cuts[:-1], cuts[1:]):
        mid = 0.5 * (a + b)
        z = mid + 0.5 * (b - a) * g
        k = int(np.argmax([R * R - (mid - zc) ** 2 for zc, R in spheres]))
        rho2 = spheres[k][1] ** 2 - (z - spheres[k][0]) ** 2
        if spheres[k][1] ** 2 - (mid - spheres[k][0]) ** 2 <= 0:
            continue                                      # a gap between balls
        f = np.pi * np.stack([rho2, z * rho2, z * z * rho2, rho2 * rho2 / 4])
        out += 0.5 * (b - a) * (f @ w)
    V, m1, m2, sxx = out
    c = m1 / V
    szz = m2 - V * c * c
    return V, c, 2 * sxx, sxx + szz


def test_an_l_of_two_bricks_has_the_exact_mass_centre_and_inertia_of_the_l():
    """Two bricks sharing a face (touching is not overlapping): the sum of their exact
    integrals equals the L-prism's own (a non-convex polyhedron, integrated over its faces)."""
    parts = [C.block(brick((0, 0, 0), (3, 1, 0.5))), C.block(brick((0, 1, 0), (1, 2, 0.5)))]
    m = C.mass_properties(parts, density=2400.0)
    P = np.array([(0, 0), (3, 0), (3, 1), (1, 1), (1, 2), (0, 2)], float)
    V = np.concatenate([np.column_stack([P, np.zeros(6)]), np.column_stack([P, np.full(6, .5)])])
    faces = [[5, 4, 3, 2, 1, 0], [6, 7, 8, 9, 10, 11]] + \
        [[k, (k + 1) % 6, (k + 1) % 6 + 6, k + 6] for k in range(6)]
    vol, c, J = polyhedron.mass_properties(V, faces)      # the L itself, from its faces
    assert m.exact and m.method == "disjoint parts"
    assert m.volume == pytest.approx(2.0, rel=1e-14) and vol == pytest.approx(2.0, rel=1e-14)
    assert m.mass == pytest.approx(4800.0, rel=1e-14)
    assert np.allclose(m.centre, (1.25, 0.75, 0.25), rtol=0, atol=1e-14)
    assert np.allclose(m.centre, c, rtol=0, atol=1e-14)
    assert np.abs(m.inertia - 2400.0 * J).max() <= 1e-12 * np.abs(m.inertia).max()
    # by hand: the parallel-axis theorem on the two bricks about the L's centre
    Jz = 2400 * (1.5 * (9 + 1) / 12 + 1.5 * (0.25 ** 2 + 0.25 ** 2)
                 + 0.5 * (1 + 1) / 12 + 0.5 * (0.75 ** 2 + 0.75 ** 2))
    assert m.inertia[2, 2] == pytest.approx(Jz, rel=1e-14)
    Jxy = -2400 * (1.5 * (0.25 * -0.25) + 0.5 * (-0.75 * 0.75))
    assert m.inertia[0, 1] == pytest.approx(Jxy, rel=1e-14)
    assert np.allclose(m.Q @ np.diag(m.moments) @ m.Q.T, m.inertia, rtol=0, atol=1e-9)
    body = m.body_frame(parts)                           # the parts about the centre
    first = sum(vol * c for vol, c, _ in (polyhedron.mass_properties(v, p.hull.faces)
                                           for v, p in zip(body, parts)))
    assert np.allclose(first, 0, atol=1e-13)


def test_a_clump_of_two_overlapping_spheres_is_exact_through_its_lens():
    for (z2, R1, R2) in ((1.2, 1.0, 0.8), (0.3, 1.0, 0.9), (1.9, 0.5, 1.5), (0.1, 1.0, 0.3)):
        m = C.mass_properties([C.sphere((0, 0, 0), R1), C.sphere((0, 0, z2), R2)], density=1.0)
        V, c, Ja, Jt = revolution([(0.0, R1), (z2, R2)])
        assert m.bound == {"volume": 0.0, "inertia": 0.0} and m.exact
        assert m.volume == pytest.approx(V, rel=1e-13)
        assert np.allclose(m.centre, (0, 0, c), rtol=0, atol=1e-13)
        assert np.allclose(np.diag(m.inertia), (Jt, Jt, Ja), rtol=1e-12, atol=0)
        assert np.abs(m.inertia - np.diag(np.diag(m.inertia))).max() < 1e-13


def test_a_rod_of_three_spheres_with_a_triple_overlap_is_within_its_stated_bound():
    """Three balls on a line, the outer two overlapping each other too: pairs alone miss the
    triple intersection; the error of mass and inertia stays within the stated bound, which
    is not vacuous (below the lenses' size). Turned off the axis, the same numbers turn."""
    for spheres in ([(0.0, 1.0), (0.6, 0.8), (1.2, 1.0)], [(0.0, 1.0), (0.75, 0.3), (1.5, 0.8)]):
        V, c, Ja, Jt = revolution(spheres)
        m = C.mass_properties([C.sphere((0, 0, z), R) for z, R in spheres], density=1.0)
        assert not m.exact and m.method == "lenses, Bonferroni bound"
        assert abs(m.volume - V) <= m.bound["volume"] < 0.5 * V
        err = np.abs(m.inertia - np.diag((Jt, Jt, Ja))).max()
        assert 0 < err <= m.bound["inertia"] < 2 * Jt
        assert abs(m.centre[2] - c) * V <= m.bound["volume"] * 3    # first moment too
    rng = np.random.default_rng(2)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    m2 = C.mass_properties([C.sphere(z * axis, R) for z, R in spheres], density=1.0)
    assert m2.volume == pytest.approx(m.volume, rel=1e-13)
    assert np.allclose(np.sort(m2.moments), np.sort(m.moments), rtol=1e-12)


def test_pairwise_overlaps_without_a_common_point_are_exact():
    """Three balls around a triangle, each pair overlapping, no point in all three."""
    a = 2 * np.pi * np.arange(3) / 3
    parts = [C.sphere((np.cos(t), np.sin(t), 0), 0.9) for t in a]
    m = C.mass_properties(parts, density=1.0)
    assert m.exact and m.method == "lenses, exact"
    lens = C._lens(parts[0], parts[1])[0]
    assert m.volume == pytest.approx(3 * 4 / 3 * np.pi * 0.9 ** 3 - 3 * lens, rel=1e-14)
    assert C.mass_properties([C.sphere((np.cos(t), np.sin(t), 0), 1.0) for t in a],
                             density=1.0).bound["volume"] > 0          # now they share one


def test_overlapping_polyhedra_are_refused_unless_the_values_are_given():
    parts = [C.block(brick((0, 0, 0), (2, 1, 1))), C.block(brick((1, 0, 0), (3, 1, 1)))]
    with pytest.raises(InputError, match="parts 0 and 1 overlap"):
        C.mass_properties(parts, density=1.0)
    with pytest.raises(InputError, match="parts 0 and 1 overlap"):
        C.mass_properties([C.block(brick((0, 0, 0), (2, 1, 1))), C.sphere((2.2, .5, .5), .5)],
                          density=1.0)
    C.mass_properties([C.block(brick((0, 0, 0), (2, 1, 1))), C.sphere((2.5, .5, .5), .5)],
                      density=1.0)                                   # touching: fine
    m = C.mass_properties(parts, mass=3.0, centre=(1.5, 0.5, 0.5), inertia=np.diag((1, 2, 2.)))
    assert m.method == "given" and m.mass == 3.0 and np.array_equal(m.moments, (1, 2, 2))
    with pytest.raises(InputError, match="symmetric positive definite"):
        C.mass_properties(parts, mass=3.0, centre=(0, 0, 0), inertia=-np.eye(3))
    with pytest.raises(InputError, match="rtol"):
        C.mass_properties([C.sphere((0, 0, z), 1.0) for z in (0, 0.6, 1.2)], density=1.0,
                          rtol=1e-6)
    with pytest.raises(InputError, match="radius"):
        C.sphere((0, 0, 0), -1.0)


def test_a_keyed_block_from_two_files_of_convex_parts(tmp_path):
    """A block split by its user into two convex parts, one OBJ file each (millimetres): the
    compound of their hulls is the keyed block, exact."""
    from parsolve.io import meshfile
    from parsolve.shapes.mesh import box_surface

    for name, lo, hi in (("body", (0, 0, 0), (300, 200, 100)), ("key", (300, 50, 0),
                                                                   (350, 150, 100))):
        meshfile.write_obj(tmp_path / f"{name}.obj", *box_surface(lo, hi, 2))
    parts = [C.block_from_file(tmp_path / f"{p}.obj", units="mm") for p in ("body", "key")]
    m = C.mass_properties(parts, density=2000.0)
    assert m.exact and m.volume == pytest.approx(0.006 + 0.0005, rel=1e-13)
    cx = (0.006 * 0.15 + 0.0005 * 0.325) / 0.0065
    assert np.allclose(m.centre, (cx, 0.1, 0.05), rtol=0, atol=1e-15)

