"""A wheel gesture draws the background uncached (the boxes' pictures still
filtered), and the canvas at rest afterwards is what a canvas shown there
from the start paints."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsView

from engine.fileformat import GraphFile
from gui.canvas import CanvasView
from gui.canvas.zoom_gesture import REST_MS
from gui.document import GraphDocument
from support import seed2_graph, wheel

SMOOTH = QPainter.RenderHint.SmoothPixmapTransform
CACHED = QGraphicsView.CacheModeFlag.CacheBackground


def seeded(shown_canvas) -> CanvasView:  # noqa: ANN001
    doc = GraphDocument()
    doc.load(GraphFile(graph=seed2_graph(), output="y", gradient=np.ones(3)), None)
    view = shown_canvas(doc, (700, 450))
    centre = view.canvas.nodes_rect().center()
    view.look_at((centre.x(), centre.y()), 1.0)
    return view


def test_wheel_steps_paint_the_background_uncached_and_the_rest_as_ever(
    shown_canvas, qtbot,  # noqa: ANN001
) -> None:
    view = seeded(shown_canvas)
    assert view.renderHints() & SMOOTH and view.cacheMode() == CACHED
    for notches in (1, 1, -1, 1):
        wheel(view, notches)
        view.viewport().repaint()
        assert view.renderHints() & SMOOTH and view.cacheMode() != CACHED
    qtbot.wait(REST_MS + 150)
    assert view.renderHints() & SMOOTH and view.cacheMode() == CACHED
    after = view.viewport().grab().toImage()

    fresh = shown_canvas(view.doc, (700, 450))  # the same place, never zoomed by the wheel
    fresh.setTransform(view.transform())
    fresh.horizontalScrollBar().setValue(view.horizontalScrollBar().value())
    fresh.verticalScrollBar().setValue(view.verticalScrollBar().value())
    assert fresh.mapToScene(0, 0) == view.mapToScene(0, 0)
    assert fresh.viewport().grab().toImage() == after


def test_a_camera_glide_keeps_the_background_cached(shown_canvas) -> None:  # noqa: ANN001
    view = seeded(shown_canvas)
    gesture = view._zoom_gesture
    gesture.step()  # a glide's zoom step
    assert view.renderHints() & SMOOTH and view.cacheMode() == CACHED
    gesture.step(wheel=True)  # the wheel turns during it
    assert view.renderHints() & SMOOTH and view.cacheMode() != CACHED
    gesture.end()
    assert view.renderHints() & SMOOTH and view.cacheMode() == CACHED
