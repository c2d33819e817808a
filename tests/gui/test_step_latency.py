"""What a player step leaves out of the time a user waits for it (issue 28), counted.

The next step's chain-rule write-up is laid out in idle time and shown as it is; the
app's icon is set once (setting it again made every widget drop its kept painting);
the camera reads two boxes' edges, not every edge.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication

from gui.application import ensure_app
from gui.canvas.camera_boxes import CameraBoxes
from gui.model.camera import neighbourhood
from gui.panels.chain_rule import AHEAD_MS


def test_the_next_write_up_is_laid_out_ahead_and_shown_as_a_fresh_one_would_be(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    win = make_window()
    panel, player = win.chain_rule, win.player
    player.to_start()
    for _ in range(3):
        player.step_forward()
        QApplication.processEvents()
        qtbot.wait(AHEAD_MS + 40)  # idle: the next step is laid out
        ahead = panel._ahead
        assert ahead is not None
        player.step_forward()
        QApplication.processEvents()
        assert panel.browser.document() is ahead[2]  # taken, not laid out again
        fresh = QTextDocument()
        fresh.setHtml(panel.html(panel.fit))
        assert panel.text() == fresh.toPlainText()


class _IconChanges(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        self.count += event.type() == QEvent.Type.WindowIconChange
        return False


def test_asking_for_the_app_again_leaves_every_kept_painting(make_window) -> None:  # noqa: ANN001
    win = make_window()
    ensure_app()
    spy = _IconChanges()
    win.installEventFilter(spy)
    for _ in range(3):
        assert ensure_app() is QApplication.instance()
    QApplication.processEvents()
    assert spy.count == 0
    assert not QApplication.windowIcon().isNull()


def test_the_camera_reads_the_edges_at_the_step_in_their_order() -> None:
    keys = [("a", "b", 0), ("c", "d", 0), ("b", "e", 0), ("e", "a", 1), ("f", "g", 0),
            ("a", "a", 0)]
    known = CameraBoxes({}, dict.fromkeys(keys)).refresh()
    for operand, consumer in (("a", "b"), ("e", "f"), ("x", "y")):
        at = known.pairs_at(operand, consumer)
        assert at == [p for p in known.pairs if operand in p or consumer in p]
        assert neighbourhood(at, operand, consumer) == neighbourhood(known.pairs, operand,
                                                                     consumer)
