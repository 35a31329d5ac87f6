"""The sweep order (parsolve/parallel/colouring.py): a schedule's order of relaxations and
exchanges, and the exact identity of cells."""
import numpy as np

from parsolve.parallel.colouring import ColourSchedule, cell_ids


def test_a_schedule_relaxes_the_boundary_sends_relaxes_the_interior_then_receives():
    calls = []
    schedule = ColourSchedule([np.array([4, 1, 7]), np.array([0, 2])], boundary=[2, 0],
                              start=lambda c: calls.append(("start", c)),
                              finish=lambda c: calls.append(("finish", c)))
    schedule.visit(lambda order: calls.append(order.tolist()))
    assert calls == [[4, 1], ("start", 0), [7], ("finish", 0),
                     ("start", 1), [0, 2], ("finish", 1)]
    calls.clear()
    ColourSchedule.single(3).visit(lambda order: calls.append(order.tolist()))
    assert calls == [[0, 1, 2]]


def test_cell_ids_are_equal_exactly_for_equal_cells():
    rng = np.random.default_rng(3)
    cells = rng.integers(-3, 3, (500, 3))
    ids = cell_ids(cells)
    same = (cells[:, None, :] == cells[None, :, :]).all(axis=2)
    assert (same == (ids[:, None] == ids[None, :])).all()
    assert len(cell_ids(np.zeros((0, 3), np.int64))) == 0


def test_rows_of_one_colour_in_different_cells_share_no_body_at_any_level():
    """Levels: grains of 1 mm and bodies up to 20 times larger, every pair within a contact's
    reach a row (point in the gap): two rows of one colour in different cells never share a
    body, the levels follow the sizes, and a coarse cell's rows have one anchor."""
    from types import SimpleNamespace

    from parsolve.parallel.colouring import Levels, colours_of

    rng = np.random.default_rng(7)
    n = 1500
    radius = np.where(rng.random(n) < 0.05, rng.uniform(0.005, 0.02, n),
                      rng.uniform(0.0008, 0.001, n))
    x = rng.uniform(0, 0.06, (n, 3))
    margin = 1e-6
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    a, b = np.nonzero(np.triu(d <= radius[:, None] + radius[None] + margin, 1))
    u = (x[b] - x[a]) / d[a, b][:, None]
    point = x[a] + u * (radius[a] + 0.5 * (d[a, b] - radius[a] - radius[b]))[:, None]
    from parsolve.tables.interactions import Interactions

    rows = Interactions(len(a), a=a, b=b, point=point, k2=np.zeros(len(a), np.int64))
    levels = Levels(2 * radius.max() + margin, radius.min() + 0.5 * margin)
    assert levels.nlevels == 5 and len(a) > 300
    cells = levels.row_cells(rows, SimpleNamespace(x=x, radius=radius), margin)
    colour = colours_of(cells)
    assert {0, 4} <= set(cells[:, 3].tolist()) and len(set(cells[:, 3].tolist())) >= 3
    key = cell_ids(cells)
    for c in np.unique(colour):
        rows_c = np.flatnonzero(colour == c)
        cell_of_body = {}
        for r in rows_c:
            for body in (a[r], b[r]):
                assert cell_of_body.setdefault(body, key[r]) == key[r], (c, body)
    anchors = levels.anchor(cells)
    for k in np.unique(key):
        assert len(np.unique(anchors[key == k], axis=0)) == 1


def test_the_compiled_row_cells_equal_their_twin_bit_for_bit():
    """kernels/colouring.pyx's row_cells against colouring.row_cells: rows with a body B or an
    obstacle, periodic images (rows of one origin of four), several levels, periodic axes."""
    import numpy as np
    import pytest
    from parsolve._kernels import compiled
    from parsolve.parallel import colouring

    modules = compiled("colouring")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(0)
    n, nb = 5000, 2000
    point = rng.uniform(-1, 2, (n, 3))
    args = (rng.integers(0, nb, n), np.where(rng.random(n) < .6, rng.integers(0, nb, n), -1),
            rng.integers(0, 4, n).astype(np.int8), 2, point, rng.normal(size=(n, 3)) * 1e-3,
            point[:nb] + rng.normal(size=(nb, 3)) * 1e-3, rng.uniform(5e-4, .2, nb), 1e-4,
            np.array([1.0, 1.2, 1.0]), np.array([-0.3, 0.0, 0.1]))
    for periodic in (np.zeros(3, np.int64), np.array([8, 0, 4])):
        for nlevels in (1, 3, 8):
            got = modules[0].row_cells(*args, periodic, nlevels)
            np.testing.assert_array_equal(got, colouring.row_cells(*args, periodic, nlevels))
            assert nlevels == 1 or got[:, 3].max() > 0


def test_the_compiled_sweep_order_equals_its_twin():
    """kernels/colouring.pyx's sweep_order against colouring.sweep_order: the same permutation
    (a stable sort by colour, then key) and colour ranges, with repeated keys, negative cells,
    one and several levels, no rows; a colour beyond the levels is refused by both."""
    import numpy as np
    import pytest
    from parsolve._kernels import compiled
    from parsolve.parallel import colouring

    modules = compiled("colouring")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(1)
    for n, nlevels in ((0, 1), (1, 1), (7, 2), (3000, 1), (3000, 3)):
        cells = rng.integers(-5, 5, (n, 4)).astype(np.int64)
        cells[:, 3] = rng.integers(0, nlevels, n)
        k1 = rng.integers(0, 40, n).astype(np.int64)
        k2 = rng.integers(-3, 3, n).astype(np.int64)
        for c in (cells, np.ascontiguousarray(cells[:, :3])):
            ncolours = 8 * nlevels
            got = modules[0].sweep_order(c, k1, k2, ncolours)
            twin = colouring.sweep_order(c, k1, k2, ncolours)
            for a, b in zip(got, twin):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == np.int64
    cells = np.array([[0, 0, 0, 2]], np.int64)
    for sweep_order in (modules[0].sweep_order, colouring.sweep_order):
        with pytest.raises(ValueError, match="colour 16"):
            sweep_order(cells, np.zeros(1, np.int64), np.zeros(1, np.int64), 16)
