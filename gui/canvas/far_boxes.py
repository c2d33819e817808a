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

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyle, QStyleOptionGraphicsItem, QWidget

from engine.collector import collector_paused

from ..qt_override import reported, reported_or
from ..theme import THEME
from .coords import rect_of
from .node_item import FAR_LOD, NodeItem

#: A box's rectangle in scene coordinates (x, y, width, height), its band's height,
#: the band colour's rgba, and selected. Numbers only, no rectangles or colours: the
#: collector leaves such tuples alone (a tuple per box was 5,000 objects for it per
#: 5,000-node open); the table's rectangles are made by the first paint that draws them.
_Look = tuple[float, float, float, float, float, int, bool]
#: Room around the boxes (scene units) for the one-pixel border seen from far away.
MARGIN = 40.0
#: Up to this many boxes changed (an edit, a click), their rows are updated in the
#: painter's table; more (a duplicate, select all), it is made again in one go (a row
#: added at a time copies the table each time).
ROWS_IN_PLACE = 16


class _Table:
    """The looks for painting: each box's (left, top, right, bottom) as rows, which are
    selected, and which band colour each has, as arrays (a paint picks the boxes in
    view and groups them with numpy, not one Python step per box)."""

    def __init__(self, looks: dict[str, _Look], colours: dict[int, QColor]) -> None:
        self.rows = {nid: i for i, nid in enumerate(looks)}
        #: x, y, width, height and band height, as the looks say
        self.rects = np.array([look[:5] for look in looks.values()], dtype=float).reshape(-1, 5)
        self.bounds = _sides(self.rects)
        self.chosen = np.array([look[6] for look in looks.values()], dtype=bool)
        self._of_rgba = colours
        #: Each row's box and band rectangle (None: not kept yet, see rectangles()).
        self._boxes: list[QRectF] | None = None
        self._bands: list[QRectF] = []
        self._painted = False  # rectangles() was asked before
        self._ids: dict[int, int] = {}  # a band colour's rgba -> its index in colours
        self.colours: list[QColor] = []
        self.colour_ids = np.array([self._colour_id(look[5]) for look in looks.values()],
                                   dtype=np.int64)

    def rectangles(self) -> tuple[list[QRectF], list[QRectF]]:
        """Each row's box and band as rectangles, for a paint (run with the collector
        paused: see :meth:`FarBoxes.paint`). The first call makes them for that paint
        only: a file opens to one paint, and 10,000 rectangles kept then were as many
        objects more for the collector per 5,000-node open. From the second (a zoom or a
        followed step: made on every paint, they cost ~0.8 ms a step at 5,000 boxes)
        they are made once and kept."""
        if self._boxes is not None:
            return self._boxes, self._bands
        rows = self.rects.tolist()
        boxes = [QRectF(x, y, w, h) for x, y, w, h, _b in rows]
        bands = [QRectF(x, y, w, b) for x, y, w, _h, b in rows]
        if self._painted:
            self._boxes, self._bands = boxes, bands
        self._painted = True
        return boxes, bands

    def _colour_id(self, rgba: int) -> int:
        if self._ids.setdefault(rgba, len(self._ids)) == len(self.colours):
            self.colours.append(self._of_rgba[rgba])
        return self._ids[rgba]

    def set_row(self, nid: str, look: _Look) -> None:
        """Box ``nid`` looks like this now (a new box: a new row). An edit or a select
        changes a box or two: making the table again for those was most of its paint."""
        row = self.rows.setdefault(nid, len(self.rects))
        rect = np.array([look[:5]], dtype=float)
        if row == len(self.rects):
            self.rects = np.vstack((self.rects, rect))
            self.bounds = np.vstack((self.bounds, _sides(rect)))
            self.chosen = np.append(self.chosen, look[6])
            self.colour_ids = np.append(self.colour_ids, self._colour_id(look[5]))
            if self._boxes is not None:
                self._boxes.append(_box(look))
                self._bands.append(_band(look))
            return
        self.rects[row] = rect[0]
        self.bounds[row] = _sides(rect)[0]
        self.chosen[row] = look[6]
        self.colour_ids[row] = self._colour_id(look[5])
        if self._boxes is not None:
            self._boxes[row], self._bands[row] = _box(look), _band(look)


def _sides(rects: np.ndarray) -> np.ndarray:
    """(left, top, right, bottom) rows of (x, y, width, height, ...) rows: the sums
    ``QRectF.getCoords`` makes."""
    return np.column_stack((rects[:, 0], rects[:, 1], rects[:, 0] + rects[:, 2],
                            rects[:, 1] + rects[:, 3])).reshape(-1, 4)


def _box(look: _Look) -> QRectF:
    return QRectF(look[0], look[1], look[2], look[3])


def _band(look: _Look) -> QRectF:
    return QRectF(look[0], look[1], look[2], look[4])


