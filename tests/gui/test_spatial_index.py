"""The spatial index costs O(edge length / cell) at most, with a cap (issue 25, item 14),
and finds exactly what a scan of every rectangle finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QRectF

from gui.canvas.scene import MAX_CELLS, RectGrid, overlaps

COORD = st.floats(-2e5, 2e5, allow_nan=False)


def _rect(x0: float, y0: float, x1: float, y1: float) -> QRectF:
    return QRectF(x0, y0, x1 - x0, y1 - y0).normalized()


def test_a_far_apart_edge_touches_at_most_the_cap_of_cells() -> None:
    grid: RectGrid[str] = RectGrid(cell=768.0)
    grid.put("long", _rect(-1e5, -1e5, 1e5, 1e5))  # ~68,000 cells as a bounding box
    assert sum(len(b) for b in grid._cells.values()) <= MAX_CELLS
    assert grid.query(_rect(0, 0, 10, 10)) == ["long"]
    assert grid.query(_rect(2e5, 2e5, 2e5 + 10, 2e5 + 10)) == []
    grid.put("long", _rect(0, 0, 10, 10))  # moved back into the cells
    assert grid.query(_rect(5, 5, 6, 6)) == ["long"]
    grid.remove("long")
    assert grid.query(_rect(-1e6, -1e6, 1e6, 1e6)) == [] and not grid._cells


@settings(max_examples=60, deadline=None)
@given(
    rects=st.lists(st.tuples(COORD, COORD, COORD, COORD), min_size=1, max_size=12),
    area=st.tuples(COORD, COORD, COORD, COORD),
    drop=st.integers(0, 11),
)
def test_queries_find_exactly_what_a_scan_finds(rects, area, drop) -> None:
    grid: RectGrid[int] = RectGrid(cell=768.0)
    for k, r in enumerate(rects):
        grid.put(k, _rect(*r))
    grid.put(0, _rect(*rects[-1]))  # a move
    grid.remove(drop)
    q = _rect(*area)
    box = (q.left(), q.top(), q.right(), q.bottom())
    expected = {k for k, b in grid.bounds.items() if overlaps(b, *box)}
    assert set(grid.query(q)) == expected
    for k in expected:
        assert grid.any_except(*box, exclude=(k,)) == bool(expected - {k})
    assert sum(len(b) for b in grid._cells.values()) <= MAX_CELLS * len(grid.bounds)


@settings(max_examples=60, deadline=None)
@given(rects=st.lists(st.tuples(COORD, COORD, COORD, COORD), max_size=40),
       cell=st.sampled_from([256.0, 768.0]))
def test_filing_many_rectangles_at_once_files_what_filing_each_does(rects, cell) -> None:
    import numpy as np

    from gui.canvas.coords import coords

    rows = [coords(_rect(*r)) for r in rects]
    keys = list(range(len(rows)))
    one_by_one: RectGrid[int] = RectGrid(cell=cell)
    for k, row in zip(keys, rows, strict=True):
        one_by_one.put_bounds(k, row)
    at_once: RectGrid[int] = RectGrid(cell=cell)
    at_once.put_many(keys, np.array(rows, dtype=float).reshape(-1, 4))
    assert list(at_once.bounds.items()) == list(one_by_one.bounds.items())
    assert at_once._spans == one_by_one._spans and at_once._long == one_by_one._long
    assert _cell_sets(at_once) == _cell_sets(one_by_one)
    assert at_once.bounds_array().tolist() == one_by_one.bounds_array().tolist()
    at_once.put_many([0, 99], np.array([[0.0, 0.0, 5.0, 5.0], [1.0, 1.0, 2.0, 2.0]]))
    one_by_one.put_bounds(0, (0.0, 0.0, 5.0, 5.0))
    one_by_one.put_bounds(99, (1.0, 1.0, 2.0, 2.0))  # into a grid holding some: one by one
    assert _cell_sets(at_once) == _cell_sets(one_by_one) and at_once.bounds == one_by_one.bounds


def _cell_sets(grid: RectGrid[int]) -> dict[tuple[int, int], set[int]]:
    """Each cell's keys (filed at once, a cell keeps them as a tuple until it changes)."""
    return {cell: set(keys) for cell, keys in grid._cells.items()}
