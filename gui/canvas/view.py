"""CanvasView: the node editor a teacher builds graphs in and plays backward on.

Interactions become commands (``gui.commands.push``) so every edit is undoable
and refused edits change nothing; the view then repaints from the document's
signals like every other view. The player drives :meth:`CanvasView.show_frame`.

Mouse: wheel zooms about the cursor; middle-drag or Space+drag pans; drag from
a port to a port (or onto a box) connects; drag boxes to move them (one undo
step per drag); drag on empty canvas selects with a rubber band. Keys: F fits
all, Tab opens the quick search, Delete/Backspace deletes, Ctrl+A selects all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEasingCurve,
    QEvent,
    QLineF,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    QVariantAnimation,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QCursor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QResizeEvent,
    QShowEvent,
    QSinglePointEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QLabel, QMenu, QWidget

from engine.collector import collector_paused
from engine.errors import GraphError
from engine.ops import OP_NAMES, ops_in
from engine.ops.record import CATEGORIES
from engine.trace import Step

from ..commands import (
    AddNode,
    Connect,
    MoveNodes,
    auto_layout,
    delete_selection,
    move_edge,
    push,
    set_output,
)
from ..document import GraphDocument, Point
from ..group_commands import set_collapsed
from ..model.camera import (
    SMALL_GRAPH_NODES,
    CameraTarget,
    Rect,
    camera_target,
    interpolate,
    least_legible,
    opening_view,
    readable_zoom,
)
from ..model.names import MIME_OP
from ..model.placement import place_box
from ..model.semantic_zoom import MIN_SCREEN_PT
from ..model.timeline import EdgeKey, Frame
from ..qt_override import reported, reported_or
from ..theme import CHAIN_RULE_PT, THEME, style
from .edge_item import HIT_WIDTH, LABEL_PT, EdgeItem, TempEdgeItem
from .group_frames import GroupFrame, make_room
from .node_item import BOX_PT, FAR_LOD, NodeItem
from .port_item import UNIT, PortItem
from .scene import CanvasScene
from .zoom_gesture import ZoomGesture

if TYPE_CHECKING:
    from .quick_search import QuickSearch

MIN_ZOOM, MAX_ZOOM, MAX_FIT_ZOOM = 0.04, 6.0, 1.25
#: Where the pulse rests when animations are off (exports): near the operand.
STATIC_PULSE = 0.8
PULSE_MS = 600
#: How long a refused edit's note stays on the canvas.
NOTE_MS = 5000
#: The camera's glide from one step's framing to the next: short, never a jump.
CAMERA_MS = 450
#: How long after a step is shown, or the camera's glide to it ends, the next step's
#: boxes are drawn ahead (ms): the view then stands where that step will draw them,
#: while the pulse travels, before the next step at the fastest playback.
AHEAD_MS = 100
#: How far (pixels on screen) from a port's centre a press still grabs it.
PORT_GRAB_PX = 11.0
_T = QEvent.Type
#: Viewport events Qt answers by asking which items lie under a point or in an area.
_HIT_TESTS = frozenset({
    _T.MouseButtonPress, _T.MouseButtonRelease, _T.MouseButtonDblClick, _T.MouseMove,
    _T.HoverEnter, _T.HoverMove, _T.ContextMenu, _T.ToolTip, _T.Wheel, _T.DragEnter,
    _T.DragMove, _T.Drop,
})


class CanvasView(QGraphicsView):
    """The canvas for ``doc``. Signals: ``statusMessage(str)`` (why an edit was refused,
    for the status bar) and ``selectionChangedIds(list)`` (selected node ids)."""

    statusMessage = Signal(str)
    selectionChangedIds = Signal(list)
    #: Space pressed and released without a drag: the window's Play/Pause.
    spaceTapped = Signal()
    #: "Check gradients" chosen on a node's right-click menu (the node id).
    gradientCheckRequested = Signal(str)
    #: Follow step was switched on or off (the window's checkable action follows it).
    followChanged = Signal(bool)
    #: A file dropped from outside (its path): the window opens it.
    fileDropped = Signal(str)

    def __init__(self, doc: GraphDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.canvas = CanvasScene(doc, self)
        self.setScene(self.canvas)
        self.animations_enabled = True
        self.setRenderHints(
            QPainter.RenderHint.Antialiasing
            | QPainter.RenderHint.TextAntialiasing
            | QPainter.RenderHint.SmoothPixmapTransform
        )
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setMouseTracking(True)  # port hover without a button pressed

        # Wheel steps reuse the boxes' pictures; the boxes render sharp once it ends.
        self._zoom_gesture = ZoomGesture(self._boxes_in_reach, self.zoom, self)
        self._pulse_anim = QVariantAnimation(
            self, startValue=0.0, endValue=1.0, duration=PULSE_MS,
            easingCurve=QEasingCurve(QEasingCurve.Type.InOutSine))
        self._pulse_anim.valueChanged.connect(lambda v: self.set_pulse_progress(float(v)))

        self._follow = False
        self._follow_paused = False  # the user moved the camera: wait for the next play
        self._camera_from: CameraTarget | None = None
        self._camera_to: CameraTarget | None = None
        self._camera_anim = QVariantAnimation(
            self, startValue=0.0, endValue=1.0, duration=CAMERA_MS,
            easingCurve=QEasingCurve(QEasingCurve.Type.InOutCubic))
        self._camera_anim.valueChanged.connect(lambda t: self._camera_step(float(t)))
        self._ahead_timer = QTimer(self, singleShot=True, interval=AHEAD_MS)
        self._ahead_timer.timeout.connect(self._draw_ahead)
        self._camera_anim.finished.connect(self._ahead_timer.start)

        self.note = QLabel(self, wordWrap=True)  # a refused edit says why right on the canvas
        self.note.setObjectName("CanvasNote")
        style(self.note, lambda: (
            f"QLabel#CanvasNote {{ background: {THEME.note_fill.name()};"
            f" color: {THEME.note_text.name()}; border: 1px solid {THEME.error.name()};"
            " border-radius: 6px; padding: 6px; }"
        ))
        self.note.hide()
        self._note_timer = QTimer(self, singleShot=True)
        self._note_timer.timeout.connect(self.note.hide)

        self._drag_port: PortItem | None = None
        self._picked: EdgeKey | None = None  # an edge lifted off its operand port
        #: Window actions offered on right-click (cut, copy, paste, ...), set by the window.
        self.node_actions: list[QAction] = []
        self.canvas_actions: list[QAction] = []
        self._temp_edge: TempEdgeItem | None = None
        self._refused: TempEdgeItem | None = None
        self._pan_last: QPoint | None = None
        self._space = False
        self._space_panned = False
        self._move_start: dict[str, Point] | None = None
        self._quick: QuickSearch | None = None
        self._quick_pos = QPointF()
        self._hover_port: PortItem | None = None
        self._search_on_release: QPoint | None = None
        self._fitted = False
        self._refitted: tuple[object, ...] = ()  # _fit_state() after the last refit
        self._moving_camera = False  # scrolls inside one camera move place no label
        self._selecting = False
        self._theme_scale = THEME.scale
        self.canvas.selectionChanged.connect(self._selection_changed)
        self.canvas.documentReplaced.connect(self._document_replaced)

    # ------------------------------------------------------------------ public API

    @property
    def edge_label_provider(self) -> Callable[[Step, bool], str] | None:
        """Text of the active edge's label (the player sets it); None: ``vjp = ...``."""
        return self.canvas.label_provider

    @edge_label_provider.setter
    def edge_label_provider(self, provider: Callable[[Step, bool], str] | None) -> None:
        self.canvas.label_provider = provider
        if self.canvas.frame is not None:
            self.canvas.apply_frame(self.canvas.frame)

    def show_frame(self, frame: Frame | None) -> None:
        """Show one moment of the playback; None: live (values and final gradients)."""
        previous = self.canvas.frame.edge_step if self.canvas.frame is not None else None
        self.canvas.apply_frame(frame)
        if self.following:
            self.frame_step(animate=self.animations_enabled)
        active = frame.edge_step if frame is not None else None
        if active is None:
            self._pulse_anim.stop()
        elif not self.animations_enabled:
            self._pulse_anim.stop()
            self.set_pulse_progress(STATIC_PULSE)
        elif active is not previous or self._pulse_anim.state() != QVariantAnimation.State.Running:
            self._pulse_anim.stop()
            self.set_pulse_progress(0.0)
            self._pulse_anim.start()
        self._ahead_timer.start()

    def _draw_ahead(self) -> None:
        """In idle time after a step, with the camera standing where the next step will
        draw (a glide does not move it at its first frame): draw the boxes that step
        changes into the box pictures (:mod:`.box_renders`), so that it copies them.
        Whatever changed since (an edit, a zoom, a theme) only changes what is looked up."""
        frame = self.canvas.frame
        if (frame is None or frame.timeline is None or frame.position >= frame.timeline.end
                or not self.isVisible()
                or self._camera_anim.state() == QVariantAnimation.State.Running):
            return
        viewport = self.viewport()
        self.canvas.draw_ahead(frame.timeline.frame(frame.position + 1), self.viewportTransform(),
                               viewport.rect(), viewport.devicePixelRatioF(), self.renderHints())

    def show_note(self, text: str) -> None:
        """Show ``text`` at the bottom of the canvas for a few seconds (why an edit was
        refused: the user is looking here, not at the status bar)."""
        self.note.setText(text)
        width = min(self.width() - 24, max(240, self.note.fontMetrics().horizontalAdvance(text)
                                              + 24))
        self.note.setFixedWidth(max(width, 100))
        self.note.adjustSize()
        self.note.move((self.width() - self.note.width()) // 2,
                       self.height() - self.note.height() - 12)
        self.note.show()
        self.note.raise_()
        self._note_timer.start(NOTE_MS)

    # ------------------------------------------------------------------ camera

    @property
    def follow_step(self) -> bool:
        """Follow step: the camera frames each step's edge (see :mod:`gui.model.camera`)."""
        return self._follow

    @follow_step.setter
    def follow_step(self, on: bool) -> None:
        on = bool(on)
        self._follow_paused = False
        if on != self._follow:
            self._follow = on
            self._set_min_text_pt()
            self.followChanged.emit(on)
        if on:
            self.frame_step(animate=self.animations_enabled)
        else:
            self._camera_anim.stop()

    @property
    def following(self) -> bool:
        """Follow step is on and the user has not taken the camera since the last play."""
        return self._follow and not self._follow_paused

    def resume_follow(self) -> None:
        """Playback (re)started: follow again after the user's own pan or zoom."""
        if self._follow and self._follow_paused:
            self._follow_paused = False
            self.frame_step(animate=self.animations_enabled)

    def _user_took_camera(self) -> None:
        """A pan, zoom or fit by the user pauses following until the next play."""
        self._camera_anim.stop()
        if self._follow:
            self._follow_paused = True

    def _set_min_text_pt(self) -> None:
        """Semantic zoom's threshold: while following, box text must be as large as the
        chain-rule text, else just readable (both grow with presentation's scale)."""
        pt = CHAIN_RULE_PT * THEME.scale if self._follow else MIN_SCREEN_PT * THEME.scale
        if pt != self.canvas.min_text_pt:
            self.canvas.min_text_pt = pt
            self.canvas.camera_boxes.mark_all()
            for item in self.canvas.nodes.values():
                item.update()

    def box_text_pt(self, node_id: str) -> float:
        """How large (points on screen) box ``node_id``'s main text shows now: its value
        text, or in the compact form its name line."""
        item = self.canvas.nodes[node_id]
        compact = item.compact_form(self.zoom())
        return (compact[0][1] if compact is not None else BOX_PT) * self.zoom()

    def edge_label_pt(self) -> float:
        """How large (points on screen) the active edge's label text shows now."""
        label = self.canvas.label
        return LABEL_PT * UNIT * label.scale() * self.zoom()

    def readable_zoom(self) -> float:
        """The zoom at which box text is as large as the chain-rule panel's text."""
        return readable_zoom(CHAIN_RULE_PT * THEME.scale, BOX_PT)

    def camera_target(
        self, frame: Frame | None = None, viewport: tuple[float, float] | None = None
    ) -> CameraTarget | None:
        """Where the camera looks for ``frame`` (default: the frame shown) in this
        viewport (or one of ``viewport`` pixels): the pure
        :func:`gui.model.camera.camera_target` fed with the boxes."""
        frame = self.canvas.frame if frame is None else frame
        known = self.canvas.camera_boxes.refresh()
        active = frame.active_edge if frame is not None else None
        extra = []
        if active is not None and self.canvas.label.isVisible():
            extra.append(rect_tuple(self.canvas.label_home()))
        if viewport is None:
            size = self.viewport().size()
            viewport = (size.width(), size.height())

        def label_fits(rect: tuple[float, float, float, float], zoom: float) -> bool:
            return not extra or self.canvas.label_clear_at(QRectF(*rect), zoom)

        pairs = known.pairs if active is None else known.pairs_at(*active[:2])
        def label_scale(zoom: float) -> float:
            return self.canvas.label.scale_for(zoom, self.canvas.label_pt)

        return camera_target(known.rects, pairs, None if active is None else active[:2],
                             viewport, self.readable_zoom(), extra, known.names,
                             known.numbers, known.whole, label_fits, known.bounds,
                             self._anchor(frame, known.rects), label_scale, known.most,
                             known.ids)

    def _anchor(self, frame: Frame | None, boxes: Mapping[str, Rect]) -> Rect | None:
        """What to look at when no edge is active and a captured model's graph cannot be
        read whole: a collapsed module playing as one step (its frame), the output's box once the
        backward pass is done; None (the whole graph) before, in the forward pass."""
        if not self.doc.read_only:  # a hand-built graph: the whole of it, as before
            return None
        group = frame.active_group if frame is not None else None
        inside = next((m for m in group.group.members if m in boxes), None) if group else None
        if group is not None and inside is not None:
            for item in self.canvas.items(QRectF(*boxes[inside])):
                if isinstance(item, GroupFrame) and item.group_id == group.group.id:
                    return rect_tuple(item.sceneBoundingRect())
            return boxes[inside]
        if frame is not None and frame.k < frame.n:
            return None
        output = self._last_node()
        return boxes.get(output) if output is not None else None

    def _last_node(self) -> str | None:
        """The node the opening view and the follow camera anchor on: the last in forward
        order (a captured trace's output)."""
        return next(reversed(self.doc.graph.nodes), None)

    def frame_step(self, animate: bool = True) -> None:
        """Move the camera to the current frame's target (gliding when ``animate``)."""
        target = self.camera_target()
        if target is None:
            return
        self._fitted = True
        self._camera_anim.stop()
        if not animate or not self.isVisible():
            self.look_at(target.center, target.zoom)
            return
        centre = self.mapToScene(self.viewport().rect().center())
        self._camera_from = CameraTarget((centre.x(), centre.y()), self.zoom(), ())
        self._camera_to = target
        self._camera_anim.start()

    def _camera_step(self, t: float) -> None:
        """One frame of the glide. While it zooms, the boxes keep the pictures they had
        at its start, scaled, as in a wheel gesture (:mod:`.zoom_gesture`): each frame
        rendered every box in view afresh at its new scale, most of a frame's cost while
        the pulse travels. The last frame draws them sharp again."""
        start, end = self._camera_from, self._camera_to
        if start is None or end is None or t <= 0.0:
            return  # (at 0 the view is where the glide starts: centring again may jump a pixel)
        if t < 1.0 and start.zoom != end.zoom:
            self._zoom_gesture.step()
        centre, zoom = interpolate(start, end, t)
        self.look_at(centre, zoom)
        if t >= 1.0:
            self._zoom_gesture.end()

    def look_at(self, centre: tuple[float, float], zoom: float) -> None:
        """Show scene point ``centre`` in the middle of the canvas at ``zoom``."""
        zoom = min(max(zoom, MIN_ZOOM), MAX_ZOOM)
        with self._camera_move():
            scaled = QTransform.fromScale(zoom, zoom)
            if self.transform() != scaled:  # the same zoom: no reset, no full repaint
                self.setTransform(scaled)
            self.centerOn(QPointF(*centre))

    def visible_scene_rect(self) -> QRectF:
        """The part of the scene the canvas shows now."""
        return self.mapToScene(self.viewport().rect()).boundingRect()

    @contextmanager
    def _camera_move(self) -> Iterator[None]:
        """Zoom and scroll steps that make one camera move: the label is placed once,
        at the end (each scroll step placed it, three times per zoom step)."""
        self._moving_camera = True
        try:
            yield
        finally:
            self._moving_camera = False
            self._view_moved()

    def _view_moved(self) -> None:
        """The camera moved (pan, zoom, resize): the step's label keeps its screen size
        and stays inside the canvas."""
        self.canvas.label_pt = CHAIN_RULE_PT * THEME.scale
        self.canvas.set_far(self.zoom() < FAR_LOD)
        self.canvas.fit_label(self.visible_scene_rect(), self.zoom())

    @reported
    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt API
        super().scrollContentsBy(dx, dy)
        if not self._moving_camera:
            self._view_moved()

    def set_pulse_progress(self, t: float) -> None:
        """Put the pulse at ``t`` along the active edge (0: consumer, 1: operand)."""
        self.canvas.set_pulse_progress(t)

    def fit_all(self, readable: bool = True, boxes: QRectF | None = None) -> None:
        """Zoom and centre so every node is visible (never zoomed in past 125 %); when
        ``readable`` and a captured model's text could not be read whole, a readable
        part around the output instead (gui.model.camera.opening_view). ``boxes``: the
        boxes' bounding rectangle, when the caller has it (None: measured here)."""
        self._fitted = True
        with self._camera_move():
            self._fit_all(readable, self.canvas.nodes_rect() if boxes is None else boxes)

    def _fit_all(self, readable: bool, rect: QRectF) -> None:
        """:meth:`fit_all` around ``rect``, the boxes' bounding rectangle."""
        if rect.isEmpty():
            self.resetTransform()
            self.centerOn(0, 0)
            return
        m = 40.0 * UNIT
        rect = rect.adjusted(-m, -m, m, m)
        # a captured model (read-only) can be too big to read whole; a hand-built graph
        # opens whole, as its teacher laid it out
        readable = readable and self.doc.read_only
        legible = MIN_ZOOM
        if readable:  # its boxes' full text, or their compact forms, as the camera reads them
            known = self.canvas.camera_boxes.refresh()
            zooms = known.names if len(known.rects) <= SMALL_GRAPH_NODES else known.numbers
            legible = least_legible(readable_zoom(MIN_SCREEN_PT * THEME.scale, BOX_PT), zooms)
        size = self.viewport().size()
        last = self._last_node()
        assert last is not None  # the graph has nodes: its rect is not empty
        output = self.canvas.nodes[last].scene_rect()
        centre, zoom = opening_view(rect_tuple(rect), rect_tuple(output),
                                    (size.width(), size.height()), legible,
                                    MAX_FIT_ZOOM * THEME.scale)
        z = min(max(zoom, MIN_ZOOM), MAX_ZOOM)
        self.resetTransform()
        self.scale(z, z)
        self.centerOn(QPointF(*centre))

    def refit(self) -> None:
        """After a resize or a new document: frame the step when following, else fit all
        (unless the view is still as the last refit left it: a file opening refits for
        the new document and again when the window applies its saved view)."""
        if self.following:
            self.frame_step(animate=False)
            return
        boxes = self.canvas.nodes_rect()  # once: fitting moves the camera, not the boxes
        if self._refitted != self._fit_state(boxes):
            self.fit_all(boxes=boxes)
            self._refitted = self._fit_state(boxes)

    def _fit_state(self, boxes: QRectF) -> tuple[object, ...]:
        """What fitting all reads and sets: the boxes' rectangle, the viewport and the
        camera."""
        centre = self.mapToScene(self.viewport().rect().center())
        return (boxes, self.viewport().size(), self.transform(), centre)

    def user_fit_all(self) -> None:
        """Fit All chosen by the user: also pauses Follow step until the next play."""
        self._user_took_camera()
        self.fit_all(readable=False)

    def zoom(self) -> float:
        return self.transform().m11()

    def _boxes_in_reach(self) -> list[NodeItem]:
        """The boxes a zoom gesture may show: in view, or in a view twice as wide and
        high (zooming out); none from far away, where no box paints itself."""
        if self.canvas.far:
            return []
        r = self.mapToScene(self.viewport().rect()).boundingRect()
        r.adjust(-r.width() / 2, -r.height() / 2, r.width() / 2, r.height() / 2)
        nodes = self.canvas.nodes
        return [nodes[n] for n in self.canvas.grid.query(r) if n in nodes]

    def zoom_by(self, factor: float, view_pos: QPoint | None = None) -> None:
        """Zoom keeping the scene point under ``view_pos`` (default: centre) in place."""
        if view_pos is None:
            view_pos = self.viewport().rect().center()
        z = self.zoom()
        factor = min(max(z * factor, MIN_ZOOM), MAX_ZOOM) / z
        if abs(factor - 1.0) < 1e-9:
            return
        anchor = self.mapToScene(view_pos)
        with self._camera_move(), self._repainting_all():
            self.scale(factor, factor)
            moved = self.mapFromScene(anchor) - view_pos
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + moved.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() + moved.y())

    @contextmanager
    def _repainting_all(self) -> Iterator[None]:
        """Scrolls inside a move that repaints the whole canvas anyway (a zoom step)
        mark it for repaint instead of first moving its pixels (two full-canvas copies
        per zoom step, drawn over right after) or the cached background's: a change
        of scale has already thrown that picture away (Qt renders a new one at the next
        paint), and scrolling it cost two more full-canvas copies, a quarter of the
        wheel's own time. Off and on again, the cache is marked for that new picture,
        as the scale had marked it."""
        mode, cache = self.viewportUpdateMode(), self.cacheMode()
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        try:
            yield
        finally:
            self.setCacheMode(cache)
            self.setViewportUpdateMode(mode)

    def selected_ids(self) -> list[str]:
        """Selected node ids, in the graph's order."""
        chosen = {i.node_id for i in self.canvas.selectedItems() if isinstance(i, NodeItem)}
        return [nid for nid in self.doc.graph.nodes if nid in chosen]

    def selected_edges(self) -> list[EdgeKey]:
        """Selected edges as (operand, consumer, operand index)."""
        return sorted(k for k, e in self.canvas.edges.items() if e.selected)

    def select_edges(self, keys: list[EdgeKey], add: bool = False) -> None:
        """Select these edges (``add``: keep the current selection, nodes included)."""
        if not add:
            self.select_ids([])
        for key in keys:
            edge = self.canvas.edges.get(key)
            if edge is not None:
                edge.set_selected(True)

    def clear_edge_selection(self) -> None:
        for edge in self.canvas.edges.values():
            edge.set_selected(False)

    def select_ids(self, ids: list[str]) -> None:
        """Select exactly these nodes (the inspector's or the search's choice)."""
        self._selecting = True
        try:
            self.clear_edge_selection()
            with self.canvas.selection_batch():
                self.canvas.clearSelection()
                for nid in ids:
                    item = self.canvas.nodes.get(nid)
                    if item is not None:
                        item.setSelected(True)
        finally:
            self._selecting = False
        self._selection_changed()

    def context_menu(self, view_pos: QPoint) -> QMenu:
        """The right-click menu at ``view_pos``: node commands over a node (which gets
        selected), otherwise adding an op right there and the view commands."""
        menu = QMenu(self)
        node = self._node_at(view_pos)
        if node is not None:
            if node.node_id not in self.selected_ids():
                self.select_ids([node.node_id])
            nid = node.node_id
            output = menu.addAction(f"Run backward from {nid!r}")
            output.setEnabled(self.doc.output != nid)
            output.triggered.connect(lambda: self._set_output(nid))
            check = menu.addAction(f"Check gradients of {nid!r}")
            check.triggered.connect(lambda: self.gradientCheckRequested.emit(nid))
            menu.addSeparator()
            menu.addActions(self.node_actions)
            return menu
        scene_pos = self.mapToScene(view_pos)
        add = menu.addMenu("Add node")
        for category in CATEGORIES:
            sub = add.addMenu(category)
            for op in ops_in(category):
                act = sub.addAction(op)
                act.triggered.connect(lambda _=False, op=op: self.add_node_at(op, scene_pos))
        menu.addSeparator()
        menu.addActions(self.canvas_actions)
        return menu

    @reported
    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt API
        self.context_menu(event.pos()).exec(event.globalPos())

    def _set_output(self, nid: str) -> None:
        error = push(self.doc, set_output(self.doc, nid))
        if error is not None:
            self.statusMessage.emit(str(error))

    def select_all(self) -> None:
        self.select_ids(list(self.doc.graph.nodes))

    def node_item(self, node_id: str) -> NodeItem | None:
        return self.canvas.nodes.get(node_id)

    def edge_item(self, key: EdgeKey) -> EdgeItem | None:
        return self.canvas.edges.get(key)

    def add_node_at(self, op: str, scene_pos: QPointF, free_spot: bool = False) -> str | None:
        """Add an ``op`` node under ``scene_pos`` (one undo step), moved fully into the
        view, and with ``free_spot`` off other boxes too (:mod:`gui.model.placement`);
        returns its id."""
        if op not in OP_NAMES:
            self.statusMessage.emit(f"Unknown op {op!r}")
            return None
        visible = rect_tuple(self.mapToScene(self.viewport().rect()).boundingRect())
        boxes = ([rect_tuple(item.scene_rect()) for item in self.canvas.nodes.values()]
                 if free_spot else [])
        size = (NodeItem.PLACEHOLDER.width(), NodeItem.PLACEHOLDER.height())
        x, y = place_box((scene_pos.x() - 80.0 * UNIT, scene_pos.y() - 18.0 * UNIT), size,
                         visible, boxes)
        cmd = AddNode(self.doc, op, (float(round(x)), float(round(y))))
        error = push(self.doc, cmd)
        if error is not None:
            self.statusMessage.emit(str(error))
            return None
        self.select_ids([cmd.node])
        return cmd.node

    def connection_error(self, a: PortItem, b: PortItem) -> str | None:
        """Why connecting ports ``a`` and ``b`` (either order) is refused, or None."""
        if a.is_output and b.is_output:
            return "an output can only connect to an operand port, not to another output"
        if not a.is_output and not b.is_output:
            return "an operand port can only connect to an output, not to another operand port"
        src, dst = (a, b) if a.is_output else (b, a)
        try:
            self.doc.graph.check_connect(src.node_id, dst.node_id, dst.index)
        except GraphError as exc:
            return str(exc)
        return None

    def try_connect(self, a: PortItem, b: PortItem) -> bool:
        """Connect an output port to an operand port (either drag direction).

        A refused connection flashes red and says why on ``statusMessage``.
        """
        reason = self.connection_error(a, b)
        if reason is None:
            src, dst = (a, b) if a.is_output else (b, a)
            error = push(self.doc, Connect(self.doc, src.node_id, dst.node_id, dst.index))
            reason = None if error is None else str(error)
        if reason is not None:
            self._flash_refused(a, b, reason)
            return False
        return True

    def delete_selected(self) -> None:
        """Delete the selected nodes and edges: one undo step for the whole selection."""
        cmd = delete_selection(self.doc, self.selected_ids(), self.selected_edges())
        if cmd is not None:
            push(self.doc, cmd)

    def auto_layout(self) -> None:
        """Lay the whole graph out in columns (one undo step, "Auto-layout"), then fit."""
        if not self.canvas.nodes:
            return
        with collector_paused():  # the layout allocates much and frees little
            corner = self.canvas.nodes_rect().topLeft()
            cmd = auto_layout(self.doc, self.canvas.layout_positions(), (corner.x(), corner.y()))
            if cmd is not None:
                push(self.doc, cmd)
            self.fit_all()

    def open_quick_search(self, view_pos: QPoint | None = None) -> QuickSearch:
        """The Tab popup at ``view_pos`` (default: the cursor, or the view's centre)."""
        if view_pos is None:
            view_pos = self.viewport().mapFromGlobal(QCursor.pos())
            if not self.viewport().rect().contains(view_pos):
                view_pos = self.viewport().rect().center()
        self._quick_pos = self.mapToScene(view_pos)
        if self._quick is None:
            from .quick_search import QuickSearch  # cold: the first Tab

            self._quick = QuickSearch(self)
            self._quick.opChosen.connect(lambda op: self.add_node_at(op, self._quick_pos))
        self._quick.popup_at(self.viewport().mapToGlobal(view_pos))
        return self._quick

    def refresh_theme(self) -> None:
        """Presentation mode changed THEME: restyle every item (line widths, contrast)
        and magnify the view by the change of ``THEME.scale`` (the boxes keep their
        size and places, so nothing overlaps at any scale)."""
        ratio = THEME.scale / self._theme_scale
        self._theme_scale = THEME.scale
        self._set_min_text_pt()
        self.canvas.restyle()
        self.resetCachedContent()
        if abs(ratio - 1.0) > 1e-9:
            self.zoom_by(ratio)
        self.viewport().update()

    def port_at(self, view_pos: QPoint, output: bool | None = None) -> PortItem | None:
        """The port nearest ``view_pos`` within a few pixels (easier than the dot), an
        output port or an operand port when ``output`` says which.

        Zoomed out, a few pixels cover a whole box: a port then reaches a quarter of
        its box's width in, so a drag from a box's side connects and one from its
        middle moves it, and a drop on a box's middle finds its free operand port (the
        nearest port there was often the box's own output)."""
        centre = self.mapToScene(view_pos)
        r = PORT_GRAB_PX / max(self.zoom(), 1e-6)
        best, best_d = None, r
        for item in self.canvas.items(QRectF(centre.x() - r, centre.y() - r, 2 * r, 2 * r)):
            if isinstance(item, NodeItem):
                reach = min(best_d, item.size[0] / 4)
                for port in (*item.in_ports, item.out_port):
                    if output is not None and port.is_output != output:
                        continue
                    d = QLineF(port.scenePos(), centre).length()
                    if d <= reach:
                        best, best_d, reach = port, d, d
        return best

    def _hover(self, view_pos: QPoint) -> None:
        """Enlarge the port under the mouse and show the connect cursor over it."""
        port = self.port_at(view_pos) if self._drag_port is None else None
        if port is self._hover_port:
            return
        old = self._hover_port.node if self._hover_port is not None else None
        if old is not None and old.scene() is self.canvas:
            old.set_hover_port(None)  # type: ignore[attr-defined]  # a NodeItem
        self._hover_port = port
        node = port.node if port is not None else None
        if node is not None:
            node.set_hover_port(port)  # type: ignore[attr-defined]  # a NodeItem
            self.viewport().setCursor(Qt.CursorShape.CrossCursor)
        elif not self._space:
            self.viewport().unsetCursor()

    def edge_at(self, view_pos: QPoint) -> EdgeItem | None:
        """The edge whose curve passes nearest ``view_pos`` (click bands overlap)."""
        at = self.mapToScene(view_pos)
        self._realize_at(QPointF(view_pos))
        best, best_d = None, None
        for item in self.items(view_pos):
            if isinstance(item, EdgeItem):
                path = item.path()
                d = min(QLineF(path.pointAtPercent(k / 64), at).length() for k in range(65))
                if best_d is None or d < best_d:
                    best, best_d = item, d
        return best

    # ------------------------------------------------------------------ connecting

    def _target_at(self, view_pos: QPoint) -> PortItem | None:
        """Where a connection drag would land: a port, or a box's natural port."""
        if self._drag_port is None:
            return self.port_at(view_pos)
        port = self.port_at(view_pos, not self._drag_port.is_output)
        if port is not None:
            return port
        node = self._node_at(view_pos)
        if node is None or node.node_id == self._drag_port.node_id:
            return None
        if not self._drag_port.is_output:
            return node.out_port
        free = [p for p in node.in_ports if not p.connected]
        return free[0] if free else (node.in_ports[0] if node.in_ports else None)

    def _node_at(self, view_pos: QPoint) -> NodeItem | None:
        item: QGraphicsItem | None = self.itemAt(view_pos)
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item

    def _begin_connect(self, port: PortItem) -> None:
        self._hover(QPoint(-1, -1))  # no hover highlight while dragging
        self._drag_port = port
        self._temp_edge = TempEdgeItem()
        self.canvas.addItem(self._temp_edge)
        self._update_connect(self.mapFromScene(port.scenePos()))

    def _update_connect(self, view_pos: QPoint) -> None:
        port, temp = self._drag_port, self._temp_edge
        assert port is not None and temp is not None
        target = self._target_at(view_pos)
        end = target.scenePos() if target is not None else self.mapToScene(view_pos)
        if port.is_output:
            temp.set_ends(port.scenePos(), end)
        else:
            temp.set_ends(end, port.scenePos())
        valid = None if target is None else self.connection_error(port, target) is None
        temp.set_valid(valid)
        self.viewport().setCursor(
            Qt.CursorShape.ForbiddenCursor if valid is False else Qt.CursorShape.CrossCursor
        )

    def _pick_up(self, port: PortItem) -> PortItem:
        """Pressing a connected operand port lifts its edge, as in Blender's editor:
        the drag then starts from the operand's output port, and the release decides
        where the edge goes (another port: moved; empty canvas: removed)."""
        node = self.doc.graph.nodes.get(port.node_id)
        src = None
        if node is not None and not port.is_output and port.index < len(node.inputs):
            src = node.inputs[port.index]
        source = self.node_item(src) if src is not None else None
        if source is None:
            return port
        assert src is not None  # its item was found above
        self._picked = (src, port.node_id, port.index)
        return source.out_port

    def _finish_connect(self, view_pos: QPoint) -> None:
        port = self._drag_port
        target = self._target_at(view_pos)
        picked, self._picked = self._picked, None
        self._cancel_connect()
        if picked is not None and port is not None:
            self._move_picked(picked, port, target)
        elif port is not None and target is not None and target is not port:
            self.try_connect(port, target)

    def _move_picked(self, picked: EdgeKey, source: PortItem, target: PortItem | None) -> None:
        """Finish dragging a lifted edge: one undo step, or nothing if it is refused."""
        _src, dst, index = picked
        if target is not None and not target.is_output and (target.node_id, target.index) == (
            dst, index
        ):
            return  # dropped back where it was
        if target is not None:
            reason = self.connection_error(source, target)
            if reason is not None:
                self._flash_refused(source, target, reason)
                return
        link = None if target is None else (source.node_id, target.node_id, target.index)
        push(self.doc, move_edge(self.doc, dst, index, link))

    def _cancel_connect(self) -> None:
        if self._temp_edge is not None:
            self.canvas.removeItem(self._temp_edge)
        self._temp_edge = None
        self._drag_port = None
        self.viewport().unsetCursor()

    def _flash_refused(self, a: PortItem, b: PortItem, reason: str) -> None:
        """Say why connecting ``a`` and ``b`` is refused, and show the connection as a red
        curve for a moment."""
        self.statusMessage.emit(f"Cannot connect: {reason}")
        if self._refused is None:
            self._refused = TempEdgeItem()
            self.canvas.addItem(self._refused)
        src, dst = (a, b) if a.is_output or b.is_output is False else (b, a)
        self._refused.set_ends(src.scenePos(), dst.scenePos())
        self._refused.set_valid(False)
        self._refused.show()
        QTimer.singleShot(700, self, self._hide_refused)

    def _hide_refused(self) -> None:
        if self._refused is not None:
            self._refused.hide()

    @property
    def refused_edge_visible(self) -> bool:
        """True while a refused connection is flashing (for tests and screenshots)."""
        return self._refused is not None and self._refused.isVisible()

    # ------------------------------------------------------------------ mouse

    @reported
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        pos = event.position().toPoint()
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (
            button == Qt.MouseButton.LeftButton and self._space
        ):
            self._pan_last = pos
            self._space_panned = self._space
            self._user_took_camera()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button == Qt.MouseButton.LeftButton:
            port = self.port_at(pos)
            if port is not None:
                self._begin_connect(self._pick_up(port))
                event.accept()
                return
            toggle = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier
                                               | Qt.KeyboardModifier.ShiftModifier))
            item = self.edge_at(pos) if isinstance(self.itemAt(pos), EdgeItem) else None
            if item is not None:
                if toggle:
                    item.set_selected(not item.selected)
                else:
                    self.select_edges([item.key])
                event.accept()
                return
            if not toggle:
                self.clear_edge_selection()
        super().mousePressEvent(event)
        if button == Qt.MouseButton.LeftButton and self._node_at(pos) is not None:
            self._move_start = {
                nid: (self.canvas.nodes[nid].x(), self.canvas.nodes[nid].y())
                for nid in self.selected_ids()
            }

    @reported
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        pos = event.position().toPoint()
        if self._pan_last is not None:
            delta = pos - self._pan_last
            self._pan_last = pos
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        if self._drag_port is not None:
            self._update_connect(pos)
            event.accept()
            return
        super().mouseMoveEvent(event)
        if self._move_start:
            self.canvas.nodes_dragged(list(self._move_start))
        elif not event.buttons():
            self._hover(pos)

    @reported
    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        pos = event.position().toPoint()
        if self._pan_last is not None:
            self._pan_last = None
            if self._space:
                self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            else:
                self.viewport().unsetCursor()
            event.accept()
            return
        if self._drag_port is not None:
            self._finish_connect(pos)
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self._commit_move()
        if self._search_on_release is not None:
            at, self._search_on_release = self._search_on_release, None
            self.open_quick_search(at)

    def toggle_group_at(self, pos: QPoint) -> bool:
        """Expand the collapsed group under ``pos`` (view coordinates), or collapse the
        expanded one whose frame (not a box in it) is there; False: no group there."""
        for item in self.items(pos):  # topmost first; a collapsed frame covers its boxes
            if isinstance(item, NodeItem):
                return False
            frame = item if isinstance(item, GroupFrame) else item.parentItem()
            if isinstance(frame, GroupFrame):
                group = next((g for g in self.doc.groups if g.id == frame.group_id), None)
                if group is None:
                    return False
                room = make_room(self.doc, self.canvas.node_sizes())
                error = push(self.doc, set_collapsed(self.doc, group.id, not group.collapsed, room))
                if error is not None:
                    self.statusMessage.emit(str(error))
                return True
        return False

    @reported
    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        pos = event.position().toPoint()
        if event.button() == Qt.MouseButton.LeftButton and self.toggle_group_at(pos):
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and self.itemAt(pos) is None:
            # open on the release that ends the double-click: a popup shown now
            # would take that release, and the view would think a button is held
            self._search_on_release = pos
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def _commit_move(self) -> None:
        """End of a drag: the boxes are already in place; record one MoveNodes."""
        start, self._move_start = self._move_start, None
        if not start:
            return
        old, new = {}, {}
        for nid, pos in start.items():
            item = self.canvas.nodes.get(nid)
            if item is not None and (item.x(), item.y()) != pos:
                old[nid], new[nid] = pos, (item.x(), item.y())
        if new:
            text = f"Move {next(iter(new))!r}" if len(new) == 1 else f"Move {len(new)} nodes"
            push(self.doc, MoveNodes(self.doc, old, new, text=text))

    @reported
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # type: ignore[override]  # noqa: N802 - Qt API
        """The scene's background as its cached picture is drawn, without antialiasing,
        also while a wheel gesture draws it straight onto the canvas (:mod:`.zoom_gesture`),
        with the painter that antialiases the items."""
        if not self.cacheMode() & QGraphicsView.CacheModeFlag.CacheBackground:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        super().drawBackground(painter, rect)

    @reported
    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        steps = event.angleDelta().y() / 120.0
        if steps:
            self._user_took_camera()
            self._zoom_gesture.step(wheel=True)
            self.zoom_by(1.15 ** steps, event.position().toPoint())
        event.accept()

    # ------------------------------------------------------------------ keys

    @reported_or(bool)
    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Input Qt hit-tests the items with: a new graph's curves held back as their
        ends are given to Qt first, those near the input (:meth:`CanvasScene.realize_near`)."""
        if event.type() in _HIT_TESTS:
            self._realize_for(event)
        return super().viewportEvent(event)

    @reported
    def _realize_for(self, event: QEvent) -> None:
        if isinstance(event, (QSinglePointEvent, QDropEvent)):  # mouse, hover, wheel, drop
            self._realize_at(event.position())
        elif isinstance(event, (QContextMenuEvent, QHelpEvent)):
            self._realize_at(QPointF(event.pos()))
        else:
            self.canvas.realize_edges()

    def _realize_at(self, view_pos: QPointF) -> None:
        """Realise the held curves whose click band may reach ``view_pos`` (a viewport
        point: Qt hit-tests the scene area of its pixel)."""
        at = self.mapToScene(view_pos.toPoint())
        r = HIT_WIDTH * UNIT + 2.0 / max(self.zoom(), 1e-6)
        self.canvas.realize_near(QRectF(at.x() - r, at.y() - r, 2 * r, 2 * r))

    @reported_or(bool)
    def event(self, event: QEvent) -> bool:
        # Space is also the window's Play/Pause shortcut: claim it here, so Space+drag
        # can pan, and hand a plain tap back through ``spaceTapped``.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Space
            and not event.modifiers()
        ):
            event.accept()
            return True
        # Tab would move the focus to the next widget; on the canvas it opens the search.
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and (
            event.key() == Qt.Key.Key_Tab
        ):
            self.keyPressEvent(event)
            return True
        return super().event(event)

    @reported
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = event.key()
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.delete_selected()
        elif key == Qt.Key.Key_F and not event.modifiers():
            self.user_fit_all()
        elif key == Qt.Key.Key_Tab:
            self.open_quick_search()
        elif key == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space, self._space_panned = True, False
                self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        elif key == Qt.Key.Key_Escape:
            if self._drag_port is not None:
                self._cancel_connect()
            else:
                self.select_ids([])
        elif event.matches(QKeySequence.StandardKey.SelectAll):
            self.select_all()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    @reported
    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            if self._pan_last is None:
                self.viewport().unsetCursor()
            if not self._space_panned:
                self.spaceTapped.emit()
            event.accept()
            return
        super().keyReleaseEvent(event)

    # ------------------------------------------------------------------ drops from the palette

    @staticmethod
    def _dropped_file(event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> str | None:
        """The one local file a drag carries (a graph or a trace to open), if any."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        return urls[0].toLocalFile() or None if len(urls) == 1 else None

    @reported
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasFormat(MIME_OP) or self._dropped_file(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    @reported
    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasFormat(MIME_OP) or self._dropped_file(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    @reported
    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        path = self._dropped_file(event)
        if path is not None and not event.mimeData().hasFormat(MIME_OP):
            event.acceptProposedAction()
            self.fileDropped.emit(path)
            return
        if not event.mimeData().hasFormat(MIME_OP):
            event.ignore()
            return
        op = bytes(event.mimeData().data(MIME_OP).data()).decode("utf-8").strip()
        self.add_node_at(op, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()
        self.setFocus()

    # ------------------------------------------------------------------ painting and state

    @reported
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self.following:
            self.frame_step(animate=False)
        elif not self._fitted:
            self.fit_all()

    @reported
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._view_moved()
        if self.following and self.isVisible():
            self.frame_step(animate=False)  # a maximised or full-screen window re-frames

    def _document_replaced(self) -> None:
        if self.isVisible():
            self.refit()
        else:
            self._fitted = False

    def _selection_changed(self) -> None:
        if not self._selecting:
            self.selectionChangedIds.emit(self.selected_ids())


def rect_tuple(r: QRectF) -> tuple[float, float, float, float]:
    """A QRectF as the camera's plain ``(x, y, w, h)``."""
    return (r.x(), r.y(), r.width(), r.height())
