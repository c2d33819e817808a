"""The first launch teaches: seed 2 at step 0 with a guided tour of six callouts,
dismissible, never shown again unless asked from Help > Guided Tour; a later launch
opens where the user left."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from gui.guided_tour import TOUR_SEEN_KEY
from gui.main_window import MainWindow


def _launch(qtbot) -> MainWindow:  # noqa: ANN001
    from gui.app import create_window

    win = create_window()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    qtbot.wait(30)
    QApplication.processEvents()
    return win


def _close(win: MainWindow) -> None:
    win.doc.undo_stack.clear()
    win.close()


def _help_action(win: MainWindow, text: str):  # noqa: ANN202
    help_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Help")
    return next(a for a in help_menu.actions() if a.text() == text)


def test_first_launch_tours_then_later_launches_resume(
        qtbot, settings_sandbox, no_dialogs, artifacts_dir) -> None:  # noqa: ANN001
    QSettings().remove(TOUR_SEEN_KEY)  # a first launch (the sandbox marks it seen)
    win = _launch(qtbot)
    tour, callout = win.tour, win.tour.callout
    timeline = win.player.timeline
    assert win.doc.graph.nodes and "y" in win.doc.graph.nodes  # seed 2
    assert win.player.position == timeline.position_of_step(0)  # step 0, not the end
    qtbot.waitUntil(callout.isVisible)
    assert callout.count.text() == "1 of 6" and callout.title.text() == "The graph"
    assert win.rect().contains(callout.geometry())
    win.grab().save(os.path.join(artifacts_dir, "guided_tour_first_callout.png"))
    titles = [callout.title.text()]
    for _ in range(5):
        callout.next_button.click()
        assert callout.isVisible() and win.rect().contains(callout.geometry())
        titles.append(callout.title.text())
    assert titles == ["The graph", "v, the gradient you pass", "Play and Step",
                      "The edge label", "The chain rule", "F5: present"]
    assert callout.next_button.text() == "Done"
    callout.next_button.click()  # done: the tour ends, seen
    assert not callout.isVisible() and not tour.active
    assert QSettings().value(TOUR_SEEN_KEY, False, type=bool)
    win.player.seek(timeline.position_of_step(2))
    _close(win)

    again = _launch(qtbot)  # a later launch: no tour, where the user left
    try:
        qtbot.wait(50)
        assert again.tour._callout is None  # noqa: SLF001 - no tour: its callout is never built
        assert again.player.position == again.player.timeline.position_of_step(2)
        _help_action(again, "&Guided Tour").trigger()
        assert again.tour.callout.isVisible() and again.tour.callout.count.text() == "1 of 6"
        again.tour.callout.dismiss_button.click()
        assert not again.tour.callout.isVisible()
    finally:
        _close(again)


def test_dismiss_stops_the_tour_for_good(qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    QSettings().remove(TOUR_SEEN_KEY)
    win = _launch(qtbot)
    qtbot.waitUntil(win.tour.callout.isVisible)
    win.tour.callout.next_button.click()
    win.tour.callout.dismiss_button.click()
    assert not win.tour.callout.isVisible() and not win.tour.active
    assert QSettings().value(TOUR_SEEN_KEY, False, type=bool)
    _close(win)
    later = _launch(qtbot)
    try:
        qtbot.wait(50)
        assert not later.tour.callout.isVisible()
    finally:
        _close(later)


def test_presentation_mode_hides_the_tour_until_it_is_left(
        qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    """F5 while a first launch's tour is up: the projector shows the lesson, not the
    callout's small print over the chain-rule text; Esc brings the same callout back."""
    QSettings().remove(TOUR_SEEN_KEY)
    win = _launch(qtbot)
    callout = win.tour.callout
    try:
        qtbot.waitUntil(callout.isVisible)
        callout.next_button.click()
        win.enter_presentation()
        qtbot.wait(30)
        assert not callout.isVisible() and win.tour.active
        assert not QSettings().value(TOUR_SEEN_KEY, False, type=bool)  # paused, not ended
        win.leave_presentation()
        qtbot.waitUntil(callout.isVisible)
        assert callout.count.text() == "2 of 6" and win.rect().contains(callout.geometry())
    finally:
        _close(win)
