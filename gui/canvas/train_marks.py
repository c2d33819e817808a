"""Train mode on the canvas: the last update written on each parameter's box, and the
update act's pulse.

Under each parameter's box, on an opaque plate, the update with its numbers
(``w ← 0 − 0.1 · (−8.08) = 0.808``; for Adam the step lr·m̂/(√v̂+ε)), the very
:class:`~engine.train.Update` that changed the value the box now shows. Zoomed out so
far that the line would show smaller than the canvas's minimum text size, the plate
says what the box's compact form would (semantic zoom): the value reached, in a font
sized for the screen (:func:`~gui.model.train_view.box_summary`).

After a training step the update act plays (:mod:`gui.model.update_act`): a pulse runs
along each plate in turn and into its box, and the box shows its new value from the
moment the pulse arrives, not before. Marks never take clicks: the boxes under them do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QEasingCurve, QObject, QPointF, Qt, QVariantAnimation
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsSimpleTextItem

from ..document import GraphDocument
from ..model.semantic_zoom import is_compact
from ..model.update_act import UpdateFrame, active, at, shown_values
from ..theme import THEME
from .edge_item import PulseItem
from .node_item import NodeItem
from .port_item import UNIT, cfont, cline
from .scene import CanvasScene

if TYPE_CHECKING:
    from engine.train import Update

PAD = 5.0 * UNIT
#: The update line's size on the canvas (points at zoom 1), as a box's small print.
MARK_PT = 12.0
#: How long the act's pulse takes to reach one parameter in the window (ms).
ACT_MS = 700
#: The act's pulse is this much bigger than an edge's (it travels over text).
PULSE_GROW = 1.5
#: While Play runs, the act takes at most this share of the time between two steps.
PACE_SHARE = 0.8


class UpdateMark(QGraphicsRectItem):
    """One parameter's update line on a plate."""

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(11)  # over the active edge's label: the update is the act now
        self.text = QGraphicsSimpleTextItem(self)
        self.text.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.compact = False
        self.grow = 1.0  # the text's size over MARK_PT (a compact plate's is bigger)

    def show_line(self, line: str, summary: str, item: NodeItem, zoom: float,
                  min_pt: float) -> None:
        """``line`` at :data:`MARK_PT` under ``item``'s box, or, when that would show
        smaller than ``min_pt`` on screen at ``zoom``, ``summary`` at ``min_pt``."""
        self.compact = is_compact(zoom, MARK_PT, min_pt)
        pt = min_pt / (zoom * UNIT) if self.compact else MARK_PT
        self.grow = grow = pt / MARK_PT  # the plate's padding and border keep their share
        self.text.setFont(cfont(pt, mono=True, bold=True))
        self.text.setBrush(QBrush(THEME.text))
        self.text.setText(summary if self.compact else line)
        box = item.sceneBoundingRect()
        size = self.text.boundingRect()
        pad = PAD * grow
        x, y = box.left(), box.bottom() + pad
        self.setRect(x - pad, y - pad / 2, size.width() + 2 * pad, size.height() + pad)
        self.text.setPos(x, y)
        self.setPen(QPen(QColor(THEME.edge_active), cline(1.4) * grow))
        self.setBrush(QBrush(THEME.paper))

    def pulse_path(self, item: NodeItem) -> QPainterPath:
        """The act's way to this parameter: along the plate, under the update it reads
        (its result last), then up into the box's value."""
        r = self.rect()
        path = QPainterPath(QPointF(r.left(), r.center().y()))
        path.lineTo(QPointF(r.right(), r.center().y()))
        path.lineTo(item.sceneBoundingRect().center())
        return path


