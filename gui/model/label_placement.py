"""Where the active edge's label goes: near its edge, never over the step's two boxes.

A teacher points at the consumer and operand boxes while the label says what flows
between them; a label over either box hides the very numbers being explained (it
did, at some steps of an imported two-layer tanh network in presentation mode). One
pure function decides instead (no Qt: rectangles are ``(x, y, w, h)``, other boxes
rows of ``left, top, right, bottom``), in this order of importance:

1. never over the step's two boxes (always possible: beside them);
2. whole inside the visible canvas, when it can be there without rule 1 broken;
3. over as few other boxes, then edges, as can be, off the curve it describes;
4. as near the edge's middle as that allows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

import numpy as np

from .camera import Rect

#: Room kept between the label and any box (scene units).
BOX_MARGIN = 8.0
#: Rows and columns of spots tried across the whole view when none near the edge fits.
SWEEP = 9
#: How many spots (neighbours in reading order) are measured against their boxes at once,
#: when the whole (spots x boxes) table has more than :data:`WHOLE_TABLE` cells (a few
#: hundred spots over a few hundred boxes, a 200-node graph seen whole, is one table:
#: in groups, the loop cost twice the table's arithmetic).
SPOTS_TOGETHER, WHOLE_TABLE = 12, 150_000

Point = tuple[float, float]


class LabelSpot(NamedTuple):
    """The label's centre, the point of the edge its leader line goes to, whether the
    label there is whole inside the view, and whether it also covers no box at all."""

    centre: Point
    anchor: Point
    whole: bool
    clear: bool


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
    if not len(boxes):
        return np.zeros(len(centres))
    if len(centres) * len(boxes) <= WHOLE_TABLE:  # one table: no order to sort them in
        return np.round(_sums(centres, w, h, boxes, m), 6)
    covered = np.zeros(len(centres))
    order = np.lexsort((centres[:, 0], centres[:, 1]))
    for start in range(0, len(order), SPOTS_TOGETHER):
        rows = order[start:start + SPOTS_TOGETHER]
        covered[rows] = _sums(centres[rows], w, h, boxes, m)
    # Rounded far below any area that matters: spots covering the same boxes tie
    # exactly, however their sums were grouped (the nearest of them wins).
    return np.round(covered, 6)


def _sums(spots: np.ndarray, w: float, h: float, boxes: np.ndarray, m: float) -> np.ndarray:
    """:func:`_covered` for spots measured together, against the boxes near them only."""
    (x0, y0), (x1, y1) = spots.min(0), spots.max(0)
    near = boxes[_within(boxes, x0 - w / 2 - m, y0 - h / 2 - m, x1 + w / 2 + m, y1 + h / 2 + m)]
    return _hits(spots, w, h, near, m).sum(axis=1)


def _within(
    rows: np.ndarray, left: float, top: float, right: float, bottom: float,
) -> np.ndarray:
    """Which of ``rows`` (boxes) reach inside ``left < x < right``, ``top < y < bottom``."""
    return ((rows[:, 0] < right) & (rows[:, 2] > left)
            & (rows[:, 1] < bottom) & (rows[:, 3] > top))


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
        (x0, y0), (x1, y1) = lo, hi  # (as min(max(x, x0), x1) does, without the calls)
        return [(x1 if x1 < (x := x0 if x0 > px else px) else x,
                 y1 if y1 < (y := y0 if y0 > py else py) else y) for px, py in spots]

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


@lru_cache(maxsize=8)
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
    hw, hh = w / 2, h / 2  # (halved once: the same floats as halving per spot)
    seen: set[Point] = set()
    outside: tuple[Point, ...] = ()
    for tier in _tiers(size, step_boxes, anchors, view, margin, shadow):
        free = []
        for spot in tier:
            if spot in seen:
                continue
            seen.add(spot)
            x, y = spot
            left, right, top, bottom = x - hw, x + hw, y - hh, y + hh
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
            vl, vt, vr, vb = vx - eps, vy - eps, vx + vw + eps, vy + vh + eps
            pw2, ph2 = pw / 2, ph / 2
            inside = [(x, y) for x, y in free
                      if x - pw2 >= vl and x + pw2 <= vr and y - ph2 >= vt and y + ph2 <= vb]
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
) -> LabelSpot:
    """Where the centre of a label of ``size`` goes, for the step whose consumer and
    operand boxes are ``step_boxes``, on an edge sampled at ``path`` (points in order
    along it). ``view``: the rectangle the label should lie whole inside (None: no
    view yet). ``boxes``: every box to keep clear of, as rows of left, top, right,
    bottom (the step's may be among them). ``edges_under``: how many edges a
    rectangle meets (a label over edges is worse than one on bare canvas).
    ``boxes`` is read as a value (their order by left edge is kept with the last
    array handed, :class:`_ByLeft`): other boxes come as a new array, as the scene
    hands one when a box moves, never as the same array changed in place.
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
    at = np.fromiter(chain.from_iterable(spots), float, 2 * len(spots)).reshape(-1, 2)
    other = _near(boxes, at, w, h, BOX_MARGIN)
    covered = _covered(at, size[0], size[1], other, BOX_MARGIN)
    hw, hh = size[0] / 2, size[1] / 2
    area = size[0] * size[1]
    # Sitting on the curve hides the edge it describes (worse than covering a box
    # as large as a twentieth of the label); over edges, off the curve, is worse
    # than bare canvas. All spots at once: a step tries dozens, most covering a box.
    curve = np.fromiter(chain.from_iterable(pts), float, 2 * len(pts)).reshape(-1, 2)
    on_curve = ((np.abs(at[:, 0:1] - curve[:, 0]) <= hw)
                & (np.abs(at[:, 1:2] - curve[:, 1]) <= hh)).any(axis=1)
    penalty = np.where(on_curve, area * 0.05, 0.0)
    for i in np.flatnonzero(covered == 0).tolist():  # (in order: the first free one wins)
        if not on_curve[i] and edges_under is not None:
            x, y = spots[i]
            penalty[i] = edges_under((x - hw, y - hh, *size)) * area * 0.02
        if penalty[i] == 0:
            x, y = spots[i]
            return LabelSpot((x, y), _nearest(pts, x, y), inside, inside)
    # None free: the least covered spot, the nearest of equals (the first of those).
    cost = covered + penalty
    ax, ay = anchors[0]
    least = np.flatnonzero(cost == cost.min()).tolist()
    best = least[0] if len(least) == 1 else least[int(np.argmin(
        np.abs(at[least, 0] - ax) + np.abs(at[least, 1] - ay)))]
    x, y = spots[best]
    return LabelSpot((x, y), _nearest(pts, x, y), inside, inside and covered[best] == 0)


def _near(boxes: np.ndarray | None, spots: np.ndarray, w: float, h: float, m: float) -> np.ndarray:
    """The rows of ``boxes`` (in their order) that a ``w`` x ``h`` label centred at
    one of ``spots`` could meet, each box grown by ``m``: only they can be under it.
    Only the boxes whose left edges lie in reach are tested (:class:`_ByLeft`): a step
    places its label twice among thousands of boxes, a few dozen of them near."""
    if boxes is None or not len(boxes):
        return np.zeros((0, 4))
    (x0, y0), (x1, y1) = spots.min(axis=0), spots.max(axis=0)
    left, right = x0 - w / 2 - m, x1 + w / 2 + m
    return _ByLeft.of(boxes).near(left, y0 - h / 2 - m, right, y1 + h / 2 + m)


class _ByLeft(NamedTuple):
    """An array of boxes with the order of their left edges, made once per array (the
    scene hands the same array until a box moves): which boxes can reach across a
    span is two binary searches instead of a test of every box."""

    boxes: np.ndarray
    order: np.ndarray  # rows by left edge
    sorted: np.ndarray  # the rows in that order
    lefts: np.ndarray  # their left edges (contiguous: searched twice a placing)
    widest: float  # the widest box (nan: some box is not finite, every row is tried)

    @staticmethod
    def of(boxes: np.ndarray) -> _ByLeft:
        last = _BY_LEFT[0]
        if last is None or last.boxes is not boxes:
            order = np.argsort(boxes[:, 0], kind="stable")
            finite = np.isfinite(boxes[:, [0, 2]]).all()
            widest = float((boxes[:, 2] - boxes[:, 0]).max()) if finite else math.nan
            rows = boxes[order]
            last = _BY_LEFT[0] = _ByLeft(boxes, order, rows, rows[:, 0].copy(), widest)
        return last

    def near(self, left: float, top: float, right: float, bottom: float) -> np.ndarray:
        """The rows (in their order) that reach inside ``left < x < right``,
        ``top < y < bottom``."""
        if math.isnan(self.widest):
            return self.boxes[_within(self.boxes, left, top, right, bottom)]
        # a box's right edge is at most the widest width past its left (with room for
        # the rounding of widths: a box too many is tested, never one too few)
        reach = max(self.widest, 0.0) + 1.0 + 1e-9 * (abs(left) + abs(self.widest))
        lo, hi = np.searchsorted(self.lefts, (left - reach, right)).tolist()
        keep = _within(self.sorted[lo:hi], left, top, right, bottom)
        return self.boxes[np.sort(self.order[lo:hi][keep])]


#: The last array of boxes, in left-edge order (one slot: the scene's current boxes).
_BY_LEFT: list[_ByLeft | None] = [None]


def _nearest(pts: list[Point], x: float, y: float) -> Point:
    """The sample of the edge nearest to ``(x, y)`` (where the leader line goes)."""
    if not pts:
        return (x, y)
    return min(pts, key=lambda p: abs(p[0] - x) + abs(p[1] - y))
