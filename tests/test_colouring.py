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