class TrainMarks(QObject):
    """Keeps one :class:`UpdateMark` per updated parameter of the document's last step,
    and plays the update act after each new step (``animate``: whether to, asked each
    time; ``pace``: the milliseconds between Play's steps while it runs, else None)."""

    def __init__(
        self,
        scene: CanvasScene,
        doc: GraphDocument,
        nodes: dict[str, NodeItem],
        animate: Callable[[], bool] = lambda: False,
        pace: Callable[[], float | None] = lambda: None,
    ) -> None:
        super().__init__(scene)
        self.scene, self.doc, self.nodes = scene, doc, nodes
        self.animate, self.pace = animate, pace
        self.marks: dict[str, UpdateMark] = {}
        self.frame: UpdateFrame | None = None  # the act's frame shown (None: not playing)
        self._view: tuple[float, float, bool] | None = None  # what the plates are laid out for
        self._seen: tuple[int, object] = (0, None)  # the step count and last step shown
        self.pulse = PulseItem()
        self.pulse.forward = True  # progress 0: the path's start
        self.pulse.setZValue(12)  # over the plates
        self.pulse.hide()
        scene.addItem(self.pulse)
        self.act = QVariantAnimation(self, startValue=0.0, endValue=1.0,
                                     easingCurve=QEasingCurve(QEasingCurve.Type.Linear))
        self.act.valueChanged.connect(lambda t: self.show_frame(at(float(t), len(self.marks))))
        self.act.finished.connect(self.live)
        doc.trainChanged.connect(self.refresh)
        doc.positionsChanged.connect(lambda _ids: self.refresh())
        scene.viewChanged.connect(self._zoomed)

    def updates(self) -> dict[str, Update]:
        state, spec = self.doc.train_state, self.doc.train
        if state is None or state.last is None or spec is None:
            return {}
        return {p: up for p, up in state.last.updates.items() if p in self.nodes}

    def refresh(self) -> None:
        """Marks for the document's last step; a new step (one more than the last seen)
        plays the act when animating, anything else (undo, Reset) shows the boxes live."""
        updates = self.updates()
        for nid in [n for n in self.marks if n not in updates]:
            self.scene.removeItem(self.marks.pop(nid))
        for nid in updates:
            if nid not in self.marks:
                self.marks[nid] = UpdateMark()
                self.scene.addItem(self.marks[nid])
        self._layout()
        self.scene.show_update(bool(updates))
        state = self.doc.train_state
        seen = (state.t, state.last) if state is not None else (0, None)
        stepped = seen[1] is not None and seen[0] == self._seen[0] + 1
        changed, self._seen = seen[1] is not self._seen[1], seen
        if changed and stepped and updates and self.animate():
            self.act.stop()
            self.act.setDuration(self._act_ms(len(updates)))
            self.act.start()
            self.show_frame(at(0.0, len(updates)))  # the old values, before any paint
        elif changed or self.frame is None:
            self.act.stop()
            self.live()
        else:
            self.show_frame(self.frame)  # moved boxes: the pulse's way moved too

    def _act_ms(self, count: int) -> int:
        ms = ACT_MS * count
        pace = self.pace()
        return int(ms if pace is None else max(1.0, min(ms, PACE_SHARE * pace)))

    def _layout(self) -> None:
        spec = self.doc.train
        if spec is None:
            return
        # Here, not at the top: the train view (and engine.train) load with a train block.
        from ..model.train_view import box_line, box_summary

        for nid, up in self.updates().items():
            mark = self.marks[nid]
            mark.show_line(box_line(up, spec), box_summary(up), self.nodes[nid],
                           self.scene.view_zoom, self.scene.min_text_pt)
            mark.setVisible(not self.scene.far)

    def _zoomed(self, zoom: float) -> None:
        """A view's zoom: each plate's form for it (cheap when neither it nor the
        minimum text size changed); zoomed out past the far view's threshold, where the
        boxes show no text, no plates either."""
        key = (zoom, self.scene.min_text_pt, self.scene.far)
        if key != self._view:
            self._view = key
            if self.marks:
                self._layout()
                if self.frame is not None:
                    self.show_frame(self.frame)

    def show_frame(self, frame: UpdateFrame) -> None:
        """The act at ``frame``: each parameter's box shows the value
        :func:`~gui.model.update_act.shown_values` says (held where the document's
        differs), and the pulse is on its way to the parameter it visits."""
        self.frame = frame
        updates = self.updates()
        graph = self.doc.graph
        held = {
            p: v for p, v in shown_values(updates, frame).items()
            if not np.array_equal(v, graph.nodes[p].value)  # type: ignore[arg-type]
        }
        resized = set(held) ^ set(self.scene.held_values)
        self.scene.hold_values(held)
        if resized:
            self._layout()  # a box's new value may be wider: its plate follows
        target = active(updates, frame)
        if target is None:
            self.pulse.hide()
            return
        mark = self.marks[target]
        self.pulse.setScale(PULSE_GROW * mark.grow)  # as big beside the text as an edge's
        self.pulse.set_path(mark.pulse_path(self.nodes[target]))
        self.pulse.set_progress(frame.pulse)
        self.pulse.show()

    def live(self) -> None:
        """No act playing: every box shows the document's values, no pulse."""
        self.frame = None
        self.pulse.hide()
        if self.scene.held_values:
            self.scene.hold_values({})
            self._layout()
