"""First run: no display gives one line (not Qt's abort), the window fits its screen
with the graph fitted, and status messages are seen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from gui.app import has_display
from gui.commands import Disconnect, push
from gui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def test_no_display_prints_one_line_and_exits_2() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "main.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display" in lines[0]
    for hint in ("main.py run", "main.py export", "QT_QPA_PLATFORM=offscreen"):
        assert hint in lines[0]


def test_display_detection() -> None:
    assert not has_display({}, "linux")
    assert has_display({"DISPLAY": ":0"}, "linux")
    assert has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert has_display({}, "win32") and has_display({}, "darwin")


def _window(qtbot) -> MainWindow:  # noqa: ANN001
    from gui.app import create_window

    win = create_window()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.wait(30)
    QApplication.processEvents()
    return win


def _graph_visible(win: MainWindow) -> bool:
    view = win.canvas
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    return visible.contains(view.canvas.nodes_rect())


def test_window_opens_inside_a_small_screen_with_the_graph_fitted(
        qtbot, settings_sandbox, no_dialogs, monkeypatch) -> None:  # noqa: ANN001
    projector = QRect(0, 0, 1280, 690)  # a 1280x720 screen less a panel
    monkeypatch.setattr(MainWindow, "start_screen_rect", lambda self: projector)
    win = _window(qtbot)
    try:
        assert projector.contains(win.geometry())
        assert _graph_visible(win)
        win.showMaximized()
        qtbot.waitUntil(lambda: _graph_visible(win))  # maximising fits again
    finally:
        win.close()


def test_status_messages_show_beside_problems_and_refusals_on_the_canvas(
        qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    win = _window(qtbot)
    try:
        doc, canvas = win.doc, win.canvas
        win.resize(1280, 700)
        win._problems_text = "a very long problem " * 40  # noqa: SLF001 - as the results set it
        win._elide_problems()  # noqa: SLF001
        QApplication.processEvents()
        bar = win.statusBar()
        assert win.problems.width() <= 0.5 * bar.width()
        win.show_status("Saved")
        assert bar.currentMessage() == "Saved"
        assert push(doc, Disconnect(doc, "y1", 1)) is None
        assert not canvas.try_connect(canvas.node_item("y").out_port,
                                      canvas.node_item("y1").in_ports[1])
        assert canvas.note.isVisible() and "cycle" in canvas.note.text()
        assert canvas.viewport().rect().contains(canvas.note.geometry().center())
    finally:
        win.close()
