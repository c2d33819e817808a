"""The player: an index into the engine's recorded trace (or a forward-mode pass), and its
controls.

The player owns no mathematics and no drawing state. Its whole state is one
integer, ``position``, on the document's :class:`~gui.model.timeline.Timeline`; the
:class:`~gui.model.timeline.Frame` it emits is ``timeline.frame(position)``, a pure
function, so stepping back restores exactly the earlier frame and an exported
image shows what the screen showed. A QTimer moves the index while playing;
the canvas animates the pulse along the active edge itself when a frame arrives.

The direction switch picks what plays after the forward pass: reverse mode (the
backward trace, vᵀJ) or forward mode (:func:`engine.forward_mode.jvp` with the
tangents the forward-mode panel set, J·t); both are steps of one timeline.

Any change to the document's results (an edit, undo, a new ``v``, backward
again) replaces the timeline and puts the player at its *end*: everything shown
is live and up to date, and nothing stale can pass for current.

Keyboard: the toolbar's actions use ``Qt.WindowShortcut``. A focused text field
(QLineEdit, QSpinBox, QTextEdit) claims Space, arrows, Home and End through Qt's
ShortcutOverride event, so typing a value never plays or steps; anywhere else in
the window the keys drive the player. The window should ``addAction`` the same
actions to any other top-level window (e.g. a presentation window) it shows.

The end-to-end product ``vᵀ J`` (one backward pass per output element) is computed
for panels off the UI thread when it is not cheap (:meth:`Player.end_to_end_or_computing`):
a worker from Qt's thread pool computes it on a copy of the graph, and a result for
results older than the current ones is dropped; exports ask :meth:`Player.end_to_end`,
which computes it at once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QRect, QRunnable, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QSizePolicy,
    QSlider,
    QStyle,
    QStyleOptionSlider,
    QToolBar,
    QWidget,
)

from engine.collector import collector_paused
from engine.errors import GraphError
from engine.forward_mode import ForwardTrace, check_tangents, jvp, one_hot
from engine.graph import Graph

from .document import GraphDocument
from .model import labels
from .model.end_to_end import COMPUTING, INLINE_WORK, Computing, EndToEnd, end_to_end, work
from .model.forward_view import CAPTURED_NO_JVP
from .model.results import Results
from .model.timeline import Direction, Frame, Timeline, timeline_of
from .paint_cache import PaintCache
from .qt_override import reported
from .theme import THEME

#: Speeds offered in the toolbar, in backward (or forward) steps per second.
SPEEDS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
#: The player's status line is at least this wide (px), and widens to the longest seen.
STATUS_MIN_WIDTH = 240

def forward_pass(doc: GraphDocument, tangents: Mapping[str, Any] | None = None) -> ForwardTrace:
    """The document's forward-mode pass with ``tangents`` (e₀ when none are given or they no
    longer fit), as the player's forward direction and the exports play it. GraphError
    (one line) when forward mode cannot run: a captured trace, or nothing to perturb."""
    if doc.read_only:
        raise GraphError(CAPTURED_NO_JVP)
    fwd = doc.results.forward
    try:
        checked = check_tangents(doc.graph, fwd, tangents or {})
        return jvp(doc.graph, fwd, checked or one_hot(doc.graph, fwd, 0))
    except GraphError:
        return jvp(doc.graph, fwd, one_hot(doc.graph, fwd, 0))


class _Relay(QObject):
    """Carries a worker's result to the UI thread (a queued signal)."""

    arrived = Signal(int, object)  # results version, EndToEnd | None


