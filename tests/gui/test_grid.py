"""The background grid filled as device pixels sets exactly the pixels its cosmetic
lines would: at fractional zooms and offsets, over partial rectangles, clipped or
not, at several device pixel ratios."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QTransform

from gui.canvas import grid
from gui.theme import THEME

W, H = 300, 200


def _render(draw, zoom: float, offset: tuple[float, float], area: QRectF,  # noqa: ANN001
            ratio: float, clip: bool, antialiased: bool = False) -> QImage:
    image = QImage(int(W * ratio), int(H * ratio), QImage.Format.Format_RGB32)
    image.setDevicePixelRatio(ratio)
    image.fill(THEME.background)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialiased)
    if clip:
        painter.setClipRect(area.toAlignedRect())
    transform = QTransform(zoom, 0, 0, zoom, *offset)
    painter.setTransform(transform)
    draw(painter, transform.inverted()[0].mapRect(area))
    painter.end()
    return image


def _lines(painter: QPainter, rect: QRectF) -> None:
    """The grid as cosmetic lines, every spacing (the painter's own rendering)."""
    for step, colour in ((grid.GRID_MINOR, THEME.grid_minor), (grid.GRID_MAJOR, THEME.grid_major)):
        grid._stroke_lines(painter, rect, step, colour)


def _filled(painter: QPainter, rect: QRectF) -> None:
    for step, colour in ((grid.GRID_MINOR, THEME.grid_minor), (grid.GRID_MAJOR, THEME.grid_major)):
        grid._fill_lines(painter, rect, step, colour, painter.deviceTransform())


@pytest.mark.parametrize("ratio", [1.0, 1.25, 1.5, 2.0])
def test_filled_grid_is_the_lines_pixel_for_pixel(qapp, ratio: float) -> None:  # noqa: ANN001
    rng = random.Random(7)
    for _ in range(150):
        zoom = rng.choice([1.0, 1.15, 1.15**2, 1 / 1.15, 2.0, rng.uniform(0.5, 4.0)])
        offset = (rng.uniform(-20000, 20000), rng.uniform(-20000, 20000))
        if rng.random() < 0.3:
            offset = (float(round(offset[0])), float(round(offset[1])))
        area = QRectF(0, 0, W, H) if rng.random() < 0.5 else QRectF(
            rng.uniform(-5, W), rng.uniform(-5, H), rng.uniform(0, W), rng.uniform(0, H))
        clip = rng.random() < 0.5
        lines = _render(_lines, zoom, offset, area, ratio, clip)
        filled = _render(_filled, zoom, offset, area, ratio, clip)
        assert filled == lines, (zoom, offset, area, clip)


def test_an_antialiasing_painter_is_given_the_lines(qapp) -> None:  # noqa: ANN001
    """Antialiased cosmetic lines at a fractional zoom blend over two pixels: no
    rectangle of whole pixels is that, so such a painter strokes them."""
    area = QRectF(0, 0, W, H)
    args = (1.15, (-101.3, -57.7), area, 1.0, False, True)
    drawn = _render(grid.draw_grid, *args)
    assert drawn == _render(_lines, *args)
    assert drawn != _render(_filled, *args)
