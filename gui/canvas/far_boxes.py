"""Node boxes seen from far away, painted by one item in a few batched calls.

Below :data:`FAR_LOD` a box is a few pixels: a rectangle and its band. Qt calling
each box's Python ``paint`` cost ~15 µs a box (the call itself, whatever it drew),
and with the device cache a fresh pixmap per box on every zoom step: a zoom step
of 1,000 boxes spent 20 ms there. While the canvas is that far out the boxes have
no contents of their own (they still take the mouse: select, drag) and this item
draws them all. The scene tells it which boxes moved, were resized or selected
(:meth:`FarBoxes.changed`), so a player step repaints only those; a zoom step
reuses what it gathered.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyle, QStyleOptionGraphicsItem, QWidget

from ..theme import THEME
from .node_item import FAR_LOD, NodeItem

#: A box's rectangle and band (scene coordinates), the band's colour, and selected.
_Look = tuple[QRectF, QRectF, QColor, bool]
_Batches = tuple[list[QRectF], list[QRectF], list[tuple[QColor, list[QRectF]]]]


class FarBoxes(QGraphicsItem):
    """Every node box, drawn as the far-away rectangle and band (see module doc)."""

    def __init__(self, nodes: dict[str, NodeItem], area: QRectF) -> None:
        super().__init__()
        self._nodes = nodes
        self._area = QRectF(area)
        self.setZValue(1)  # where the boxes are: over edges, under labels and badges
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        #: Each box's far look and whether it is selected (None: gather them all).
        self._looks: dict[str, _Look] | None = None
        self._batches: _Batches | None = None  # the looks grouped for drawing

    def changed(self, ids: Iterable[str] | None = None) -> None:
        """These boxes (None: any) moved, were resized, added or removed: repaint
        where they were and are now."""
        looks = self._looks
        if ids is None or looks is None:
            self._looks = self._batches = None
            self.update()
            return
        area = QRectF()
        for nid in ids:
            old = looks.pop(nid, None)
            if old is not None:
                area = area.united(old[0])
            item = self._nodes.get(nid)
            if item is not None and item.content is not None and item.isVisible():
                looks[nid] = new = (*item.far_look(), item.isSelected())
                area = area.united(new[0])
        self._batches = None
        if not area.isEmpty():
            self.update(area)

    def selection_changed(self) -> None:
        """Repaint the boxes whose selection changed."""
        if self._looks is not None:
            nodes = self._nodes
            self.changed([n for n, look in self._looks.items() if nodes[n].isSelected() != look[3]])

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self._area

    def shape(self) -> QPainterPath:
        """Nothing to hit: clicks and rubber bands find the boxes themselves."""
        return QPainterPath()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= FAR_LOD:
            self._paint_each(painter, self._boxes(), widget)  # a closer render of this scene
            return
        if self._batches is None:
            self._batches = self._batch(self._gather())
        plain, selected, bands = self._batches
        painter.setBrush(THEME.node_fill)
        for rects, colour in ((plain, THEME.node_border), (selected, THEME.node_selected)):
            if rects:
                painter.setPen(QPen(colour, 0))
                painter.drawRects(rects)
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, rects in bands:
            painter.setBrush(colour)
            painter.drawRects(rects)

    def _boxes(self) -> list[NodeItem]:
        return [n for n in self._nodes.values() if n.content is not None and n.isVisible()]

    def _gather(self) -> dict[str, _Look]:
        if self._looks is None:
            self._looks = {n.node_id: (*n.far_look(), n.isSelected()) for n in self._boxes()}
        return self._looks

    @staticmethod
    def _batch(looks: dict[str, _Look]) -> _Batches:
        plain: list[QRectF] = []
        selected: list[QRectF] = []
        bands: dict[int, tuple[QColor, list[QRectF]]] = {}
        for box, band, colour, chosen in looks.values():
            (selected if chosen else plain).append(box)
            bands.setdefault(colour.rgba(), (colour, []))[1].append(band)
        return plain, selected, list(bands.values())

    @staticmethod
    def _paint_each(painter: QPainter, boxes: list[NodeItem], widget: QWidget | None) -> None:
        option = QStyleOptionGraphicsItem()
        for item in boxes:
            option.state = (
                QStyle.StateFlag.State_Selected
                if item.isSelected()
                else QStyle.StateFlag.State_None
            )
            painter.save()
            painter.setTransform(item.sceneTransform(), True)
            item.paint(painter, option, widget)
            painter.restore()
