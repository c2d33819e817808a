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
from typing import NamedTuple

import numpy as np

from .camera import Rect

#: Room kept between the label and any box (scene units).
BOX_MARGIN = 8.0
#: Rows and columns of spots tried across the whole view when none near the edge fits.
SWEEP = 9

Point = tuple[float, float]


class LabelSpot(NamedTuple):
    """The label's centre, the point of the edge its leader line goes to, and whether
    the label there covers no box at all and is whole inside the view."""

    centre: Point
    anchor: Point
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


def _bounds(rects: Sequence[Rect]) -> np.ndarray:
    return np.array([(x, y, x + w, y + h) for x, y, w, h in rects], dtype=float).reshape(-1, 4)


def _candidates(
    size: Point, step: np.ndarray, anchors: list[Point], view: Rect | None
) -> np.ndarray:
    """Centres to try, best first: around the edge's middle (then further along it),
    beside the step's boxes, and (in a view) across it and slid back into it."""
    w, h = size
    ups = (h / 2 + 22.0, h / 2 + 80.0, h / 2 + 150.0)
    dys = [0.0] + [d for u in ups for d in (-u, u)]
    dxs = (0.0, -w * 0.35, w * 0.35, -w * 0.8, w * 0.8)
    spots = [(ax + dx, ay + dy) for ax, ay in anchors for dy in dys for dx in dxs]
    g = BOX_MARGIN + 1.0
    for x0, y0, x1, y1 in step.tolist() + [[*step[:, :2].min(0), *step[:, 2:].max(0)]]:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        spots += [(x0 - g - w / 2, cy), (x1 + g + w / 2, cy),
                  (cx, y0 - g - h / 2), (cx, y1 + g + h / 2)]
    out = np.array(spots, dtype=float)
    if view is None:
        return out
    vx, vy, vw, vh = view
    lo = (vx + w / 2, vy + h / 2)
    hi = (max(lo[0], vx + vw - w / 2), max(lo[1], vy + vh - h / 2))
    fx, fy = np.meshgrid(np.linspace(lo[0], hi[0], SWEEP), np.linspace(lo[1], hi[1], SWEEP))
    sweep = np.column_stack((fx.ravel(), fy.ravel()))
    slid = np.clip(out, lo, hi)
    return np.vstack((out, slid, sweep))


def place_label(
    size: Point,
    step_boxes: Sequence[Rect],
    path: Sequence[Point],
    view: Rect | None = None,
    boxes: np.ndarray | None = None,
    edges_under: Callable[[Rect], int] | None = None,
) -> LabelSpot:
    """Where the centre of a label of ``size`` goes, for the step whose consumer and
    operand boxes are ``step_boxes``, on an edge sampled at ``path`` (points in order
    along it). ``view``: the rectangle the label should lie whole inside (None: no
    view yet). ``boxes``: every box to keep clear of, as rows of left, top, right,
    bottom (the step's may be among them). ``edges_under``: how many edges a
    rectangle meets (a label over edges is worse than one on bare canvas)."""
    w, h = size
    step = _bounds(step_boxes)
    pts = np.array(path, dtype=float).reshape(-1, 2)
    mid = len(pts) // 2
    order = sorted(range(len(pts)), key=lambda i: abs(i - mid))
    anchors = [(float(pts[i, 0]), float(pts[i, 1])) for i in order[:5]]
    spots = _candidates(size, step, anchors, view)
    # rule 1: a spot over either step box is out
    free = ~(_hits(spots, w, h, step, BOX_MARGIN) > 0).any(axis=1)
    spots = spots[free]  # never empty: beside the two boxes' union is always free
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
    covered = _hits(spots, w, h, other, BOX_MARGIN).sum(axis=1)
    # sitting on the curve hides the edge it describes
    on_curve = np.zeros(len(spots), dtype=bool)
    for px, py in pts.tolist():
        on_curve |= (np.abs(spots[:, 0] - px) <= w / 2) & (np.abs(spots[:, 1] - py) <= h / 2)
    penalty = np.where(on_curve, w * h * 0.05, 0.0)
    for i in np.flatnonzero(inside & (covered == 0)).tolist():
        x, y = spots[i].tolist()
        if edges_under is not None and not on_curve[i]:
            penalty[i] += edges_under((x - w / 2, y - h / 2, w, h)) * w * h * 0.02
        if penalty[i] == 0:
            return LabelSpot((x, y), _nearest(pts, x, y), True)
    ax, ay = anchors[0]
    dist = np.abs(spots[:, 0] - ax) + np.abs(spots[:, 1] - ay)
    best = int(np.lexsort((dist, covered + penalty, ~inside))[0])
    x, y = spots[best].tolist()
    clear = bool(inside[best] and covered[best] == 0)
    return LabelSpot((x, y), _nearest(pts, x, y), clear)


def _nearest(pts: np.ndarray, x: float, y: float) -> Point:
    """The sample of the edge nearest to ``(x, y)`` (where the leader line goes)."""
    if not len(pts):
        return (x, y)
    i = int(np.argmin(np.abs(pts[:, 0] - x) + np.abs(pts[:, 1] - y)))
    return (float(pts[i, 0]), float(pts[i, 1]))
