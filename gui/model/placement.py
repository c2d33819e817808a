"""Where a new node box goes: under the pointer, fully on screen, on free canvas.

A node dropped near the canvas edge used to land half outside the view, and
double-clicking a palette entry twice stacked both boxes on one spot, hiding the
first. One pure function decides instead (no Qt: rectangles are ``(x, y, w, h)``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .camera import Rect

#: Space kept between a new box and the view's edge or another box (scene units).
GAP = 16.0
#: How many places below and beside the wanted one are tried before giving up.
TRIES = 12


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _clamp(x: float, y: float, size: tuple[float, float], visible: Rect) -> tuple[float, float]:
    w, h = size
    vx, vy, vw, vh = visible
    x = min(max(x, vx + GAP), max(vx + GAP, vx + vw - w - GAP))
    y = min(max(y, vy + GAP), max(vy + GAP, vy + vh - h - GAP))
    return x, y


def place_box(
    want: tuple[float, float],
    size: tuple[float, float],
    visible: Rect,
    boxes: Sequence[Rect],
) -> tuple[float, float]:
    """Top-left corner for a new box of ``size`` wanted at ``want``: moved inside the
    ``visible`` scene rectangle, then down (or up, or aside) until it covers none of
    ``boxes``; the clamped wanted place when the view is full."""
    w, h = size
    start = _clamp(*want, size, visible)
    steps = [(0.0, 0.0)]
    for k in range(1, TRIES + 1):
        steps += [(0.0, k * (h + GAP)), (0.0, -k * (h + GAP)), (k * (w + GAP), 0.0)]
    for dx, dy in steps:
        x, y = _clamp(start[0] + dx, start[1] + dy, size, visible)
        grown = (x - GAP / 2, y - GAP / 2, w + GAP, h + GAP)
        if not any(_overlaps(grown, b) for b in boxes):
            return x, y
    return start
