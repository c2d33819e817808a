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

from collections.abc import Callable, Sequence
from functools import lru_cache
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


def _bounds(rects: Sequence[Rect]) -> np.ndarray:
    return np.array([(x, y, x + w, y + h) for x, y, w, h in rects], dtype=float).reshape(-1, 4)


def _candidates(
    size: Point, step: np.ndarray, anchors: list[Point], view: Rect | None, margin: float,
    shadow: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Centres to try, best first, and each one's tier: 0 around the edge's middle
    (and in a view right above or below it anywhere up the view); 1 around points
    further along the edge; 2 beside the step's boxes and across the whole view (where
    a label goes when the edge has no room). In a view, each slid back into it too.

    Built as a few whole arrays (the offsets around every anchor at once, every tier
    slid into the view in one clip): stacked tier by tier, the array calls cost more
    than the arithmetic, twice per step."""
    w, h = size
    ups = (h / 2 + 22.0, h / 2 + 80.0, h / 2 + 150.0)
    dys = [0.0] + [d for u in ups for d in (-u, u)]
    dxs = (0.0, -w * 0.35, w * 0.35, -w * 0.8, w * 0.8)
    offsets = np.array([(dx, dy) for dy in dys for dx in dxs])
    near = np.array(anchors)[:, None, :] + offsets  # (anchor, offset, xy)
    g = margin + 1.0
    beside: list[Point] = []
    for x0, y0, x1, y1 in step.tolist() + [[*step[:, :2].min(0), *step[:, 2:].max(0)]]:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        beside += [(x0 - g - w / 2, cy), (x1 + g + w / 2, cy),
                   (cx, y0 - g - h / 2), (cx, y1 + g + h / 2)]
    tiers = [near[0], near[1:].reshape(-1, 2), np.array(beside)]
    if view is not None:
        vx, vy, vw, vh = view
        rx, ry = w / 2 + shadow, h / 2 + shadow  # the shadow is in the view too
        lo = (vx + rx, vy + ry)
        hi = (max(lo[0], vx + vw - rx), max(lo[1], vy + vh - ry))
        ax = anchors[0][0]
        fs = (0.0, 0.25, 0.75, 1.0)
        rows = [(ax + dx, lo[1] + (hi[1] - lo[1]) * f) for f in fs for dx in dxs]
        tiers[0] = np.concatenate((tiers[0], rows))
        unslid = np.concatenate(tiers)
        slid = np.minimum(np.maximum(unslid, lo), hi)  # np.clip's arithmetic
        xs, ys = np.linspace(lo[0], hi[0], SWEEP), np.linspace(lo[1], hi[1], SWEEP)
        sweep = np.column_stack((np.tile(xs, SWEEP), np.repeat(ys, SWEEP)))
        cuts = np.cumsum([len(t) for t in tiers[:-1]])
        tiers = [np.concatenate((t, moved)) for t, moved in zip(tiers, np.split(slid, cuts),
                                                                strict=True)]
        tiers[2] = np.concatenate((tiers[2], sweep))
    spots, tier = np.concatenate(tiers), np.repeat([0, 1, 2], [len(t) for t in tiers])
    # Each spot once, where it first comes (a spot slid into the view is often where it
    # was): a later copy ranks no better, and measuring copies against every box was
    # most of placing a label in a view.
    first = np.sort(np.unique(spots[:, 0] + 1j * spots[:, 1], return_index=True)[1])
    return spots[first], tier[first]


@lru_cache(maxsize=8)
def _free_spots(
    size: Point, step_boxes: tuple[Rect, ...], anchors: tuple[Point, ...], view: Rect | None,
    shadow: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The spots to try and their tiers (:func:`_candidates`) off the step's boxes (rule
    1: a spot over either, its shadow on their margin, is out; never none: beside both
    boxes is free). They depend on neither the other boxes nor the edges: an edit that
    redraws the same step's label in the same view (a box added elsewhere) tries the
    same spots, worked out once (most of placing it). Read-only: they are shared."""
    step = _bounds(step_boxes)
    margin = max(BOX_MARGIN, shadow)
    spots, tier = _candidates(size, step, list(anchors), view, margin, shadow)
    free = ~(_hits(spots, size[0], size[1], step, margin) > 0).any(axis=1)
    spots, tier = spots[free], tier[free]
    spots.flags.writeable = tier.flags.writeable = False
    return spots, tier


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
    ``shadow``: how far the label's shadow reaches past ``size``, kept off the step's
    boxes and inside the view (another box may have a shadow on its margin)."""
    w, h = size[0] + 2 * shadow, size[1] + 2 * shadow
    pts = np.array(path, dtype=float).reshape(-1, 2)
    mid = len(pts) // 2
    order = sorted(range(len(pts)), key=lambda i: abs(i - mid))
    anchors = tuple((float(pts[i, 0]), float(pts[i, 1])) for i in order[:5])
    spots, tier = _free_spots((float(size[0]), float(size[1])),
                              tuple(tuple(r) for r in step_boxes), anchors,
                              None if view is None else tuple(view), shadow)
    if view is not None:
        vx, vy, vw, vh = view
        eps = 1e-6
        inside = ((spots[:, 0] - w / 2 >= vx - eps) & (spots[:, 0] + w / 2 <= vx + vw + eps)
                  & (spots[:, 1] - h / 2 >= vy - eps) & (spots[:, 1] + h / 2 <= vy + vh + eps))
    else:
        inside = np.ones(len(spots), dtype=bool)
    other = np.zeros((0, 4)) if boxes is None else boxes
    if len(other) and len(spots):  # only the boxes anywhere near a spot
        m = BOX_MARGIN
        lo, hi = spots.min(0), spots.max(0)
        other = other[(other[:, 0] < hi[0] + w / 2 + m) & (other[:, 2] > lo[0] - w / 2 - m)
                      & (other[:, 1] < hi[1] + h / 2 + m) & (other[:, 3] > lo[1] - h / 2 - m)]
    # sitting on the curve hides the edge it describes
    on_curve = ((np.abs(spots[:, 0:1] - pts[:, 0]) <= size[0] / 2)
                & (np.abs(spots[:, 1:2] - pts[:, 1]) <= size[1] / 2)).any(axis=1)
    area = size[0] * size[1]
    penalty = np.where(on_curve, area * 0.05, 0.0)
    # rule 2, then near the edge if anywhere there is whole in view
    group = np.where(inside, 0, 3) + tier
    best_group = group == group.min()
    # Only the best group's spots are measured: one of them free of boxes and edges is
    # the answer, and else the least covered of them (most of an edit's placing).
    covered = np.zeros(len(spots))
    covered[best_group] = _covered(spots[best_group], size[0], size[1], other, BOX_MARGIN)
    for i in np.flatnonzero(best_group & (covered == 0)).tolist():
        x, y = spots[i].tolist()
        if edges_under is not None and not on_curve[i]:
            rect = (x - size[0] / 2, y - size[1] / 2, *size)
            penalty[i] += edges_under(rect) * area * 0.02
        if penalty[i] == 0:
            return LabelSpot((x, y), _nearest(pts, x, y), bool(inside[i]), bool(inside[i]))
    # None free: the best group's least covered spot, the nearest of equals. (Ranked by
    # group first, no spot of another group can win: their boxes are not measured.)
    ax, ay = anchors[0]
    rows = np.flatnonzero(best_group)
    near = spots[rows]
    dist = np.abs(near[:, 0] - ax) + np.abs(near[:, 1] - ay)
    best = int(rows[np.lexsort((dist, covered[rows] + penalty[rows]))[0]])
    x, y = spots[best].tolist()
    whole = bool(inside[best])
    return LabelSpot((x, y), _nearest(pts, x, y), whole, whole and covered[best] == 0)


def _nearest(pts: np.ndarray, x: float, y: float) -> Point:
    """The sample of the edge nearest to ``(x, y)`` (where the leader line goes)."""
    if not len(pts):
        return (x, y)
    i = int(np.argmin(np.abs(pts[:, 0] - x) + np.abs(pts[:, 1] - y)))
    return (float(pts[i, 0]), float(pts[i, 1]))
