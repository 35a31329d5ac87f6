"""The polyhedra's compiled narrow phase against its Python twin, stage by stage: random convex
hulls, boxes and many-sided prisms at random poses and stacked face on face (edge axes, faces
of either body as reference, clipped polygons cut down to MAXP points), and the closest points
of two crossing edges that the polyhedra's and the boxes' edge axes share."""
import numpy as np
import pytest

from parsolve.contact import boxbox, polyhedra
from parsolve.dynamics.rotation import axis_angle_to_quat, quat_to_matrix
from parsolve import shapes
from parsolve.shapes import polyhedron


def prism(r, height, sides):
    a = 2 * np.pi * np.arange(sides) / sides
    ring = np.stack([r * np.cos(a), r * np.sin(a), np.zeros(sides)], axis=1)
    return np.concatenate([ring, ring + (0, 0, height)]) - (0, 0, height / 2)


def rotations(rng, n):
    q = rng.normal(size=(n, 4))
    return quat_to_matrix(q / np.linalg.norm(q, axis=1)[:, None])


def scene(rng, n_random=240, n_stacked=160):
    """Packed templates and pairs (ta, xa, Ra, tb, xb, Rb): random hulls of 6 to 40 points,
    prisms of 5, 9 and 24 sides, boxes; pairs at random poses with their centres 0.35 to 0.9
    of their radii's sum apart, and A stacked on B (turned about z, some tilted by 1e-3 rad;
    often the 24-sided prism) overlapping by 1e-3 or 1e-4, or 1e-4 and 0.05 apart."""
    hulls = [polyhedron.make("hull", rng.normal(size=(n, 3)) * rng.uniform(0.3, 1.2, 3))[0]
             for n in (6, 8, 12, 20, 40)]
    hulls += [polyhedron.make("prism", prism(rng.uniform(0.4, 1.0), rng.uniform(0.3, 1.0), s))[0]
              for s in (5, 9, 24)]
    hulls += [shapes.box.hull(shapes.LIBRARY.add(shapes.BOX, np.array(h)))
              for h in ((0.5, 0.5, 0.5), (1.0, 0.2, 0.3), (0.1, 0.7, 0.4))]
    pack = polyhedra.Pack()
    t = pack.index(np.arange(len(hulls)), lambda k: hulls[k])
    radius = pack.arrays["radius"]
    n = n_random
    ta, tb = t[rng.integers(0, len(t), n)], t[rng.integers(0, len(t), n)]
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    xa = rng.normal(size=(n, 3))
    xb = xa - d * ((radius[ta] + radius[tb]) * rng.uniform(0.35, 0.9, n))[:, None]
    Ra, Rb = rotations(rng, n), rotations(rng, n)
    m = n_stacked
    often = np.where(np.arange(len(t)) == 7, 8.0, 1.0)         # the 24-sided prism
    sa, sb = rng.choice(t, m, p=often / often.sum()), rng.choice(t, m, p=often / often.sum())
    turn = quat_to_matrix(np.array([axis_angle_to_quat((0, 0, 1), a)
                                    for a in rng.choice([0.0, np.pi / 4, 0.3], m)]))
    tilt = quat_to_matrix(np.array([axis_angle_to_quat(rng.normal(size=3), 1e-3)
                                    for _ in range(m)]))
    Rsa = np.where(rng.uniform(size=m)[:, None, None] < 0.5, turn, tilt @ turn)
    Rsb = np.broadcast_to(np.eye(3), (m, 3, 3))
    low = np.array([(hulls[a].vertices @ R.T)[:, 2].min() for a, R in zip(sa, Rsa)])
    high = np.array([hulls[b].vertices[:, 2].max() for b in sb])
    xsa = np.zeros((m, 3))
    xsa[:, :2] = rng.normal(size=(m, 2)) * 0.2
    xsa[:, 2] = high - low + rng.choice([-1e-3, -1e-4, 1e-4, 0.05], m)
    return (pack.arrays, np.concatenate([ta, sa]), np.concatenate([xa, xsa]),
            np.concatenate([Ra, Rsa]), np.concatenate([tb, sb]),
            np.concatenate([xb, np.zeros((m, 3))]), np.concatenate([Rb, Rsb]))


def contacts(f, arrays, ta, xa, Ra, tb, xb, Rb, margin):
    a = arrays
    cap = polyhedra.MAXP * len(ta)
    out = dict(pair=np.zeros(cap, np.int64), feature=np.zeros(cap, np.int64),
               normal=np.zeros((cap, 3)), point=np.zeros((cap, 3)), gap=np.zeros(cap))
    c = f(a["V"], a["vptr"], a["N"], a["D"], a["fptr"], a["FV"], a["fvptr"], a["E"], a["eptr"],
          a["radius"], ta, np.ascontiguousarray(xa), np.ascontiguousarray(Ra), tb,
          np.ascontiguousarray(xb), np.ascontiguousarray(Rb), margin, out["pair"],
          out["feature"], out["normal"], out["point"], out["gap"])
    return {k: v[:c] for k, v in out.items()}