class _EndToEndJob(QRunnable):
    """:func:`end_to_end` on a worker thread, for one version of the results.

    The cyclic collector is paused while it runs: a collection that the worker's
    allocations trigger would run on the worker thread and take apart whatever Qt
    objects are waiting in cycles there (a closed window's widgets, a discarded
    document's undo stack), deleting them off the UI thread. The UI thread's own
    collections pick up the garbage afterwards."""

    def __init__(
        self, relay: _Relay, version: int, graph: Graph, results: Results, accumulated: bool
    ) -> None:
        super().__init__()
        self.relay, self.version = relay, version
        self.graph, self.results, self.accumulated = graph, results, accumulated

    @reported
    def run(self) -> None:
        try:
            with collector_paused():
                e2e = end_to_end(self.graph, self.results, self.accumulated)
        except Exception:  # noqa: BLE001 - no product rather than "computing…" for ever
            e2e = None
        try:
            self.relay.arrived.emit(self.version, e2e)
        except RuntimeError:  # the player (and its relay) closed meanwhile
            pass


class Player(QObject):
    """Plays back ``doc.results`` position by position; see the module docstring."""

    frameChanged = Signal(object)  # Frame
    endToEndReady = Signal()  # the product a panel was told is "computing…" is known
    timelineChanged = Signal()  # new results: the range and the steps changed
    playingChanged = Signal(bool)
    speedChanged = Signal(float)
    directionChanged = Signal(object)  # Direction

    def __init__(self, doc: GraphDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self._speed = 1.0
        self._direction = Direction.REVERSE
        self._tangents: dict[str, np.ndarray] = {}  # forward mode's, as last set
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)
        self._end_to_end: EndToEnd | None = None
        self._e2e_known = False
        self._version = 0  # of the results: a worker's result for an older one is dropped
        self._e2e_started: int | None = None  # the version a worker computes
        self._relay = _Relay(self)
        self._relay.arrived.connect(self._e2e_arrived)
        #: Quiz mode sets this: every frame passes through it before it is shown.
        self.frame_filter: Callable[[Frame], Frame] | None = None
        self._timeline = self._make_timeline()
        self._position = self._timeline.end
        self._frame = self._timeline.frame(self._position)
        #: While a file opens: new results show at forward done (where the lesson
        #: starts), not at the end and then there (every box drawn twice).
        self.open_at_start = False
        self._apply_interval()
        doc.resultsChanged.connect(self._results_changed)
        doc.groupsChanged.connect(self._groups_changed)

    # ------------------------------------------------------------------ state

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    @property
    def position(self) -> int:
        return self._position

    @property
    def frame(self) -> Frame:
        return self._frame

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def direction(self) -> Direction:
        return self._direction

    @property
    def forward_done_position(self) -> int:
        """Where backward starts (k = 0)."""
        return self._timeline.forward_length

    def status_text(self) -> str:
        """The state in words: forward not run / forward done / backward step k of n / done."""
        return self._frame.status

    # ------------------------------------------------------------------ moving

    def seek(self, position: int) -> None:
        """Show the frame at ``position`` (clamped to the timeline)."""
        self._go(position)

    def step_forward(self) -> None:
        """One position on (pauses playback): the next forward node or backward step."""
        self.pause()
        self._go(self._position + 1)

    def step_back(self) -> None:
        """One position back (pauses): exactly the frame that was shown before."""
        self.pause()
        self._go(self._position - 1)

    def to_start(self) -> None:
        """Forward done, nothing propagated yet (k = 0): where backward starts."""
        self.pause()
        self._go(self.forward_done_position)

    def to_end(self) -> None:
        self.pause()
        self._go(self._timeline.end)

    def play(self) -> None:
        """Play on from here; from the end, replay backward from forward done.

        With no backward to show (no output chosen, an error), play the forward pass.
        """
        if self._position >= self._timeline.end:
            start = self.forward_done_position
            if start >= self._timeline.end:
                start = 0
            self._go(start)
        if self._position >= self._timeline.end:
            return
        self._timer.start()
        self.playingChanged.emit(True)

    def play_forward(self) -> None:
        """Start from 'forward not run' and play the forward pass, then backward."""
        self._go(0)
        if self._timeline.end > 0:
            self._timer.start()
            self.playingChanged.emit(True)

    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.playingChanged.emit(False)

    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def set_speed(self, steps_per_second: float) -> None:
        """Playback speed in steps per second (forward nodes count as steps too)."""
        self._speed = max(0.05, float(steps_per_second))
        self._apply_interval()
        self.speedChanged.emit(self._speed)

    def set_direction(self, direction: Direction) -> None:
        """Play reverse mode or forward mode from here on, at its first step (k = 0).
        Raises GraphError (one line) when forward mode cannot run on this document."""
        if direction is self._direction:
            return
        if direction is Direction.FORWARD:
            self._forward_trace()  # refuse before changing anything
        self._direction = direction
        self._rebuild(self._timeline.forward_length)
        self.directionChanged.emit(direction)

    @property
    def tangents(self) -> dict[str, np.ndarray]:
        """Forward mode's tangents as last set (a copy; empty: e₀)."""
        return dict(self._tangents)

    def set_tangents(self, tangents: Mapping[str, Any]) -> None:
        """Forward mode's tangents u (one per input that requires grad); checked like
        ``torch.func.jvp`` checks them (GraphError names the input). In the forward
        direction the pass replays from its first step; the same tangents again: no work."""
        checked = check_tangents(self.doc.graph, self.doc.results.forward, tangents)
        same = checked.keys() == self._tangents.keys() and all(
            np.array_equal(u, self._tangents[x]) for x, u in checked.items()
        )
        if same:
            return
        self._tangents = checked
        if self._direction is Direction.FORWARD:
            self._rebuild(self._timeline.forward_length)

    def _forward_trace(self) -> ForwardTrace:
        """The forward-mode pass of the set tangents (e₀ when they no longer fit)."""
        return forward_pass(self.doc, self._tangents)

    # ------------------------------------------------------------------ derived data

    def end_to_end(self) -> EndToEnd | None:
        """The whole backward call as ``vᵀ J`` (engine-computed at once, cached per results)."""
        if not self._e2e_known:
            doc = self.doc
            self._end_to_end = end_to_end(doc.graph, doc.results, bool(doc.prior_grads))
            self._e2e_known = True
        return self._end_to_end

    def end_to_end_or_computing(self) -> EndToEnd | Computing | None:
        """For panels: the product if known or cheap, else :data:`COMPUTING` while a
        worker computes it (``endToEndReady`` follows); the UI thread never waits."""
        doc = self.doc
        if self._e2e_known or work(doc.results) <= INLINE_WORK:
            return self.end_to_end()
        if self._e2e_started != self._version:
            self._e2e_started = self._version
            job = _EndToEndJob(self._relay, self._version, doc.graph.copy(), doc.results,
                               bool(doc.prior_grads))
            QThreadPool.globalInstance().start(job)
        return COMPUTING

    def _e2e_arrived(self, version: int, e2e: object) -> None:
        if version != self._version:
            return  # for older results
        if not self._e2e_known:  # else computed at once meanwhile (an export asked)
            self._end_to_end = e2e if isinstance(e2e, EndToEnd) else None
            self._e2e_known = True
        self.endToEndReady.emit()

    # ------------------------------------------------------------------ internals

    def _go(self, position: int) -> None:
        p = max(0, min(int(position), self._timeline.end))
        if p == self._position:
            return
        self._position = p
        self._frame = self._filtered(self._timeline.frame(p))
        self.frameChanged.emit(self._frame)

    def _make_timeline(self) -> Timeline:
        """The document's timeline; each collapsed group plays as one step; in the
        forward direction, the forward-mode pass (back to reverse if it cannot run)."""
        doc = self.doc
        groups = doc.live_groups()
        self._built_for = (doc.results, [g for g in groups if g.collapsed])
        tangents = None
        if self._direction is Direction.FORWARD:
            try:
                tangents = self._forward_trace()
            except GraphError:
                self._direction = Direction.REVERSE
                self.directionChanged.emit(self._direction)
        return timeline_of(doc.graph, doc.results, groups, tangents)

    def frame_at(self, position: int) -> Frame:
        """The frame showing ``position`` would show (clamped; what a panel lays out
        ahead, in idle time, for the next step)."""
        return self._filtered(self._timeline.frame(position))

    def _filtered(self, frame: Frame) -> Frame:
        return frame if self.frame_filter is None else self.frame_filter(frame)

    def refresh_frame(self) -> None:
        """Show the current position again (after ``frame_filter`` or its state changed)."""
        self._frame = self._filtered(self._timeline.frame(self._position))
        self.frameChanged.emit(self._frame)

    def _tick(self) -> None:
        self._go(self._position + 1)
        if self._position >= self._timeline.end:
            self.pause()

    def _apply_interval(self) -> None:
        self._timer.setInterval(max(10, int(round(1000.0 / self._speed))))

    def _groups_changed(self) -> None:
        """Groups changed: a new timeline only if what plays as one step changed (opening
        a file announces new results and then its groups; the results built it already)."""
        doc = self.doc
        results, collapsed = self._built_for
        if results is not doc.results or collapsed != [g for g in doc.live_groups() if g.collapsed]:
            self._results_changed()

    def _results_changed(self) -> None:
        self._end_to_end, self._e2e_known = None, False
        self._version += 1
        self._rebuild(None)

    def _rebuild(self, position: int | None) -> None:
        """A new timeline, shown at ``position`` (None: its end)."""
        self.pause()
        self._timeline = self._make_timeline()
        if position is None:
            position = self._timeline.forward_length if self.open_at_start else self._timeline.end
        self._position = position
        self._position = max(0, min(self._position, self._timeline.end))
        self._frame = self._filtered(self._timeline.frame(self._position))
        self.timelineChanged.emit()
        self.frameChanged.emit(self._frame)


