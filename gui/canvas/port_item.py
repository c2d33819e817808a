"""A node's connection point: one per operand port on the left, the output on the right.

A plain ellipse item (painted by Qt in C++, no Python paint call per frame), so
hundreds of ports cost nothing when the canvas repaints. Hit testing uses a
tolerance in :meth:`gui.canvas.view.CanvasView.port_at`, so the dot can stay small.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPen
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsItem

from ..theme import THEME


class PortItem(QGraphicsEllipseItem):
    """Port ``index`` of node ``node_id`` (``is_output``: the node's result)."""

    def __init__(self, node_id: str, is_output: bool, index: int, parent: QGraphicsItem) -> None:
        super().__init__(parent)
        self.node_id = node_id
        self.is_output = is_output
        self.index = index
        self.connected = False
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setZValue(2)
        self.restyle()

    @property
    def radius(self) -> float:
        return 5.5 * THEME.scale

    def restyle(self, hover: bool = False) -> None:
        """Filled when connected (or an output), hollow when the port is free."""
        r = self.radius * (1.35 if hover else 1.0)
        self.setRect(QRectF(-r, -r, 2 * r, 2 * r))
        colour = THEME.port_out if self.is_output else THEME.port_in
        self.setPen(QPen(colour.darker(115), THEME.line(1.5)))
        filled = self.connected or self.is_output or hover
        self.setBrush(QBrush(colour if filled else THEME.node_fill))

    def set_connected(self, connected: bool) -> None:
        if connected != self.connected:
            self.connected = connected
            self.restyle()

    def scene_center(self) -> QPointF:
        return self.scenePos()

    def describe(self) -> str:
        """How a status message names this port."""
        return f"{self.node_id!r} output" if self.is_output else (
            f"{self.node_id!r} operand port {self.index}"
        )

    def hoverEnterEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self.restyle(hover=True)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self.restyle()
        super().hoverLeaveEvent(event)
