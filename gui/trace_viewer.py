"""The read-only viewer for ``.bptrace`` files: a captured model's backward pass.

Boxes are the view model's items (:mod:`gui.model.trace_view`): modules collapsed
by default, double-click one to expand it (or an expanded node to fold its module
back). Left/Right step through PyTorch's own order, Home/End jump; the panel
writes the current step out. Nothing here edits the trace.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QKeyEvent, QMouseEvent, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine import APP_NAME
from engine.captured import CapturedTrace
from engine.tracefile import SUFFIX, load

from .model.trace_view import TraceView, describe
from .theme import THEME

BOX_W, BOX_H = 170.0, 58.0


def is_trace_file(path: str | Path) -> bool:
    return str(path).lower().endswith(SUFFIX)


class TraceCanvas(QGraphicsView):
    """The boxes and edges; double-click toggles a group."""

    def __init__(self, window: TraceWindow) -> None:
        super().__init__()
        self.window_ = window
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setBackgroundBrush(THEME.background)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.boxes: dict[str, QGraphicsRectItem] = {}
        self.lit: set[str] = set()
        self.active = QGraphicsPathItem()
        self.active.setPen(QPen(THEME.edge_active, THEME.line(3.0)))
        self.active.setZValue(2)

    def draw(self, view: TraceView) -> None:
        scene = self.scene()
        if self.active.scene() is scene:
            scene.removeItem(self.active)  # kept across redraws
        scene.clear()
        self.boxes, self.lit = {}, set()
        pen, fill = QPen(THEME.node_border, THEME.line(1.0)), QBrush(THEME.node_fill)
        group_fill, font = QBrush(THEME.title_op), THEME.font(9)
        path = QPainterPath()
        for src, dst in view.edges:
            _edge(path, view.items[src], view.items[dst])
        edges = QGraphicsPathItem(path)
        edges.setPen(QPen(THEME.edge, THEME.line(1.0)))
        scene.addItem(edges)  # first: the boxes stack above it
        for item in view.items.values():
            box = QGraphicsRectItem(0, 0, BOX_W, BOX_H)
            box.setPos(item.x, item.y)
            box.setPen(pen)
            box.setBrush(group_fill if item.is_group else fill)
            box.setData(0, item.id)
            text = QGraphicsSimpleTextItem(f"{_clip(item.title)}\n{item.subtitle}", box)
            text.setFont(font)
            text.setPos(6, 5)
            scene.addItem(box)
            self.boxes[item.id] = box
        scene.addItem(self.active)
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-40, -40, 40, 40))

    def show_step(self, view: TraceView, k: int) -> None:
        """Light the boxes holding a gradient and the edge (or group) of step ``k``."""
        lit = view.received(k)
        for key in self.lit - lit:
            self.boxes[key].setPen(QPen(THEME.node_border, THEME.line(1.0)))
        for key in lit - self.lit:
            self.boxes[key].setPen(QPen(THEME.grad_text, THEME.line(2.0)))
        self.lit = lit
        path = QPainterPath()
        if k >= 0:
            s = view.shown[k]
            src, dst = view.items[s.source], view.items[s.target]
            if s.source == s.target:
                path.addRect(QRectF(src.x - 4, src.y - 4, BOX_W + 8, BOX_H + 8))
            else:
                _edge(path, dst, src)  # the operand is upstream in the forward direction
            self.centerOn(QPointF(src.x + BOX_W / 2, src.y + BOX_H / 2))
        self.active.setPath(path)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if not self.window_.step_key(event.key()):  # arrows step rather than scroll
            super().keyPressEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        for item in self.items(event.position().toPoint()):  # under the step highlight too
            box = item if item.data(0) is not None else item.parentItem()
            if box is not None and box.data(0) is not None:
                self.window_.toggle(str(box.data(0)))
                break
        event.accept()


def _edge(path: QPainterPath, src: object, dst: object) -> None:
    """Forward direction, operand (left) to consumer (right); gradients run back along it."""
    path.moveTo(src.x + BOX_W, src.y + BOX_H / 2)
    path.lineTo(dst.x, dst.y + BOX_H / 2)


def _clip(text: str, n: int = 20) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class TraceWindow(QMainWindow):
    """One trace, read-only: the canvas, a player bar and the step panel."""

    def __init__(self, trace: CapturedTrace, name: str = "trace") -> None:
        super().__init__()
        self.setWindowTitle(f"{name} — {APP_NAME} (captured trace, read-only)")
        self.view = TraceView(trace)
        self.k = -1
        self.canvas = TraceCanvas(self)
        self.panel = QPlainTextEdit(readOnly=True)
        self.panel.setFont(THEME.font(10, mono=True))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.label = QLabel()
        back, forward = QPushButton("◀"), QPushButton("▶")
        back.clicked.connect(lambda: self.seek(self.k - 1))
        forward.clicked.connect(lambda: self.seek(self.k + 1))
        self.slider.valueChanged.connect(lambda v: self.seek(v - 1))
        bar = QHBoxLayout()
        for w in (back, forward, self.slider, self.label):
            bar.addWidget(w)
        split = QSplitter()
        split.addWidget(self.canvas)
        split.addWidget(self.panel)
        split.setSizes([900, 380])
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(split, 1)
        layout.addLayout(bar)
        self.setCentralWidget(body)
        self.resize(1280, 720)
        self.redraw()

    def step_key(self, key: int) -> bool:
        """Right/Left (PageDown/PageUp) step, Home/End jump; False for other keys."""
        last = len(self.view.shown) - 1
        moves = {
            Qt.Key.Key_Right: self.k + 1,
            Qt.Key.Key_PageDown: self.k + 1,
            Qt.Key.Key_Left: self.k - 1,
            Qt.Key.Key_PageUp: self.k - 1,
            Qt.Key.Key_Home: -1,
            Qt.Key.Key_End: last,
        }
        if key not in moves:
            return False
        self.seek(moves[key])
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if not self.step_key(event.key()):
            super().keyPressEvent(event)

    def redraw(self) -> None:
        self.canvas.draw(self.view)
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self.view.shown))
        self.slider.blockSignals(False)
        self.seek(self.k)

    def toggle(self, item_id: str) -> None:
        """Expand or collapse, keeping the current step on the same trace step."""
        at = self.view.shown[self.k].first if self.k >= 0 else None
        if self.view.toggle(item_id):
            self.k = self.view.step_at(at) if at is not None else -1
            self.redraw()

    def seek(self, k: int) -> None:
        k = max(-1, min(k, len(self.view.shown) - 1))
        self.k = k
        self.canvas.show_step(self.view, k)
        self.slider.blockSignals(True)
        self.slider.setValue(k + 1)
        self.slider.blockSignals(False)
        self.label.setText(f"{k + 1} / {len(self.view.shown)}")
        if k < 0:
            trace = self.view.trace
            self.panel.setPlainText(
                f"{len(trace.nodes)} autograd nodes, {len(trace.steps)} steps, "
                f"{len(self.view.groups())} modules.\nOutput {trace.output}: backward() starts "
                "here. Right arrow steps through the pass in PyTorch's order; double-click a "
                "module to expand it."
            )
        else:
            self.panel.setPlainText(describe(self.view, k))


def open_trace(path: str | Path) -> TraceWindow:
    """A viewer window for ``path``; raises FileFormatError (one line) for a bad file."""
    return TraceWindow(load(path), Path(path).name)
