"""What a player step leaves out of the time a user waits for it (issue 28), counted.

The next step's chain-rule write-up is laid out in idle time and shown as it is; the
app's icon is set once (setting it again made every widget drop its kept painting);
the camera reads two boxes' edges, not every edge; a zooming glide scales the boxes'
pictures instead of rendering them afresh at every frame.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QGraphicsItem

from gui.application import ensure_app
from gui.canvas.camera_boxes import CameraBoxes
from gui.canvas.node_item import BOX_CACHE
from gui.model.camera import CameraTarget, neighbourhood
from support import count_calls, laid_out_ahead


def test_the_next_write_up_is_laid_out_ahead_and_shown_as_a_fresh_one_would_be(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    win = make_window()
    panel, player = win.chain_rule, win.player
    player.to_start()
    for _ in range(3):
        player.step_forward()
        QApplication.processEvents()
        laid_out_ahead(qtbot, panel)  # idle: the next step is laid out
        ahead = panel._ahead
        assert ahead is not None
        player.step_forward()
        QApplication.processEvents()
        assert panel.browser.document() is ahead[2]  # taken, not laid out again
        fresh = QTextDocument()
        fresh.setHtml(panel.html(panel.fit))
        assert panel.text() == fresh.toPlainText()



def test_each_write_up_the_browser_takes_deletes_the_one_it_showed(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    """The documents the panel lays out are the browser's children; taking the next
    one deletes the one shown, so stepping through a pass keeps at most the one the
    browser holds, one shown from its drawing and not taken yet (ADOPT_MS), and the
    one laid out ahead: three, however many steps."""
    win = make_window()
    panel, player = win.chain_rule, win.player
    player.to_start()
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    for _ in range(8):
        player.step_forward()
        QApplication.processEvents()
        laid_out_ahead(qtbot, panel)
        assert len(panel.browser.findChildren(QTextDocument, options=direct)) <= 3

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


def test_a_zooming_glide_scales_the_boxes_pictures_and_ends_them_sharp(make_window) -> None:  # noqa: ANN001
    win = make_window()
    view = win.canvas
    view.follow_step = True
    win.player.to_start()
    win.player.step_forward()
    QApplication.processEvents()
    view._camera_anim.stop()
    centre = view.mapToScene(view.viewport().rect().center())
    view._camera_from = CameraTarget((centre.x(), centre.y()), view.zoom(), ())
    view._camera_to = CameraTarget((centre.x(), centre.y()), view.zoom() * 1.5, ())
    boxes = list(view.canvas.nodes.values())
    view._camera_step(0.5)
    assert any(b.cacheMode() == QGraphicsItem.CacheMode.ItemCoordinateCache for b in boxes)
    view._camera_step(1.0)
    assert all(b.cacheMode() == BOX_CACHE for b in boxes)
    assert abs(view.zoom() - view._camera_to.zoom) < 1e-9


def test_a_presented_step_flattens_its_edge_once_and_places_its_label_twice(
    make_window, monkeypatch,  # noqa: ANN001
) -> None:
    """Follow step and the pulse on (presentation mode): the new active edge is measured
    along its length once for its arrow, its label's samples and the pulse (three times,
    each on its own, before); the label is placed once in the view it shows in and once
    at home, where the camera frames it."""
    from gui.canvas import edge_item, scene

    win = make_window()
    view = win.canvas
    view.animations_enabled = True
    view.follow_step = True
    win.player.to_start()
    QApplication.processEvents()
    arcs = count_calls(monkeypatch, edge_item.ArcLength, "__init__")
    placings = count_calls(monkeypatch, scene, "place_label")
    for _ in range(4):
        arcs[0] = placings[0] = 0
        win.player.step_forward()
        assert view.canvas.label.isVisible()
        assert arcs[0] == 1
        assert placings[0] == 2
        view._camera_anim.stop()  # (the glide's frames place it as the view moves)
        QApplication.processEvents()