def test_kernel_and_twin_give_the_same_contacts_of_random_hulls_boxes_and_stacks(monkeypatch):
    """The same pairs touch with the same number of points and the same features; points,
    normals and gaps agree to round-off (the twin places the templates and takes its dot
    products through BLAS, the kernel in its own order). Every stage is met: edge axes, a
    reference face on A and on B, polygons of more than MAXP corners."""
    kernels = pytest.importorskip("parsolve._kernels.polyhedra")
    met = {"edge": 0, "face on A": 0, "face on B": 0, "over MAXP": 0}
    edge, face, corners = polyhedra._edge_contact, polyhedra._face_contact, \
        polyhedra._contact_corners

    def edge_counted(*args):
        met["edge"] += 1
        return edge(*args)

    def face_counted(*args):
        points = face(*args)
        met["face on B" if args[13] else "face on A"] += 1
        return points

    def corners_counted(*args):
        kept = corners(*args)
        met["over MAXP"] += len(kept) > polyhedra.MAXP
        return kept

    monkeypatch.setattr(polyhedra, "_edge_contact", edge_counted)
    monkeypatch.setattr(polyhedra, "_face_contact", face_counted)
    monkeypatch.setattr(polyhedra, "_contact_corners", corners_counted)
    arrays, *pairs = scene(np.random.default_rng(7))
    twin = contacts(polyhedra.poly_contacts, arrays, *pairs, 0.02)
    comp = contacts(kernels.poly_contacts, arrays, *pairs, 0.02)
    assert min(met.values()) >= 5, met
    assert 150 < len(np.unique(twin["pair"])) < len(pairs[0])   # many pairs touch, not all
    for f in ("pair", "feature"):
        assert np.array_equal(twin[f], comp[f]), f
    for f in ("normal", "point", "gap"):
        np.testing.assert_allclose(comp[f], twin[f], rtol=0, atol=1e-12, err_msg=f)


def test_the_kernel_keeps_the_twins_limit_of_points_and_refuses_short_out_arrays():
    kernels = pytest.importorskip("parsolve._kernels.polyhedra")
    assert kernels.LIMITS["MAXP"] == polyhedra.MAXP
    arrays, *pairs = scene(np.random.default_rng(1), 3, 2)
    a, n = arrays, len(pairs[0])
    short = [np.zeros(polyhedra.MAXP * n - 1, np.int64), np.zeros(polyhedra.MAXP * n, np.int64),
             np.zeros((polyhedra.MAXP * n, 3)), np.zeros((polyhedra.MAXP * n, 3)),
             np.zeros(polyhedra.MAXP * n)]
    with pytest.raises(ValueError, match="rows per pair"):
        kernels.poly_contacts(a["V"], a["vptr"], a["N"], a["D"], a["fptr"], a["FV"], a["fvptr"],
                              a["E"], a["eptr"], a["radius"], pairs[0],
                              np.ascontiguousarray(pairs[1]), np.ascontiguousarray(pairs[2]),
                              pairs[3], np.ascontiguousarray(pairs[4]),
                              np.ascontiguousarray(pairs[5]), 0.0, *short)


def test_the_closest_points_of_two_crossing_edges_lie_on_their_common_perpendicular():
    """Edges along x at height 0 and along a direction in the plane z = 1: the closest points
    are where the common perpendicular (along z) meets them; past an end the parameter stops
    at the end, and near-parallel edges give (0, 0) when a floor on den is asked for."""
    pa, ua = np.array([-1.0, 0.3, 0.0]), np.array([2.0, 0.0, 0.0])
    pb, ub = np.array([0.2, -1.0, 1.0]), np.array([0.0, 2.0, 0.0])
    ta, tb = polyhedra.closest_on_edges(pa, ua, pb, ub)
    assert np.allclose(pa + ta * ua, (0.2, 0.3, 0.0), atol=1e-15)
    assert np.allclose(pb + tb * ub, (0.2, 0.3, 1.0), atol=1e-15)
    ta, tb = polyhedra.closest_on_edges(pa, 0.25 * ua, pb, ub)     # A ends at x = -0.5
    assert ta == 1.0 and tb == pytest.approx(0.65, abs=1e-15)
    ta, tb = polyhedra.closest_on_edges(pa, ua, pb, ub, (-0.2, 0.2), (-0.1, 0.1))
    assert (ta, tb) == (0.2, 0.1)
    near = ua + (0, 1e-8, 0)
    assert polyhedra.closest_on_edges(pa, ua, pb, near, den_min=1e-12) == (0.0, 0.0)


def test_crossed_box_edges_touch_where_the_common_perpendicular_meets_them():
    """Two boxes crossed at right angles and each turned 45 degrees about its length, an edge
    of the upper across an edge of the lower: boxbox's edge axis gives one point midway
    between the edges, at the boxes' offset in x and y."""
    half = np.array([1.0, 0.1, 0.1])
    Ra = quat_to_matrix(axis_angle_to_quat((1, 0, 0), np.pi / 4)[None])[0]
    Rb = quat_to_matrix(axis_angle_to_quat((0, 0, 1), np.pi / 2)[None])[0] @ Ra
    d = 0.1 * np.sqrt(2)
    got = boxbox._pair(np.array([0.3, -0.2, 2 * d - 1e-3]), Ra, half, np.zeros(3), Rb, half,
                       0.0)
    assert len(got) == 1
    feature, normal, point, gap = got[0]
    assert feature >= boxbox.EDGE_FEATURE
    assert np.allclose(normal, (0, 0, 1), atol=1e-12) and gap == pytest.approx(-1e-3, abs=1e-12)
    assert np.allclose(point, (0.0, -0.2, d - 5e-4), atol=1e-12)
