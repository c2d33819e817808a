"""A node's connection points (one per operand port on the left, the output on the
right) and the canvas's units: the geometry scale, fonts and line widths.

Ports are drawn by their node box into its cached pixmap, so thousands of them
cost nothing when the canvas repaints; hit testing uses a tolerance in
:meth:`gui.canvas.view.CanvasView.port_at`, so the dot can stay small.
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QFont, QPen
from PySide6.QtWidgets import QGraphicsItem

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


_styles: dict[tuple[str, bool, bool, bool, bool], tuple[QRectF, QPen, QBrush]] = {}


def port_style(is_output: bool, filled: bool, hover: bool) -> tuple[QRectF, QPen, QBrush]:
    """Rect, pen and brush of a port (shared: thousands of ports, a handful of looks)."""
    key = (THEME.name, THEME.high_contrast, is_output, filled, hover)
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


class PortItem:
    """Port ``index`` of node ``node_id`` (``is_output``: the node's result).

    Not a scene item: thousands of them would cost more to create than the whole
    layout. The node box draws its ports (hovered ones enlarged), and the view finds
    the port under the mouse from the boxes' geometry.

    The port refers to its box weakly: box and ports held each other, so every box of
    a closed file waited for a cyclic collection (65,000 objects for 5,000 boxes, a
    collection of ~0.25 s during the next file's opening) instead of going with it.
    """

    __slots__ = ("_node", "node_id", "is_output", "index", "connected", "offset")

    def __init__(self, node: QGraphicsItem, node_id: str, is_output: bool, index: int) -> None:
        self._node = weakref.ref(node)
        self.node_id = node_id
        self.is_output = is_output
        self.index = index
        self.connected = False
        #: The centre in the box's coordinates as floats (edge routing reads thousands).
        self.offset = (0.0, 0.0)

    @property
    def node(self) -> QGraphicsItem | None:
        """The NodeItem that draws this port (None: that box is gone, and the port
        was kept by someone else, such as the view's port under the mouse)."""
        return self._node()

    def pos(self) -> QPointF:
        """Centre in the node box's coordinates."""
        return QPointF(*self.offset)

    def setPos(self, x: float, y: float) -> None:  # noqa: N802 - reads like the Qt items
        self.offset = (float(x), float(y))

    def scenePos(self) -> QPointF:  # noqa: N802 - reads like the Qt items
        """Centre in scene coordinates."""
        node = self.node
        assert node is not None, "a port of a box that is gone has no place"
        return node.pos() + QPointF(*self.offset)

    def set_connected(self, connected: bool) -> None:
        self.connected = connected  # the node box draws the dot

    def __repr__(self) -> str:
        where = "output" if self.is_output else f"operand port {self.index}"
        return f"<PortItem {self.node_id!r} {where}>"
