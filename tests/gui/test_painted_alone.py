"""A whole-window repaint leaves the window's bars and docks to their own updates (issue
28), counted, not timed; and each still shows every change as a repaint from scratch
draws it: what the screen holds (the window's backing store) is compared with a fresh
rendering of the whole window (``grab``), pixel for pixel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolButton, QWidget


class _Painted(QObject):
    """Every widget that receives a paint event while installed on the application."""

    def __init__(self) -> None:
        super().__init__()
        self.widgets: list[QWidget] = []
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and isinstance(obj, QWidget):
            self.widgets.append(obj)
        return False

    def close(self) -> None:
        QApplication.instance().removeEventFilter(self)


def _left_alone(win) -> list[QWidget]:  # noqa: ANN001
    return [win.player_bar, win.menuBar(), win.palette_dock, win.inspector_dock,
            win.notes_dock, win.panels_dock]


def _painted_in_repaint(
    win, act: Callable[[], object], roots: list[QWidget] | None = None,  # noqa: ANN001
) -> list[QWidget]:
    """The bars, docks and widgets in them (or ``roots`` and theirs) that paint in a
    whole-window repaint after ``act``, its events delivered and what it changed painted
    (a first repaint)."""
    act()
    QApplication.processEvents()
    win.repaint()
    painted = _Painted()
    try:
        win.repaint()
    finally:
        painted.close()
    roots = _left_alone(win) if roots is None else roots
    return [w for w in painted.widgets if any(w is r or r.isAncestorOf(w) for r in roots)]


def test_a_steps_whole_window_repaint_paints_none_of_the_bars_and_docks(make_window) -> None:  # noqa: ANN001
    win = make_window()
    win.player.seek(win.player.timeline.position_of_step(2))
    QApplication.processEvents()
    for _ in range(3):
        assert _painted_in_repaint(win, win.player.step_forward) == []
    # (the same window repaints a bar that is not opaque: the count can fail)
    win.player_bar.setAutoFillBackground(False)
    assert win.player_bar in _painted_in_repaint(win, win.player.step_forward)


def test_the_code_dock_shown_is_left_to_its_own_updates(make_window) -> None:  # noqa: ANN001
    win = make_window()
    dock = win.pytorch.dock
    # (its contents are built when first shown or asked for)
    assert _painted_in_repaint(win, lambda: (dock.show(), dock.editor), [dock]) == []


def test_an_adds_whole_window_repaint_paints_none_of_the_bars_and_docks(make_window) -> None:  # noqa: ANN001
    win = make_window()
    view = win.canvas
    centre = view.mapToScene(view.viewport().rect().center())
    for _ in range(2):
        assert _painted_in_repaint(win, lambda: view.add_node_at("input", centre)) == []
        win.doc.undo_stack.undo()
        QApplication.processEvents()


def _screen(win) -> np.ndarray:  # noqa: ANN001
    """What the screen shows of ``win`` (its backing store), as 0xRRGGBB pixels."""
    return _pixels(QImage(win.backingStore().paintDevice()))[: win.height(), : win.width()]


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), -1)
    return rows[:, : image.width()] & 0xFFFFFF  # (a copy: the image may go)


def _shows_as_drawn_anew(win, what: str = "") -> np.ndarray:  # noqa: ANN001
    """After a whole-window repaint, the screen holds what drawing the whole window anew
    draws: no widget left out of the repaint kept a stale look. Returns the screen."""
    QApplication.processEvents()
    win.repaint()
    screen = _screen(win)
    fresh = _pixels(win.grab().toImage())
    canvas = win.canvas.viewport()  # (painted in every repaint of its own; animated)
    at = canvas.mapTo(win, QPoint(0, 0))
    screen[at.y():at.y() + canvas.height(), at.x():at.x() + canvas.width()] = 0
    fresh[at.y():at.y() + canvas.height(), at.x():at.x() + canvas.width()] = 0
    wrong = np.argwhere(screen != fresh)
    assert len(wrong) == 0, f"{what}: {len(wrong)} stale pixels, at (y, x) {wrong[0]} first"
    return screen


def _changed(before: np.ndarray, after: np.ndarray, widget: QWidget, win) -> bool:  # noqa: ANN001
    """``widget``'s area on screen shows new pixels."""
    at = widget.mapTo(win, QPoint(0, 0))
    x, y, w, h = at.x(), at.y(), widget.width(), widget.height()
    was, now = before[y:y + h, x:x + w], after[y:y + h, x:x + w]
    return was.shape != now.shape or bool((was != now).any())


def test_each_bar_and_dock_shows_its_changes_as_drawn_anew(make_window, qtbot) -> None:  # noqa: ANN001
    win = make_window()
    win.player.seek(win.player.timeline.position_of_step(2))
    screen = _shows_as_drawn_anew(win)

    def after(what: str, change: Callable[[], object], widget: QWidget) -> None:
        nonlocal screen
        change()
        new = _shows_as_drawn_anew(win, what)
        assert _changed(screen, new, widget, win)
        screen = new

    bar = win.player_bar
    after("a step: the status text, the scrubber", win.player.step_forward, bar.status_label)
    after("to the start: a button disabled", win.player.to_start,
          bar.widgetForAction(bar.named_actions["start"]))
    after("a dock's title", lambda: win.palette_dock.setWindowTitle("Operations"),
          win.palette_dock)
    button = bar.widgetForAction(bar.named_actions["end"])
    assert isinstance(button, QToolButton)
    after("a button hovered", lambda: (QTest.mouseMove(button), qtbot.wait(20)), button)
    view = win.canvas
    after("a node added: the inspector",
          lambda: view.add_node_at("input", view.mapToScene(view.viewport().rect().center())),
          win.inspector)
    after("the dark theme", lambda: win.set_theme("dark"), bar)
    after("presentation mode", win.enter_presentation, win.panels_dock)  # large, bars hidden
    qtbot.wait(50)
    _shows_as_drawn_anew(win, "presentation mode, settled")
    after("another font scale", lambda: win.set_font_scale(2.5), win.chain_rule)
    after("presentation mode left", win.leave_presentation, bar)
    qtbot.wait(50)
    after("the light theme", lambda: win.set_theme("light"), win.menuBar())
