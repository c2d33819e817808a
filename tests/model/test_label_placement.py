"""The active edge's label, placed by the pure :func:`gui.model.label_placement.place_label`:
never over the step's two boxes, whole in the view when it can be (headless, no Qt)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model.label_placement import (
    BOX_MARGIN,
    WHOLE_TABLE,
    _covered,
    _free_spots,
    _hits,
    _tiers,
    place_label,
)

coord = st.floats(-2000, 2000, allow_nan=False)
extent = st.floats(20, 600, allow_nan=False)
rect = st.tuples(coord, coord, extent, extent)


def _meets(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _label(centre: tuple[float, float], size: tuple[float, float], shadow: float):  # noqa: ANN202
    w, h = size[0] + 2 * shadow, size[1] + 2 * shadow
    return (centre[0] - w / 2, centre[1] - h / 2, w, h)


def _bounds(rects: list[tuple[float, float, float, float]]) -> np.ndarray:
    return np.array([(x, y, x + w, y + h) for x, y, w, h in rects]).reshape(-1, 4)


@settings(max_examples=150, deadline=None)
@given(
    a=rect, b=rect, size=st.tuples(extent, extent), shadow=st.floats(0, 20),
    path=st.lists(st.tuples(coord, coord), min_size=1, max_size=9),
    others=st.lists(rect, max_size=12), view=st.none() | rect,
)
def test_the_label_never_covers_the_step_boxes(a, b, size, shadow, path, others, view) -> None:  # noqa: ANN001
    spot = place_label(size, [a, b], path, view, _bounds([a, b, *others]), shadow=shadow)
    label = _label(spot.centre, size, shadow)
    assert not _meets(label, a) and not _meets(label, b)
    if spot.whole and view is not None:
        vx, vy, vw, vh = view
        assert label[0] >= vx - 1e-6 and label[0] + label[2] <= vx + vw + 1e-6
        assert label[1] >= vy - 1e-6 and label[1] + label[3] <= vy + vh + 1e-6


@settings(max_examples=150, deadline=None)
@given(
    a=rect, b=rect, size=st.tuples(extent, extent), shadow=st.floats(0, 20),
    path=st.lists(st.tuples(coord, coord), min_size=1, max_size=9),
    others=st.lists(rect, max_size=12), room=st.floats(0, 400), above=st.floats(0, 400),
)
def test_the_label_is_whole_in_a_view_with_room_beside_the_boxes(  # noqa: PLR0913
    a, b, size, shadow, path, others, room, above,  # noqa: ANN001
) -> None:
    # a view holding both boxes and, to their right, room for the label
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    need_w = size[0] + 2 * max(BOX_MARGIN, shadow) + 2 * shadow + 2
    height = max(y1 - y0, size[1] + 2 * shadow) + above
    view = (x0, y0 - above, x1 - x0 + need_w + room, height + above)
    spot = place_label(size, [a, b], path, view, _bounds([a, b, *others]), shadow=shadow)
    label = _label(spot.centre, size, shadow)
    assert spot.whole
    assert not _meets(label, a) and not _meets(label, b)
    vx, vy, vw, vh = view
    assert label[0] >= vx - 1e-6 and label[0] + label[2] <= vx + vw + 1e-6
    assert label[1] >= vy - 1e-6 and label[1] + label[3] <= vy + vh + 1e-6


def test_a_short_edge_between_touching_boxes_puts_the_label_beside_them() -> None:
    # the edge's middle lies between two boxes 20 apart: a 300x80 label there would
    # cover one; it goes where it covers neither, above or below the edge
    a, b = (0.0, 0.0, 200.0, 400.0), (220.0, 0.0, 200.0, 400.0)
    path = [(200.0 + t, 200.0) for t in range(0, 21, 5)]
    view = (-800.0, -300.0, 2000.0, 1000.0)
    spot = place_label((300.0, 80.0), [a, b], path, view, _bounds([a, b]), shadow=5.0)
    label = _label(spot.centre, (300.0, 80.0), 5.0)
    assert spot.whole and spot.clear
    assert not _meets(label, a) and not _meets(label, b)
    assert abs(spot.centre[0] - 210.0) < 1e-6 and not 0 < spot.centre[1] < 400
    assert spot.anchor in path  # the leader goes to the edge


def test_a_clean_spot_at_the_edges_middle_is_kept() -> None:
    # nothing in the way: the label sits just off the edge's middle, and says it is clear
    a, b = (0.0, 0.0, 100.0, 60.0), (600.0, 0.0, 100.0, 60.0)
    path = [(100.0 + 50 * i, 30.0) for i in range(11)]
    spot = place_label((120.0, 40.0), [a, b], path, (-500.0, -500.0, 2000.0, 1000.0),
                       _bounds([a, b]))
    assert spot.clear and abs(spot.centre[0] - 350.0) < 1e-6
    assert abs(spot.centre[1] - 30.0) == 20.0 + 22.0  # half its height plus the gap


def test_spots_measured_in_groups_cover_what_the_whole_table_says() -> None:
    """Past :data:`WHOLE_TABLE` cells, spots are measured in groups against the boxes
    near each group only: each spot's covered area must be the whole table's."""
    rng = np.random.default_rng(7)
    spots = rng.uniform(-3000, 3000, (480, 2))
    corners = rng.uniform(-3000, 3000, (400, 2))
    boxes = np.hstack((corners, corners + rng.uniform(20, 300, (400, 2))))
    assert len(spots) * len(boxes) > WHOLE_TABLE
    for w, h in ((160.0, 60.0), (2500.0, 900.0)):  # a label seen from near, and from far
        whole = _hits(spots, w, h, boxes, BOX_MARGIN).sum(axis=1)
        assert np.allclose(_covered(spots, w, h, boxes, BOX_MARGIN), whole, rtol=0, atol=1e-5)


def test_each_candidate_spot_is_tried_once_in_its_best_tier() -> None:
    """A spot slid into the view is often where it was: it is measured once, as the
    first (best-tier) spot it came as, and the spots keep their order; a tier with a
    spot whole in view and off the step's boxes is the only one measured."""
    step = ((0.0, 0.0, 160.0, 60.0), (300.0, 200.0, 160.0, 60.0))
    anchors = ((230.0, 130.0), (200.0, 110.0), (260.0, 150.0), (170.0, 90.0), (290.0, 170.0))
    view = (-500.0, -400.0, 1500.0, 1000.0)
    spots, inside = _free_spots((160.0, 60.0), step, anchors, view, 4.0)
    _free_spots.cache_clear()
    assert inside and len(set(spots)) == len(spots)
    first, along, beside = _tiers((160.0, 60.0), step, anchors, view, BOX_MARGIN, 4.0)
    assert len(set(first)) < len(first)  # copies slid to where they were
    assert list(spots) == [p for i, p in enumerate(first) if p not in first[:i] and p in spots]
    assert along and beside  # (made, not measured)


@settings(max_examples=60, deadline=None)
@given(
    a=rect, b=rect, size=st.tuples(extent, extent), shadow=st.floats(0, 20),
    path=st.lists(st.tuples(coord, coord), min_size=1, max_size=9),
    others=st.lists(rect, max_size=12), added=rect, view=st.none() | rect,
)
def test_the_same_step_in_the_same_view_tries_its_spots_worked_out_once(  # noqa: PLR0913
    a, b, size, shadow, path, others, added, view,  # noqa: ANN001
) -> None:
    """A box added elsewhere (an edit) changes what the spots cover, not the spots: the
    second placing takes them as worked out, and lands where a placing from scratch does."""
    place_label(size, [a, b], path, view, _bounds([a, b, *others]), shadow=shadow)
    hits = _free_spots.cache_info().hits
    boxes = _bounds([a, b, *others, added])
    again = place_label(size, [a, b], path, view, boxes, shadow=shadow)
    assert _free_spots.cache_info().hits == hits + 1
    _free_spots.cache_clear()
    assert again == place_label(size, [a, b], path, view, boxes, shadow=shadow)
