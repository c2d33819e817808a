"""The canvas's background grid: faint lines, and a darker one every fifth.

The lines are one pixel wide whatever the zoom (a cosmetic pen). Without
antialiasing, as the view's cached background is painted, they are filled as
rectangles of whole device pixels: the very pixels Qt's cosmetic stroker would set
for each line, in about a third of the time (the stroker sets them one by one, and
the grid was a quarter of a repaint after each wheel step). A painter that
antialiases, or one that rotates or mirrors, is given the lines themselves.
"""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QColor, QPainter, QPen, QTransform

from ..theme import THEME
from .port_item import UNIT

#: Grid spacing (scene units): faint lines, and a darker one every fifth.
GRID_MINOR, GRID_MAJOR = 25.0, 125.0


def draw_grid(painter: QPainter, rect: QRectF) -> None:
    """The grid lines over ``rect`` (scene coordinates), each spacing only where its
    lines are far enough apart on screen."""
    zoom = painter.worldTransform().m11()
    device = painter.deviceTransform()
    exact = (not painter.testRenderHint(QPainter.RenderHint.Antialiasing)
             and device.type().value <= QTransform.TransformationType.TxScale.value
             and device.m11() > 0 and device.m22() > 0)
    for step, colour, min_px in ((GRID_MINOR * UNIT, THEME.grid_minor, 12.0),
                                 (GRID_MAJOR * UNIT, THEME.grid_major, 8.0)):
        if step * zoom < min_px:
            continue
        if exact:
            _fill_lines(painter, rect, step, colour, device)
        else:
            _stroke_lines(painter, rect, step, colour)


def _at(lo: float, hi: float, step: float) -> Iterator[float]:
    """Where the lines every ``step`` fall between ``lo`` and ``hi``."""
    v = int(lo // step) * step
    while v <= hi:
        yield v
        v += step


def _stroke_lines(painter: QPainter, rect: QRectF, step: float, colour: QColor) -> None:
    pen = QPen(colour, 1.0)
    pen.setCosmetic(True)
    painter.setPen(pen)
    top, bottom, left, right = rect.top(), rect.bottom(), rect.left(), rect.right()
    painter.drawLines([QLineF(x, top, x, bottom) for x in _at(left, right, step)]
                      + [QLineF(left, y, right, y) for y in _at(top, bottom, step)])


def _fixed(v: float) -> int:
    """A device coordinate as the cosmetic stroker takes it: 26.6 fixed point,
    truncated."""
    return int(v * 64.0)


def _fill_lines(painter: QPainter, rect: QRectF, step: float, colour: QColor,
                device: QTransform) -> None:
    """:func:`_stroke_lines`, pixel for pixel, as rectangles of device pixels.

    The stroker draws an aliased one-pixel line along x (device units) in pixel
    column ``fixed(x) >> 6``, its square caps adding half a pixel at each end: from
    row ``fixed(y0) >> 6`` up to, not including, ``(fixed(y1) + 64) >> 6``; a
    horizontal line likewise.
    """
    sx, sy, dx, dy = device.m11(), device.m22(), device.m31(), device.m32()
    top, bottom, left, right = rect.top(), rect.bottom(), rect.left(), rect.right()
    r0, r1 = _fixed(sy * top + dy) >> 6, (_fixed(sy * bottom + dy) + 64) >> 6
    c0, c1 = _fixed(sx * left + dx) >> 6, (_fixed(sx * right + dx) + 64) >> 6
    rects = [QRectF(_fixed(sx * x + dx) >> 6, r0, 1, r1 - r0) for x in _at(left, right, step)]
    rects += [QRectF(c0, _fixed(sy * y + dy) >> 6, c1 - c0, 1) for y in _at(top, bottom, step)]
    painter.save()
    # device pixels: undo what the device itself adds (its pixel ratio) to the world's
    painter.setWorldTransform(device.inverted()[0] * painter.worldTransform())
    for r in rects:
        painter.fillRect(r, colour)
    painter.restore()
