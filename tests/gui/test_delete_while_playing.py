"""Deleting a node while the backward pass plays leaves nothing behind on the canvas.

What the screen shows (the window's backing store, not a fresh render) after the
delete must equal the same canvas painted from scratch: no ghost borders of the
removed box, no red fragments of the edge or pulse that were active.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from gui.canvas.view import CAMERA_MS, PULSE_MS
from gui.main_window import MainWindow

#: Channel difference below which two pixels count as the same (antialiasing of a
#: background painted in pieces differs by a few levels from one painted whole).
TOLERANCE = 40


def _on_screen(win: MainWindow) -> QImage:
    """The canvas as the screen shows it now (the window's backing store)."""
    view = win.canvas.viewport()
    corner = view.mapTo(win, view.rect().topLeft())
    screen = win.windowHandle().screen()
    return screen.grabWindow(
        win.winId(), corner.x(), corner.y(), view.width(), view.height()
    ).toImage()


def _repainted(win: MainWindow, qtbot) -> QImage:  # noqa: ANN001
    """The same canvas with every cache dropped and everything painted again."""
    view = win.canvas
    view.resetCachedContent()
    for item in view.canvas.items():
        item.update()
    view.viewport().update()
    qtbot.wait(50)
    return _on_screen(win)


def _differing(a: QImage, b: QImage) -> int:
    assert a.size() == b.size()
    count = 0
    for y in range(0, a.height(), 2):
        for x in range(0, a.width(), 2):
            pa, pb = a.pixel(x, y), b.pixel(x, y)
            if (
                pa != pb
                and max(abs(((pa >> s) & 255) - ((pb >> s) & 255)) for s in (0, 8, 16)) > TOLERANCE
            ):
                count += 1
    return count


@pytest.mark.parametrize("follow", [False, True])
@pytest.mark.parametrize("which", ["operand", "consumer"])
def test_delete_during_playback_leaves_no_ghosts(
    follow: bool,
    which: str,
    qtbot,
    make_window,  # noqa: ANN001
) -> None:
    win: MainWindow = make_window(EXAMPLES_DIR / "seed4_weighted_v.bpgraph", size=(1280, 720))
    try:
        win.canvas.follow_step = follow
        tl = win.player.timeline
        win.player.seek(tl.position_of_step((len(tl.steps) + 1) // 2))
        win.player.play()
        qtbot.wait(PULSE_MS // 3)  # the pulse is on its way, the camera gliding
        nid = getattr(win.player.frame.active, which)
        win.canvas.select_ids([nid])
        qtbot.keyClick(win.canvas, Qt.Key.Key_Delete)
        assert nid not in win.doc.graph.nodes
        qtbot.wait(CAMERA_MS + PULSE_MS)
        QApplication.processEvents()
        shown = _on_screen(win)
        assert _differing(shown, _repainted(win, qtbot)) == 0
    finally:
        win.player.pause()
