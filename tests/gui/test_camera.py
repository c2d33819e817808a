"""The camera that follows the step: every example, every step, readable and in view.

A class at the back of the room reads the boxes of the edge being explained; these
tests hold the camera to that at 1280x720 in presentation mode, and check the pure
camera function and the Follow step toggle on their own.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtWidgets import QApplication

from engine.examples import list_examples
from gui.app import create_window
from gui.main_window import MainWindow
from gui.model.camera import (
    CameraTarget,
    camera_target,
    interpolate,
    neighbourhood,
)
from gui.model.semantic_zoom import MIN_EXTRA_SHARE
from gui.theme import CHAIN_RULE_PT, PRESENTATION_SCALE, THEME

EXAMPLES = [path for path, _title in list_examples()]


def box(x: float, y: float, w: float = 100.0, h: float = 50.0) -> tuple[float, ...]:
    return (x, y, w, h)


# ----------------------------------------------------------------------------- pure function


def test_neighbourhood_is_the_edge_and_its_direct_neighbours() -> None:
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "c"), ("d", "f")]
    near = neighbourhood(edges, "b", "c")
    assert near[:2] == ["c", "b"] and set(near) == {"a", "b", "c", "d", "e"}


def test_small_graph_is_framed_whole_and_never_blown_up() -> None:
    boxes = {"a": box(0, 0), "b": box(200, 0)}
    t = camera_target(boxes, [("a", "b")], ("a", "b"), (1280, 720), readable=1.2)
    assert t is not None and set(t.nodes) == {"a", "b"}
    assert t.zoom == pytest.approx(1.8)  # 1.5 x readable: fits, capped
    assert t.center == (150.0, 25.0)


def test_big_graph_frames_the_neighbourhood_at_readable_zoom() -> None:
    # a chain of 30 boxes: the whole is far too wide at readable zoom
    boxes = {f"n{i}": box(i * 200.0, 0) for i in range(30)}
    edges = [(f"n{i}", f"n{i + 1}") for i in range(29)]
    t = camera_target(boxes, edges, ("n10", "n11"), (1280, 720), readable=1.2)
    assert t is not None and set(t.nodes) == {"n9", "n10", "n11", "n12"}
    assert t.zoom >= 1.2
    x, y, w, h = t.visible_rect((1280, 720))
    for n in t.nodes:
        bx, by, bw, bh = boxes[n]
        assert x <= bx and bx + bw <= x + w and y <= by and by + bh <= y + h


def test_far_apart_pair_is_still_shown_whole() -> None:
    boxes = {"a": box(0, 0), "b": box(5000, 0), "c": box(2500, 400)}
    t = camera_target(boxes, [("a", "b"), ("c", "b")], ("a", "b"), (1280, 720), readable=1.2)
    assert t is not None and t.nodes == ("b", "a") and t.zoom < 1.2
    x, _y, w, _h = t.visible_rect((1280, 720))
    assert x <= 0 and 5100 <= x + w


def test_no_active_edge_frames_everything_and_empty_graph_has_no_target() -> None:
    boxes = {f"n{i}": box(i * 200.0, 0) for i in range(30)}
    t = camera_target(boxes, [], None, (1280, 720), readable=1.2)
    assert t is not None and len(t.nodes) == 30 and t.zoom < 1.2
    assert camera_target({}, [], None, (1280, 720), readable=1.2) is None


def test_interpolation_starts_and_ends_on_the_targets() -> None:
    a, b = CameraTarget((0.0, 0.0), 1.0, ()), CameraTarget((100.0, 50.0), 4.0, ())
    assert interpolate(a, b, 0.0) == ((0.0, 0.0), 1.0)
    assert interpolate(a, b, 1.0) == ((100.0, 50.0), 4.0)
    assert interpolate(a, b, 0.5)[1] == pytest.approx(2.0)  # geometric zoom


# ----------------------------------------------------------------------------- the window


@pytest.fixture
def presenting(qtbot, settings_sandbox, no_dialogs):  # noqa: ANN001, ANN201
    """A window in presentation mode with a 1280x720 screen's worth of room."""
    win: MainWindow = create_window()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.enter_presentation()
    win.showNormal()  # the offscreen screen is not 1280x720: size the window instead
    win.resize(1280, 720)
    qtbot.wait(20)
    QApplication.processEvents()
    win.canvas.animations_enabled = False
    yield win
    win.leave_presentation()
    win.doc.undo_stack.clear()
    win.close()
    THEME.scale, THEME.high_contrast = 1.0, False


