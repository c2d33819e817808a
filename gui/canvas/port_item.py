"""A node's connection point: one per operand port on the left, the output on the right.

The node box draws its ports into its own cached pixmap, so thousands of ports
cost nothing when the canvas repaints; a port item has no contents of its own
except while the mouse is over it (then it draws itself, enlarged). Hit testing
uses a tolerance in :meth:`gui.canvas.view.CanvasView.port_at`, so the dot can
stay small.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QPen
from PySide6.QtWidgets import QGraphicsEllipseItem, QGraphicsItem

from ..theme import THEME

#: The canvas lays its boxes out at this scale whatever ``THEME.scale`` says:
#: presentation mode magnifies the canvas by zooming the view instead, so boxes
#: keep their places and nothing overlaps. (``THEME.scale`` still enlarges the
#: panels' fonts; high contrast still thickens the canvas's lines.)
UNIT = 1.0


def cfont(size: float, bold: bool = False, mono: bool = False) -> QFont:
    """A canvas font: the theme's families at canvas scale."""
    f = QFont("DejaVu Sans Mono" if mono else "DejaVu Sans")
    f.setPointSizeF(size * UNIT)
    f.setBold(bold)
    return f


def cline(width: float) -> float:
    """A canvas line width (thicker in high contrast)."""
    return width * UNIT * (1.5 if THEME.high_contrast else 1.0)


_styles: dict[tuple[bool, bool, bool, bool], tuple[QRectF, QPen, QBrush]] = {}


def port_style(is_output: bool, filled: bool, hover: bool) -> tuple[QRectF, QPen, QBrush]:
    """Rect, pen and brush of a port (shared: thousands of ports, a handful of looks)."""
    key = (THEME.high_contrast, is_output, filled, hover)
    style = _styles.get(key)
    if style is None:
        r = 5.5 * UNIT * (1.35 if hover else 1.0)
        colour = THEME.port_out if is_output else THEME.port_in
        style = _styles[key] = (
            QRectF(-r, -r, 2 * r, 2 * r),
            QPen(colour.darker(115), cline(1.5)),
            QBrush(colour if filled else THEME.node_fill),
        )
    return style


class PortItem(QGraphicsEllipseItem):
    """Port ``index`` of node ``node_id`` (``is_output``: the node's result)."""

    def __init__(self, node_id: str, is_output: bool, index: int, parent: QGraphicsItem) -> None:
        super().__init__(parent)
        self.node_id = node_id
        self.is_output = is_output
        self.index = index
        self.connected = False
        self.setAcceptHoverEvents(True)
        self.setZValue(2)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
        self.setRect(port_style(is_output, False, False)[0])  # pen and brush: on hover

    @property
    def radius(self) -> float:
        return 5.5 * UNIT

    def restyle(self, hover: bool = False) -> None:
        """Filled when connected (or an output), hollow when the port is free."""
        filled = self.connected or self.is_output or hover
        rect, pen, brush = port_style(self.is_output, filled, hover)
        self.setRect(rect)
        self.setPen(pen)
        self.setBrush(brush)

    def set_connected(self, connected: bool) -> None:
        self.connected = connected  # the node box draws the dot

    def scene_center(self) -> QPointF:
        return self.scenePos()

    def describe(self) -> str:
        """How a status message names this port."""
        return f"{self.node_id!r} output" if self.is_output else (
            f"{self.node_id!r} operand port {self.index}"
        )

    def hoverEnterEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        if self.cursor().shape() != Qt.CursorShape.CrossCursor:
            self.setCursor(Qt.CursorShape.CrossCursor)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, False)
        self.restyle(hover=True)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        self.restyle()
        super().hoverLeaveEvent(event)
