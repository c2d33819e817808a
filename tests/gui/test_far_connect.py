"""Connecting works at every zoom (issue 32, fix 5).

Zoomed out, boxes are drawn compact (and, further out, batched as plain rectangles):
their ports were not drawn, and a drag that started where a port had been moved the
box instead of connecting. The ports are now drawn at a minimum size on screen, and a
drag that starts on a box's side starts a connection from the port on that side.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest

from gui.canvas import CanvasView
from gui.canvas.node_item import FAR_LOD
from gui.commands import AddNode, push
from gui.document import GraphDocument


def _add(view: CanvasView, op: str, x: float, y: float) -> str:
    cmd = AddNode(view.doc, op, (x, y))
    assert push(view.doc, cmd) is None
    return cmd.node


def _drag(view: CanvasView, start: QPoint, end: QPoint) -> None:
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for k in range(1, 6):
        QTest.mouseMove(vp, start + (end - start) * k / 5)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


@pytest.mark.parametrize("zoom", [0.3, 0.12, 0.06])
def test_a_drag_from_a_boxs_side_connects_at_a_far_zoom(shown_canvas, zoom) -> None:  # noqa: ANN001
    view = shown_canvas(GraphDocument())
    x = _add(view, "input", 0.0, 0.0)
    n = _add(view, "neg", 420.0, 60.0)
    view.resetTransform()
    view.scale(zoom, zoom)
    view.centerOn(view.canvas.nodes_rect().center())
    assert view.node_item(x).compact_form(view.zoom()) is not None or zoom < FAR_LOD
    before = view.node_item(x).pos()
    steps = view.doc.undo_stack.count()
    src_rect = view.node_item(x).scene_rect()
    # where the port was: the middle of the output side, a pixel inside the box
    src = view.mapFromScene(QPointF(src_rect.right(), src_rect.center().y())) - QPoint(1, 0)
    dst = view.mapFromScene(view.node_item(n).scene_rect().center())
    _drag(view, src, dst)
    assert view.doc.graph.nodes[n].inputs == [x]
    assert view.doc.undo_stack.count() == steps + 1
    assert view.doc.undo_stack.undoText().startswith("Connect")
    assert view.node_item(x).pos() == before  # the box stayed where it was
    view.doc.undo_stack.undo()
    assert view.doc.graph.nodes[n].inputs == [None]


def test_a_drag_from_a_small_boxs_middle_still_moves_it(shown_canvas) -> None:  # noqa: ANN001
    view = shown_canvas(GraphDocument())
    x = _add(view, "input", 0.0, 0.0)
    view.resetTransform()
    view.scale(0.12, 0.12)
    item = view.node_item(x)
    before = item.pos()
    mid = view.mapFromScene(item.scene_rect().center())
    _drag(view, mid, mid + QPoint(30, 0))
    assert item.pos().x() > before.x() and view.doc.graph.nodes[x].inputs == []


def test_compact_boxes_draw_their_ports_at_a_minimum_size(shown_canvas) -> None:  # noqa: ANN001
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    from gui.canvas.node_item import MIN_PORT_PX
    from gui.theme import THEME

    view = shown_canvas(GraphDocument())
    item = view.node_item(_add(view, "input", 0.0, 0.0))
    zoom = 0.5
    assert item.compact_form(zoom) is not None
    width, height = item.size
    image = QImage(int(width * zoom) + 40, int(height * zoom) + 40, QImage.Format.Format_RGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    painter.translate(20, 20)
    painter.scale(zoom, zoom)
    item.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    port = item.out_port.pos()
    cx, cy = 20 + port.x() * zoom, 20 + port.y() * zoom
    want = THEME.port_out
    for dx in (0.0, MIN_PORT_PX / 2 - 1.5):  # its middle, and out to the minimum size
        got = QColor(image.pixel(int(cx + dx), int(cy)))
        assert abs(got.red() - want.red()) + abs(got.green() - want.green()) \
            + abs(got.blue() - want.blue()) < 40, (dx, got.name(), want.name())
