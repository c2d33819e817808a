"""The label lands where it did before placing it was made cheaper (issue 28), for every
input: :func:`gui.model.label_placement.place_label` must return what this frozen copy
of the algorithm before it returns (kept here only, as the oracle, verbatim but for its
cache), float for float, on random layouts of boxes, paths, edges and views."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model import label_placement as now
from gui.model.label_placement import LabelSpot as _Spot

Point = tuple[float, float]
Rect = tuple[float, float, float, float]
BOX_MARGIN, SWEEP, SPOTS_TOGETHER, WHOLE_TABLE = 8.0, 9, 12, 150_000


# ---- the frozen algorithm (as it was before issue 28's change) -------------------------

def _hits(centres: np.ndarray, w: float, h: float, boxes: np.ndarray, m: float) -> np.ndarray:
    """(spots x boxes) overlap areas of a ``w`` x ``h`` label centred at each row of
    ``centres`` with each box of ``boxes`` grown by ``m``."""
    if not len(boxes) or not len(centres):
        return np.zeros((len(centres), len(boxes)))
    x, y = centres[:, 0:1], centres[:, 1:2]
    ox = np.minimum(x + w / 2, boxes[:, 2] + m) - np.maximum(x - w / 2, boxes[:, 0] - m)
    oy = np.minimum(y + h / 2, boxes[:, 3] + m) - np.maximum(y - h / 2, boxes[:, 1] - m)
    return np.maximum(ox, 0.0) * np.maximum(oy, 0.0)


def _covered(centres: np.ndarray, w: float, h: float, boxes: np.ndarray, m: float) -> np.ndarray:
    """Per row of ``centres``, the area of ``boxes`` (grown by ``m``) a ``w`` x ``h``
    label centred there covers. Spots near one another are measured together against
    the boxes near them only: a label seen from far away is large in scene units and
    a view of thousands of boxes made the whole (spots x boxes) table most of a step."""
    covered = np.zeros(len(centres))
    if not len(boxes):
        return covered
    if len(centres) * len(boxes) <= WHOLE_TABLE:  # one table: no order to sort them in
        order, together = np.arange(len(centres)), len(centres)
    else:
        order, together = np.lexsort((centres[:, 0], centres[:, 1])), SPOTS_TOGETHER
    for start in range(0, len(order), together):
        rows = order[start:start + together]
        spots = centres[rows]
        (x0, y0), (x1, y1) = spots.min(0), spots.max(0)
        near = boxes[(boxes[:, 0] < x1 + w / 2 + m) & (boxes[:, 2] > x0 - w / 2 - m)
                     & (boxes[:, 1] < y1 + h / 2 + m) & (boxes[:, 3] > y0 - h / 2 - m)]
        covered[rows] = _hits(spots, w, h, near, m).sum(axis=1)
    # Rounded far below any area that matters: spots covering the same boxes tie
    # exactly, however their sums were grouped (the nearest of them wins).
    return np.round(covered, 6)


def _tiers(
    size: Point, step_boxes: tuple[Rect, ...], anchors: tuple[Point, ...], view: Rect | None,
    margin: float, shadow: float,
) -> Iterator[list[Point]]:
    """Centres to try, tier by tier, best first (a tier is made only when the one
    before it had no spot to offer): 0 around the edge's middle (and in a view right
    above or below it anywhere up the view); 1 around points further along the edge;
    2 beside the step's boxes and across the whole view (where a label goes when the
    edge has no room). In a view, each tier's spots slid back into it follow it.

    Plain floats, not arrays: a step tries a hundred spots or so, and the array calls
    around so few cost more than the arithmetic (most of a step's placing, twice)."""
    w, h = size
    ups = (h / 2 + 22.0, h / 2 + 80.0, h / 2 + 150.0)
    dys = [0.0] + [d for u in ups for d in (-u, u)]
    dxs = (0.0, -w * 0.35, w * 0.35, -w * 0.8, w * 0.8)
    offsets = [(dx, dy) for dy in dys for dx in dxs]
    lo = hi = (0.0, 0.0)
    if view is not None:
        vx, vy, vw, vh = view
        rx, ry = w / 2 + shadow, h / 2 + shadow  # the shadow is in the view too
        lo = (vx + rx, vy + ry)
        hi = (max(lo[0], vx + vw - rx), max(lo[1], vy + vh - ry))

    def slide(spots: list[Point]) -> list[Point]:
        """``spots`` slid into the view (none without one)."""
        if view is None:
            return []
        return [(min(max(x, lo[0]), hi[0]), min(max(y, lo[1]), hi[1])) for x, y in spots]

    ax, ay = anchors[0]
    first = [(ax + dx, ay + dy) for dx, dy in offsets]
    if view is not None:
        first += [(ax + dx, lo[1] + (hi[1] - lo[1]) * f) for f in (0.0, 0.25, 0.75, 1.0)
                  for dx in dxs]
    yield first + slide(first)
    along = [(x + dx, y + dy) for x, y in anchors[1:] for dx, dy in offsets]
    yield along + slide(along)
    g = margin + 1.0
    beside: list[Point] = []
    rows = [(x, y, x + bw, y + bh) for x, y, bw, bh in step_boxes]
    both = (min(r[0] for r in rows), min(r[1] for r in rows),
            max(r[2] for r in rows), max(r[3] for r in rows))
    for x0, y0, x1, y1 in [*rows, both]:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        beside += [(x0 - g - w / 2, cy), (x1 + g + w / 2, cy),
                   (cx, y0 - g - h / 2), (cx, y1 + g + h / 2)]
    if view is not None:
        xs, ys = _linspace(lo[0], hi[0], SWEEP), _linspace(lo[1], hi[1], SWEEP)
        beside += slide(beside) + [(x, y) for y in ys for x in xs]
    yield beside


def _linspace(lo: float, hi: float, n: int) -> list[float]:
    """``numpy.linspace(lo, hi, n)``, float for float (the spots must not move by a bit)."""
    step = (hi - lo) / (n - 1)
    if step == 0:
        return [i / (n - 1) * (hi - lo) + lo for i in range(n - 1)] + [hi]
    return [i * step + lo for i in range(n - 1)] + [hi]


def _free_spots(
    size: Point, step_boxes: tuple[Rect, ...], anchors: tuple[Point, ...], view: Rect | None,
    shadow: float,
) -> tuple[tuple[Point, ...], bool]:
    """The best of the spots to try (:func:`_tiers`) off the step's boxes (rule 1: a spot
    over either, its shadow on their margin, is out; never none: beside both boxes is
    free), and whether they are whole inside the view (rule 2): the first tier's whole
    in view, else the next tier's, ..., else (none is whole anywhere) the first tier's
    free ones. Only these are measured against the other boxes: one of them free of
    boxes and edges is the answer, and else the least covered of them.

    Each spot is tried once, as the first (best-tier) spot it came as: a spot slid into
    the view is often where it was. They depend on neither the other boxes nor the
    edges: an edit that redraws the same step's label in the same view (a box added
    elsewhere) tries the same spots, worked out once."""
    w, h = size
    margin = max(BOX_MARGIN, shadow)
    # each box grown by the margin (as :func:`_hits` grows it)
    grown = [(x - margin, y - margin, x + bw + margin, y + bh + margin)
             for x, y, bw, bh in step_boxes]
    pw, ph, eps = w + 2 * shadow, h + 2 * shadow, 1e-6
    seen: set[Point] = set()
    outside: tuple[Point, ...] = ()
    for tier in _tiers(size, step_boxes, anchors, view, margin, shadow):
        free = []
        for spot in tier:
            if spot in seen:
                continue
            seen.add(spot)
            x, y = spot
            left, right, top, bottom = x - w / 2, x + w / 2, y - h / 2, y + h / 2
            for x0, y0, x1, y1 in grown:  # overlapping (what _hits measures) is over
                if ((right if right < x1 else x1) - (left if left > x0 else x0) > 0
                        and (bottom if bottom < y1 else y1) - (top if top > y0 else y0) > 0):
                    break
            else:
                free.append(spot)
        if view is None:
            inside = free
        else:
            vx, vy, vw, vh = view
            inside = [(x, y) for x, y in free
                      if x - pw / 2 >= vx - eps and x + pw / 2 <= vx + vw + eps
                      and y - ph / 2 >= vy - eps and y + ph / 2 <= vy + vh + eps]
        if inside:
            return tuple(inside), True
        outside = outside or tuple(free)
    return outside, False


def place_label(
    size: Point,
    step_boxes: Sequence[Rect],
    path: Sequence[Point],
    view: Rect | None = None,
    boxes: np.ndarray | None = None,
    edges_under: Callable[[Rect], int] | None = None,
    shadow: float = 0.0,
) -> _Spot:
    """Where the centre of a label of ``size`` goes, for the step whose consumer and
    operand boxes are ``step_boxes``, on an edge sampled at ``path`` (points in order
    along it). ``view``: the rectangle the label should lie whole inside (None: no
    view yet). ``boxes``: every box to keep clear of, as rows of left, top, right,
    bottom (the step's may be among them). ``edges_under``: how many edges a
    rectangle meets (a label over edges is worse than one on bare canvas).
    ``shadow``: how far the label's shadow reaches past ``size``, kept off the step's
    boxes and inside the view (another box may have a shadow on its margin)."""
    w, h = size[0] + 2 * shadow, size[1] + 2 * shadow
    pts = [(float(x), float(y)) for x, y in path]
    mid = len(pts) // 2
    order = sorted(range(len(pts)), key=lambda i: abs(i - mid))
    anchors = tuple(pts[i] for i in order[:5])
    spots, inside = _free_spots((float(size[0]), float(size[1])),
                                tuple(tuple(r) for r in step_boxes), anchors,
                                None if view is None else tuple(view), shadow)
    other = np.zeros((0, 4)) if boxes is None else boxes
    if len(other):  # only the boxes anywhere near a spot
        m = BOX_MARGIN
        x0, y0 = min(x for x, _y in spots), min(y for _x, y in spots)
        x1, y1 = max(x for x, _y in spots), max(y for _x, y in spots)
        other = other[(other[:, 0] < x1 + w / 2 + m) & (other[:, 2] > x0 - w / 2 - m)
                      & (other[:, 1] < y1 + h / 2 + m) & (other[:, 3] > y0 - h / 2 - m)]
    covered = _covered(np.array(spots), size[0], size[1], other, BOX_MARGIN).tolist()
    hw, hh = size[0] / 2, size[1] / 2
    area = size[0] * size[1]
    def penalty(x: float, y: float, edges: bool) -> float:
        """Sitting on the curve hides the edge it describes; over edges (``edges``:
        counted, off the curve) is worse than bare canvas."""
        if any(abs(x - px) <= hw and abs(y - py) <= hh for px, py in pts):
            return area * 0.05
        if edges and edges_under is not None:
            return edges_under((x - hw, y - hh, *size)) * area * 0.02
        return 0.0

    penalties = {}
    for i, (x, y) in enumerate(spots):
        if covered[i] == 0:
            penalties[i] = penalty(x, y, edges=True)
            if penalties[i] == 0:
                return _Spot((x, y), _nearest(pts, x, y), inside, inside)
    # None free: the least covered spot, the nearest of equals.
    penalty_of = [penalties[i] if i in penalties else penalty(x, y, edges=False)
                  for i, (x, y) in enumerate(spots)]
    ax, ay = anchors[0]
    best = min(range(len(spots)), key=lambda i: (covered[i] + penalty_of[i],
                                                 abs(spots[i][0] - ax) + abs(spots[i][1] - ay)))
    x, y = spots[best]
    return _Spot((x, y), _nearest(pts, x, y), inside, inside and covered[best] == 0)


def _nearest(pts: list[Point], x: float, y: float) -> Point:
    """The sample of the edge nearest to ``(x, y)`` (where the leader line goes)."""
    if not pts:
        return (x, y)
    return min(pts, key=lambda p: abs(p[0] - x) + abs(p[1] - y))


# ---- the property ----------------------------------------------------------------------

# Coordinates on a coarse grid as well as anywhere: boxes that touch, spots that tie and
# labels that end exactly on a box's margin are where a cheaper test could differ.
coord = st.floats(-2000, 2000, allow_nan=False) | st.integers(-80, 80).map(lambda k: k * 25.0)
extent = st.floats(20, 600, allow_nan=False) | st.integers(1, 24).map(lambda k: k * 25.0)
rect = st.tuples(coord, coord, extent, extent)
span = st.floats(20, 4000, allow_nan=False)  # an edge's bounds: often across many spots


def _rows(rects: Sequence[Rect]) -> np.ndarray:
    return np.array([(x, y, x + w, y + h) for x, y, w, h in rects]).reshape(-1, 4)


def _counter(edges: Sequence[Rect]) -> Callable[[Rect], int]:
    """How many of ``edges`` (their bounding rectangles) a rectangle meets, as the
    scene's edge grid answers."""
    rows = _rows(edges)

    def edges_under(r: Rect) -> int:
        x, y, w, h = r
        return int(((rows[:, 0] <= x + w) & (rows[:, 2] >= x)
                    & (rows[:, 1] <= y + h) & (rows[:, 3] >= y)).sum())
    return edges_under


@settings(max_examples=400, deadline=None)
@given(
    step=st.lists(rect, min_size=1, max_size=2), size=st.tuples(extent, extent),
    shadow=st.floats(0, 20) | st.just(0.0),
    path=st.lists(st.tuples(coord, coord), min_size=1, max_size=9),
    others=st.lists(rect, max_size=16), with_step=st.booleans(), view=st.none() | rect,
    edges=st.none() | st.lists(st.tuples(coord, coord, span, span), max_size=8),
    crowd=st.integers(0, 2**32 - 1), crowded=st.sampled_from((0, 0, 40, 3000)),
)
def test_the_label_lands_where_the_frozen_algorithm_puts_it(  # noqa: PLR0913
    step, size, shadow, path, others, with_step, view, edges, crowd, crowded,  # noqa: ANN001
) -> None:
    """Same spot, anchor and flags, float for float: a few boxes or thousands (where the
    spots are measured in groups), with and without the step's own boxes among them,
    edges to count or none, a view or none."""
    rng = np.random.default_rng(crowd)
    corners = rng.uniform(-3000, 3000, (crowded, 2)).round(rng.integers(0, 3))
    many = np.hstack((corners, corners + rng.uniform(20, 400, (crowded, 2))))
    boxes = np.vstack((_rows([*step, *others] if with_step else others), many))
    under = None if edges is None else _counter(edges)
    expected = place_label(size, step, path, view, boxes, under, shadow)
    assert now.place_label(size, step, path, view, boxes, under, shadow) == expected
    now._free_spots.cache_clear()  # (and worked out afresh)
    assert now.place_label(size, step, path, view, boxes, under, shadow) == expected
    assert now.place_label(size, step, path, view, None, under, shadow) == place_label(
        size, step, path, view, None, under, shadow)


@settings(max_examples=60, deadline=None)
@given(
    step=st.lists(rect, min_size=1, max_size=2), size=st.tuples(extent, extent),
    path=st.lists(st.tuples(coord, coord), min_size=1, max_size=9),
    others=st.lists(rect, max_size=16), view=st.none() | rect,
    odd=st.lists(st.tuples(*[coord | st.sampled_from((np.inf, -np.inf, np.nan))] * 4),
                 min_size=1, max_size=4),
)
def test_boxes_not_finite_are_weighed_as_the_frozen_algorithm_weighs_them(  # noqa: PLR0913
    step, size, path, others, view, odd,  # noqa: ANN001
) -> None:
    """A box with an edge at infinity (or none) among the others: the spots are
    measured against every box, as they were."""
    boxes = np.vstack((_rows(others), np.array(odd, dtype=float)))
    with np.errstate(invalid="ignore"):
        expected = place_label(size, step, path, view, boxes, None, 3.0)
        assert now.place_label(size, step, path, view, boxes, None, 3.0) == expected