def _visible(win: MainWindow) -> QRectF:
    view = win.canvas
    return view.mapToScene(view.viewport().rect()).boundingRect()


def test_presentation_camera_frames_every_step_of_every_example_readably(presenting) -> None:  # noqa: ANN001
    win = presenting
    assert win.canvas.follow_step and win.actions["follow"].isChecked()
    assert THEME.scale == PRESENTATION_SCALE
    panel_pt = CHAIN_RULE_PT * THEME.scale
    checked = 0
    for path in EXAMPLES:
        assert win.files.load_path(path, example=True)
        QApplication.processEvents()
        tl = win.player.timeline
        for k in range(1, len(tl.steps) + 1):
            win.player.seek(tl.position_of_step(k))
            step = win.player.frame.active
            visible = _visible(win)
            for nid in (step.consumer, step.operand):
                rect = win.canvas.node_item(nid).scene_rect()
                assert visible.contains(rect), f"{path.name} step {k}: {nid} outside the view"
            for nid in (step.consumer, step.operand):
                on_screen_pt = win.canvas.box_text_pt(nid)
                assert on_screen_pt >= panel_pt - 1e-6, (
                    f"{path.name} step {k}: {nid} text {on_screen_pt:.1f} pt < {panel_pt} pt"
                )
                # a compact box of the step keeps its gradient line, large enough
                item = win.canvas.node_item(nid)
                form = item.compact_form(win.canvas.zoom())
                if form is not None and item.content.grad is not None:
                    grad_pt = {ln.kind: pt for ln, pt in form}.get("grad", 0.0)
                    assert grad_pt * win.canvas.zoom() >= MIN_EXTRA_SHARE * panel_pt - 1e-6, (
                        f"{path.name} step {k}: {nid} gradient line missing or small"
                    )
            checked += 1
    assert checked > 50


def test_user_zoom_pauses_following_until_next_play(presenting, qtbot) -> None:  # noqa: ANN001
    win = presenting
    tl = win.player.timeline
    win.player.seek(tl.position_of_step(1))
    followed = win.canvas.zoom()
    win.canvas.zoom_by(0.5)  # programmatic zoom is not the user's
    qtbot.keyClick(win.canvas, Qt.Key.Key_F)  # Fit All: the user's own choice
    assert not win.canvas.following and win.canvas.follow_step
    fitted = win.canvas.zoom()
    win.player.seek(tl.position_of_step(2))
    assert win.canvas.zoom() == pytest.approx(fitted)  # paused: the camera stays put
    win.player.play()
    win.player.pause()
    assert win.canvas.following
    assert win.canvas.zoom() != pytest.approx(fitted) or followed == pytest.approx(fitted)


def test_follow_step_toggle_and_window_default(qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    win: MainWindow = create_window()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    try:
        assert not win.canvas.follow_step  # the window's free view by default
        win.actions["follow"].trigger()
        assert win.canvas.follow_step and win.actions["follow"].isChecked()
        win.canvas.animations_enabled = False
        tl = win.player.timeline
        win.player.seek(tl.position_of_step(2))
        target = win.canvas.camera_target()
        centre = win.canvas.mapToScene(win.canvas.viewport().rect().center())
        assert abs(centre.x() - target.center[0]) < 2 and abs(centre.y() - target.center[1]) < 2
        # a wheel turn is the user's: following pauses
        pos = win.canvas.viewport().rect().center()
        qtbot.mouseMove(win.canvas.viewport(), pos)
        win.canvas.wheelEvent(_wheel(win.canvas, pos))
        assert not win.canvas.following
        win.actions["follow"].trigger()
        assert not win.canvas.follow_step and not win.actions["follow"].isChecked()
    finally:
        win.close()


def _wheel(view, pos: QPoint):  # noqa: ANN001, ANN202
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent

    p = QPointF(pos)
    return QWheelEvent(
        p,
        QPointF(view.viewport().mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
