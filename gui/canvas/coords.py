"""Rectangles as plain floats (left, top, right, bottom) and back.

The canvas's grids and the far-away painter keep thousands of rectangles as floats:
reading a ``QRectF``'s four sides with one Qt call (``getCoords``) costs a quarter of
four getters, and a big file's first paint and routing read them all.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF

#: (left, top, right, bottom)
Coords = tuple[float, float, float, float]


def coords(r: QRectF) -> Coords:
    """``r``'s left, top, right and bottom in one Qt call."""
    sides: Coords = r.getCoords()  # type: ignore[assignment]  # PySide6's stubs say object
    return sides


def rect_of(b: Coords) -> QRectF:
    """The rectangle of (left, top, right, bottom)."""
    return QRectF(b[0], b[1], b[2] - b[0], b[3] - b[1])
