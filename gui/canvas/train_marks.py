"""Train mode on the canvas: the last update written on each parameter's box.

Under each parameter's box, on an opaque plate, the update with its numbers
(``w ← 0 − 0.1 · (−8.08) = 0.808``; for Adam the step lr·m̂/(√v̂+ε)), the very
:class:`~engine.train.Update` that changed the value the box now shows. Marks never
take clicks: the boxes under them do.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

from ..document import GraphDocument
from ..model.train_view import box_line
from ..theme import THEME
from .node_item import NodeItem
from .port_item import UNIT, cfont, cline

PAD = 5.0 * UNIT


class UpdateMark(QGraphicsRectItem):
    """One parameter's update line on a plate."""

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(8)
        self.text = QGraphicsSimpleTextItem(self)
        self.text.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def show_line(self, line: str, item: NodeItem) -> None:
        self.text.setFont(cfont(12, mono=True, bold=True))
        self.text.setBrush(QBrush(THEME.text))
        self.text.setText(line)
        box = item.sceneBoundingRect()
        size = self.text.boundingRect()
        x, y = box.left(), box.bottom() + PAD
        self.setRect(x - PAD, y - PAD / 2, size.width() + 2 * PAD, size.height() + PAD)
        self.text.setPos(x, y)
        self.setPen(QPen(QColor(THEME.edge_active), cline(1.4)))
        self.setBrush(QBrush(THEME.paper))


class TrainMarks:
    """Keeps one :class:`UpdateMark` per updated parameter of the document's last step."""

    def __init__(
        self, scene: QGraphicsScene, doc: GraphDocument, nodes: dict[str, NodeItem]
    ) -> None:
        self.scene, self.doc, self.nodes = scene, doc, nodes
        self.marks: dict[str, UpdateMark] = {}
        doc.trainChanged.connect(self.refresh)
        doc.positionsChanged.connect(lambda _ids: self.refresh())

    def refresh(self) -> None:
        state, spec = self.doc.train_state, self.doc.train
        updates = state.last.updates if state is not None and state.last and spec else {}
        for nid in [n for n in self.marks if n not in updates or n not in self.nodes]:
            self.scene.removeItem(self.marks.pop(nid))
        for nid, up in updates.items():
            item = self.nodes.get(nid)
            if item is None or spec is None:
                continue
            mark = self.marks.get(nid)
            if mark is None:
                mark = self.marks[nid] = UpdateMark()
                self.scene.addItem(mark)
            mark.show_line(box_line(up, spec), item)
