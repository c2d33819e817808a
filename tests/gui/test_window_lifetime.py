"""A window freed while work it deferred is still queued (a refit after a resize, the
saved view after showing) is left alone by that work: the deferred calls die with the
object they act on. They were free-standing timers, and one ran on a freed window's boxes
(``RuntimeError: Internal C++ object (NodeItem) already deleted`` in the event loop: an
error raised into C++ like that is what shiboken 6.11 turns into freed memory, see
:mod:`gui.qt_override`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt


def test_a_window_freed_before_its_deferred_refit_runs_is_left_alone(
    qtbot: Any, settings_sandbox: None
) -> None:
    from gui.app import create_window

    win = create_window()
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    win.setWindowState(Qt.WindowState.WindowMaximized)  # queues a refit of the new size
    win.doc.undo_stack.clear()
    win.close()
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(20)  # the queued refit's turn: pytest-qt fails the test on its error