class FarBoxes(QGraphicsItem):
    """Every node box, drawn as the far-away rectangle and band (see module doc)."""

    def __init__(self, nodes: dict[str, NodeItem]) -> None:
        super().__init__()
        self._nodes = nodes
        self._area = QRectF()  # around every box: what the cache below holds
        self.setZValue(1)  # where the boxes are: over edges, under labels and badges
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        # Cached as the view shows it: a repaint over the boxes (a player step's edge
        # and label) copies pixels; a change redraws the boxes in its area only.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        #: Each box's far look and whether it is selected (None: gather them all).
        self._looks: dict[str, _Look] | None = None
        #: The looks as arrays and lists (None: make them from the looks).
        self._table: _Table | None = None
        #: Every band colour met, by its rgba (the looks keep only the rgba).
        self._colours: dict[int, QColor] = {}

    def changed(self, ids: Iterable[str] | None = None) -> None:
        """These boxes (None: any) moved, were resized, added or removed: repaint
        where they were and are now."""
        looks = self._looks
        if ids is None or looks is None:
            self._looks = None
            self._table = _Table(self._gather(), self._colours)  # (the next paint's, made now)
            b = self._table.bounds
            self._cover(rect_of((b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()))
                        if len(b) else QRectF())
            self.update()
            return
        ids = list(ids)
        area = QRectF()
        table = self._table if len(ids) <= ROWS_IN_PLACE else None
        for nid in ids:
            old = looks.get(nid)
            if old is not None:
                area = area.united(_box(old))
            item = self._nodes.get(nid)
            if item is not None and item.content is not None and item.isVisible():
                looks[nid] = new = self._look(item)  # (in its place)
                area = area.united(_box(new))
                if table is not None:
                    table.set_row(nid, new)
            elif old is not None:
                del looks[nid]
                table = None  # a box gone: its row goes with a table made afresh
        self._table = table
        if not area.isEmpty():
            self._cover(self._area.united(area))
            self.update(area)

    def _cover(self, area: QRectF) -> None:
        """Grow (or set) the bounding rectangle to hold ``area``."""
        area = area.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN) if area != self._area else area
        if area != self._area:
            self.prepareGeometryChange()
            self._area = area

    def selection_changed(self) -> None:
        """Repaint the boxes whose selection changed, and forget deleted ones (a
        deletion deselects its boxes before the scene hears of it). The boxes selected
        now are the scene's few selected items: asking each of 200 boxes whether it is
        selected was most of an add's two looks."""
        looks, scene = self._looks, self.scene()
        if looks is None:
            return
        nodes = self._nodes
        if scene is None:
            now = {n for n, item in nodes.items() if item.isSelected()}
        else:
            now = {nid for item in scene.selectedItems()
                   if nodes.get(nid := getattr(item, "node_id", "")) is item}
        was = {n for n, look in looks.items() if look[6]}
        self.changed([n for n in looks if n not in nodes or (n in now) != (n in was)])

    @reported_or(QRectF)
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self._area

    @reported_or(QPainterPath)
    def shape(self) -> QPainterPath:
        """Nothing to hit: clicks and rubber bands find the boxes themselves."""
        return QPainterPath()

    @reported
    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod >= FAR_LOD:
            self._paint_each(painter, self._boxes(), widget)  # a closer render of this scene
            return
        if self._table is None:
            self._table = _Table(self._gather(), self._colours)
        table = self._table
        bounds = table.bounds
        e = option.exposedRect
        pad = 4.0 / max(lod, 1e-6)  # a few pixels, for the one-pixel border
        shown = np.flatnonzero(
            (bounds[:, 0] <= e.right() + pad)
            & (bounds[:, 2] >= e.left() - pad)
            & (bounds[:, 1] <= e.bottom() + pad)
            & (bounds[:, 3] >= e.top() - pad)
        )
        # Rectangles made for this paint alone are gone when _draw returns: with no
        # collection in between, the collector never counts them as survivors.
        with collector_paused():
            self._draw(painter, table, shown)

    @staticmethod
    def _draw(painter: QPainter, table: _Table, shown: np.ndarray) -> None:
        """Draw the table's rows ``shown``: boxes by selection, bands by colour."""
        chosen = table.chosen[shown]
        boxes, bands = table.rectangles()
        plain = [boxes[i] for i in shown[~chosen].tolist()]
        selected = [boxes[i] for i in shown[chosen].tolist()]
        colour_ids = table.colour_ids[shown]
        ids, first = np.unique(colour_ids, return_index=True)
        by_colour = [
            (table.colours[c], [bands[i] for i in shown[colour_ids == c].tolist()])
            for c in ids[np.argsort(first)].tolist()  # colours as they first appear
        ]
        painter.setBrush(THEME.node_fill)
        for rects, colour in ((plain, THEME.node_border), (selected, THEME.node_selected)):
            if rects:
                painter.setPen(QPen(colour, 0))
                painter.drawRects(rects)
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, rects in by_colour:
            painter.setBrush(colour)
            painter.drawRects(rects)

    def _boxes(self) -> list[NodeItem]:
        return [n for n in self._nodes.values() if n.content is not None and n.isVisible()]

    def _gather(self) -> dict[str, _Look]:
        if self._looks is None:
            self._looks = {n.node_id: self._look(n) for n in self._boxes()}
        return self._looks

    def _look(self, item: NodeItem) -> _Look:
        x, y, w, h, band, colour = item.far_look()
        rgba = colour.rgba()
        if rgba not in self._colours:
            self._colours[rgba] = QColor(colour)  # a copy: the theme's may change in place
        return (x, y, w, h, band, rgba, item.isSelected())

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
