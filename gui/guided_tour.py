"""The guided tour: six callouts a first launch shows over seed example 2 at step 0.

A teacher's first minute decides whether the app is used: each callout points at one
thing a lesson needs (the graph, v in the inspector, Play/Step, the edge label, the
chain-rule panel, F5), says in a sentence what it is for, and offers Next and Dismiss.
Finished or dismissed, the tour is never shown again (:data:`TOUR_SEEN_KEY`) unless
asked for from Help > Guided Tour.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .layouts import fill
from .theme import THEME

#: QSettings key: the tour was finished or dismissed (a later launch shows none).
TOUR_SEEN_KEY = "tour/seen"
#: Gap (pixels) between a callout and the widget it points at.
_GAP = 12


@dataclass(frozen=True)
class Stop:
    """One callout: its text and where it points (a rectangle in the window)."""

    title: str
    text: str
    target: Callable[[], QRect]


def _rect_of(window: QWidget, widget: QWidget) -> QRect:
    """``widget``'s rectangle in ``window``'s coordinates."""
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def stops(window) -> list[Stop]:  # noqa: ANN001 - a MainWindow (no import circle)
    """The tour's callouts over ``window`` (a :class:`~gui.main_window.MainWindow`)."""
    canvas = window.canvas

    def edge_label() -> QRect:
        label = canvas.canvas.label  # shown from step 1; before that, the graph's right
        if label.isVisible():
            return canvas.mapFromScene(label.sceneBoundingRect()).boundingRect().translated(
                canvas.mapTo(window, QPoint(0, 0)))
        area = _rect_of(window, canvas)
        return QRect(area.center().x(), area.top(), area.width() // 2, area.height() // 2)

    return [
        Stop("The graph", "Each box is one operation, drawn left to right from the inputs "
             "to the output y. Drag from a box's side to connect it.",
             lambda: _rect_of(window, canvas)),
        Stop("v, the gradient you pass", "y.backward(gradient=v): the inspector holds v. "
             "Change it and every gradient in the pass changes with it.",
             lambda: _rect_of(window, window.inspector.backward)),
        Stop("Play and Step", "Play runs the backward pass edge by edge; Step moves one "
             "edge at a time, forward or back (the arrow keys too).",
             lambda: _rect_of(window, window.player_bar)),
        Stop("The edge label", "On the active edge, its label shows the local Jacobian J "
             "and the vᵀJ it sends back to the operand.", edge_label),
        Stop("The chain rule", "This panel writes the step as the chain rule, with the "
             "numbers of the active edge.",
             lambda: _rect_of(window, window.chain_rule)),
        Stop("F5: present", "F5 shows only the canvas and the chain rule in large type, "
             "for a projector; Esc leaves. Help > Guided Tour shows this tour again.",
             lambda: _rect_of(window, window.menuBar())),
    ]


class Callout(QFrame):
    """One callout: a title, a sentence, ``k of n``, Next (Done at the end) and Dismiss."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.window_widget = parent
        self.setObjectName("TourCallout")
        self.setFrameShape(QFrame.Shape.Box)
        self.setStyleSheet(
            f"#TourCallout {{ background: {THEME.note_fill.name()};"
            f" border: 3px solid {THEME.edge_active.name()}; border-radius: 8px; }}"
            f" #TourCallout QLabel {{ color: {THEME.note_text.name()}; }}")
        self.setMaximumWidth(380)
        self.title = QLabel()
        self.title.setObjectName("TourTitle")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.title.setFont(font)
        self.text = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.count = QLabel()
        self.next_button = QPushButton("Next")
        self.dismiss_button = QPushButton("Dismiss")
        buttons = fill(QHBoxLayout(), self.count, 1, self.dismiss_button, self.next_button)
        fill(QVBoxLayout(self), self.title, self.text, buttons, margins=(14, 10, 14, 10))
        self.hide()

    def show_stop(self, stop: Stop, k: int, n: int) -> None:
        """Show ``stop`` (the ``k``-th of ``n``) beside the rectangle it points at."""
        self.title.setText(stop.title)
        self.text.setText(stop.text)
        self.count.setText(f"{k} of {n}")
        self.next_button.setText("Done" if k == n else "Next")
        self.adjustSize()
        self.move(self._place(stop.target()))
        self.show()
        self.raise_()

    def _place(self, target: QRect) -> QPoint:
        """Below the target, else above, else right of it, else inside it; always
        inside the window."""
        area = self.window_widget.rect()
        w, h = self.width(), self.height()
        x = target.center().x() - w // 2
        if target.bottom() + _GAP + h <= area.bottom():
            y = target.bottom() + _GAP
        elif target.top() - _GAP - h >= area.top():
            y = target.top() - _GAP - h
        elif target.right() + _GAP + w <= area.right():
            x, y = target.right() + _GAP, target.center().y() - h // 2
        else:
            y = target.center().y() - h // 2
        x = max(area.left() + 4, min(x, area.right() - w - 4))
        y = max(area.top() + 4, min(y, area.bottom() - h - 4))
        return QPoint(x, y)


class GuidedTour:
    """Walks the callouts of :func:`stops` over a main window."""

    def __init__(self, window) -> None:  # noqa: ANN001 - a MainWindow
        self.window = window
        self._callout: Callout | None = None
        self._stops: list[Stop] = []
        self.index = -1

    @property
    def callout(self) -> Callout:
        """The callout, built when the tour first starts (or it is asked for): a later
        launch never shows it, so its first paint never builds it."""
        if self._callout is None:
            self._callout = Callout(self.window)
            self._callout.next_button.clicked.connect(self.next)
            self._callout.dismiss_button.clicked.connect(self.dismiss)
        return self._callout

    @property
    def active(self) -> bool:
        return self.index >= 0

    def start_if_first(self) -> bool:
        """Start the tour unless it was finished or dismissed before; True if started."""
        if QSettings().value(TOUR_SEEN_KEY, False, type=bool):
            return False
        self.start()
        return True

    def start(self) -> None:
        """Show the first callout (Help > Guided Tour; a first launch)."""
        self._stops = stops(self.window)
        self.index = 0
        self._show()

    def next(self) -> None:
        """The next callout; after the last one the tour ends, as seen."""
        if not self.active:
            return
        self.index += 1
        if self.index >= len(self._stops):
            self.dismiss()
        else:
            self._show()

    def pause(self) -> None:
        """Hide the callout, keeping its place (presentation mode: a projector shows
        the lesson, not the tour's small print over the chain-rule text)."""
        if self._callout is not None:  # (a tour never started has none to hide)
            self._callout.hide()

    def resume(self) -> None:
        """Show the callout the tour was paused at again, if it had not ended."""
        if self.active:
            self._show()

    def dismiss(self) -> None:
        """End the tour; it is not shown again unless asked for."""
        self.index = -1
        if self._callout is not None:
            self._callout.hide()
        QSettings().setValue(TOUR_SEEN_KEY, True)

    def _show(self) -> None:
        self.callout.show_stop(self._stops[self.index], self.index + 1, len(self._stops))