def _handle_rect(slider: QSlider) -> tuple[int, int, int, int]:
    """Where ``slider`` draws its handle (the groove is filled up to it)."""
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    rect = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, slider
    )
    return rect.x(), rect.y(), rect.width(), rect.height()


def _handle_moved(slider: QSlider, kept: Hashable, new: Hashable) -> QRect | None:
    """The part of ``slider`` (horizontal) that can look different once its handle moved
    from ``kept`` to ``new`` (:func:`_handle_rect`'s): both of the handle's places and a
    handle's width either side of them, where a style ends the groove's fill (Fusion's
    stops a pixel before the handle), the slider's whole height; None when the handle
    changed its size (another range, another look)."""
    if not (isinstance(kept, tuple) and isinstance(new, tuple)) or kept[1:] != new[1:]:
        return None
    width = kept[2]
    left, right = min(kept[0], new[0]) - width, max(kept[0], new[0]) + 2 * width
    return QRect(left, 0, right - left, slider.height())


class Scrubber(QSlider):
    """The toolbar's slider over the steps. A step moves its handle a few pixels, and
    only the part of it that can look different (:func:`_handle_moved`) is marked for
    repaint: Qt marked the whole slider, and the toolbar and the window behind it (the
    slider is see-through) painted their nine hundred pixels under it on every step."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        #: The handle last marked, and the slider's size then (laid out anew since: whole).
        self._marked: tuple[tuple[int, int], tuple[int, int, int, int]] | None = None

    @reported
    def sliderChange(self, change: QSlider.SliderChange) -> None:  # noqa: N802 - Qt API
        kept, size = self._marked, (self.width(), self.height())
        handle = _handle_rect(self)
        self._marked = (size, handle)
        part = None
        if change == QSlider.SliderChange.SliderValueChange and kept and kept[0] == size:
            part = _handle_moved(self, kept[1], handle)
        if part is None:
            super().sliderChange(change)
        else:
            self.update(part)


def connect_canvas(player: Player, canvas: Any) -> None:
    """Wire a CanvasView to the player: every frame, and the edge-label text.

    The canvas draws (and animates the pulse when a new step arrives); the label
    text comes from :func:`gui.model.labels.edge_label`.
    """
    canvas.edge_label_provider = labels.edge_label
    player.frameChanged.connect(canvas.show_frame)
    player.playingChanged.connect(lambda playing: playing and canvas.resume_follow())
    canvas.show_frame(player.frame)


# --------------------------------------------------------------------------- toolbar


class PlayerToolbar(QToolBar):
    """Play/Pause, step, start/end, play forward, a scrubber, speed and the status.

    ``named_actions`` maps ``play``, ``step_forward``, ``step_back``, ``start``, ``end``,
    ``play_forward`` to QActions (window shortcuts, see the module docstring) so
    the window can put the same actions in its menus.
    """

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__("Player", parent)
        self.setObjectName("PlayerToolbar")
        self.player = player
        self.named_actions: dict[str, QAction] = {}
        style = self.style()
        SP = QStyle.StandardPixmap

        def make(name: str, text: str, icon: QStyle.StandardPixmap, keys: list[str],
                 slot: Callable[[], None], tip: str) -> QAction:
            act = QAction(style.standardIcon(icon), text, self)
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            shown = " / ".join(keys)
            act.setToolTip(f"{tip} ({shown})" if keys else tip)
            act.triggered.connect(slot)
            self.named_actions[name] = act
            return act

        make("play_forward", "Play forward", SP.SP_MediaSeekForward, [],
             player.play_forward, "Play the forward pass first, then backward")
        make("start", "Start", SP.SP_MediaSkipBackward, ["Home"], player.to_start,
             "Forward done: backward not started")
        make("step_back", "Step back", SP.SP_ArrowLeft, ["Left", "PgUp"],
             player.step_back, "Step back")
        make("play", "Play", SP.SP_MediaPlay, ["Space"], player.toggle_play, "Play / Pause")
        make("step_forward", "Step forward", SP.SP_ArrowRight, ["Right", "PgDown"],
             player.step_forward, "Step forward")
        make("end", "End", SP.SP_MediaSkipForward, ["End"], player.to_end,
             "Backward done")
        for name in ("play_forward", "start", "step_back", "play", "step_forward", "end"):
            self.addAction(self.named_actions[name])
        self.addSeparator()

        self.direction_box = QComboBox(self)
        self.direction_box.setObjectName("PlayerDirection")
        self.direction_box.setToolTip(
            "What plays after the forward pass: reverse mode (vᵀJ, output to inputs) or "
            "forward mode (J·t, inputs to outputs; tangents in the Forward mode tab)"
        )
        self.direction_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for d in Direction:
            self.direction_box.addItem(d.value, d)
        self.direction_box.currentIndexChanged.connect(self._direction_chosen)
        self.addWidget(self.direction_box)

        self.scrubber = Scrubber(self)
        self.scrubber.setObjectName("PlayerScrubber")
        self.scrubber.setToolTip("Scrub through the forward and backward steps")
        self.scrubber.setMinimumWidth(160)
        self.scrubber.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.scrubber.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # arrows stay with the player
        self.scrubber.valueChanged.connect(self._scrubbed)
        self.addWidget(self.scrubber)
        PaintCache(self)  # a whole-window repaint blits the toolbar's gradient
        # An edit at the end of backward sets another range with the handle where it
        # was (at the end): what the slider shows is where its handle is.
        # A step moves the handle a few pixels: only around its two places is drawn again.
        PaintCache(self.scrubber, state=lambda: _handle_rect(self.scrubber), backdrop=True,
                   early=True, moved=lambda kept, new: _handle_moved(self.scrubber, kept, new))

        self.speed_box = QComboBox(self)
        self.speed_box.setToolTip("Playback speed (1× = one step per second)")
        self.speed_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for s in SPEEDS:
            self.speed_box.addItem(f"{s:g}×", s)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_box.currentIndexChanged.connect(
            lambda i: player.set_speed(float(self.speed_box.itemData(i))))
        self.addWidget(self.speed_box)

        # Plain text, as the status bar's copy: the line names nodes, and an id is user text.
        self.status_label = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.status_label.setObjectName("PlayerStatus")
        self._widened_for: object = None  # the timeline the status's width grew for
        self.status_label.setContentsMargins(8, 0, 8, 0)
        self.addWidget(self.status_label)

        # (a new timeline's first frame follows it at once: every edit showed the
        # range, the actions and the status twice)
        player.frameChanged.connect(self._refresh)
        player.playingChanged.connect(self._refresh)
        player.speedChanged.connect(self._speed_changed)
        player.directionChanged.connect(self._show_direction)
        self.apply_theme()
        self._refresh()

    def apply_theme(self) -> None:
        """Honour THEME.scale (presentation mode) for the status text and icons."""
        self.status_label.setFont(THEME.font(11, bold=True))
        self._widened_for = None  # another size of text: measured from the start again
        self._widen_status(self.player.timeline)
        self.speed_box.setFont(THEME.font(10))
        self.direction_box.setFont(THEME.font(10))
        px = int(round(22 * THEME.scale))
        self.setIconSize(self.iconSize().scaled(px, px, Qt.AspectRatioMode.IgnoreAspectRatio))
        for action in self.named_actions.values():
            self._settle_icon(action.icon())

    def _settle_icon(self, icon: QIcon) -> None:
        """Ask ``icon`` once for its picture at the bar's size: Qt's icon engine answers
        the first such call with another rendering than every later one (the arrows' edges
        a shade darker), and the bar, left out of its window's repaints
        (:func:`~gui.paint_cache.painted_alone`), would keep that first one on screen."""
        icon.pixmap(self.iconSize(), self.devicePixelRatioF())

    def _direction_chosen(self, index: int) -> None:
        try:
            self.player.set_direction(self.direction_box.itemData(index))
        except GraphError as exc:  # forward mode cannot run here: say why, stay in reverse
            self._show_direction(self.player.direction)
            self.status_label.setText(str(exc))

    def _show_direction(self, direction: Direction) -> None:
        self.direction_box.blockSignals(True)
        self.direction_box.setCurrentIndex(self.direction_box.findData(direction))
        self.direction_box.blockSignals(False)

    def _scrubbed(self, value: int) -> None:
        if value != self.player.position:
            self.player.pause()
            self.player.seek(value)

    def _speed_changed(self, speed: float) -> None:
        for i in range(self.speed_box.count()):
            if abs(float(self.speed_box.itemData(i)) - speed) < 1e-9:
                self.speed_box.blockSignals(True)
                self.speed_box.setCurrentIndex(i)
                self.speed_box.blockSignals(False)

    def _refresh(self, *_args: object) -> None:
        p = self.player
        tl = p.timeline
        self.scrubber.blockSignals(True)
        self.scrubber.setRange(0, tl.end)
        self.scrubber.setValue(p.position)
        self.scrubber.blockSignals(False)
        play = self.named_actions["play"]
        SP = QStyle.StandardPixmap
        if p.playing and play.text() != "Pause":  # a new icon only when the state changes
            play.setIcon(self.style().standardIcon(SP.SP_MediaPause))
            play.setText("Pause")
            self._settle_icon(play.icon())
        elif not p.playing and play.text() != "Play":
            play.setIcon(self.style().standardIcon(SP.SP_MediaPlay))
            play.setText("Play")
            self._settle_icon(play.icon())
        self.named_actions["step_back"].setEnabled(p.position > 0)
        self.named_actions["step_forward"].setEnabled(p.position < tl.end)
        self.named_actions["end"].setEnabled(p.position < tl.end)
        self.named_actions["start"].setEnabled(p.position != p.forward_done_position)
        self.named_actions["play"].setEnabled(tl.end > 0)
        self.status_label.setText(p.status_text())
        self._widen_status(tl)

    def _widen_status(self, timeline: object) -> None:
        """While one pass plays (one timeline, one font) the status only widens: a
        shorter line keeps the width of the longest seen, so the scrubber beside it keeps
        its width instead of jumping (and the toolbar being laid out again) every few
        steps."""
        label = self.status_label
        if timeline is not self._widened_for:
            self._widened_for = timeline
            label.setMinimumWidth(STATUS_MIN_WIDTH)
        margins = label.contentsMargins()
        flags = label.alignment().value | Qt.TextFlag.TextExpandTabs.value
        text = label.fontMetrics().boundingRect(0, 0, 2000, 2000, flags, label.text())
        wide = text.width() + margins.left() + margins.right()  # as QLabel measures it
        if wide > label.minimumWidth():
            label.setMinimumWidth(wide)
