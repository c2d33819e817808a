"""The next step's boxes drawn ahead, in idle time after a step (issue 28): the step
then draws no box, and what it shows is, pixel for pixel, what drawing them shows, an
edit or a zoom in between too."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractAnimation
from PySide6.QtGui import QImage

from gui.canvas import box_renders
from gui.canvas.node_item import NodeItem
from support import count_calls


def _window(make_window, follow: bool):  # noqa: ANN001, ANN202
    """A window a few steps into the backward pass, its camera still or following (with
    its glide: a step draws before the camera moves, where the boxes were drawn ahead)."""
    win = make_window()
    win.canvas.animations_enabled = follow
    win.canvas.follow_step = follow
    player = win.player
    player.seek(player.timeline.position_of_step(2))
    win.canvas.viewport().repaint()
    return win


def _drawn_ahead(qtbot, win) -> None:  # noqa: ANN001
    """Wait (untimed) for the camera's glide and the idle pass after the step shown."""
    view = win.canvas
    qtbot.waitUntil(lambda: not view._ahead_timer.isActive()
                    and view._camera_anim.state() != QAbstractAnimation.State.Running,
                    timeout=10_000)


def _grab(win) -> QImage:  # noqa: ANN001
    win.canvas.viewport().repaint()
    return win.canvas.viewport().grab().toImage()


def _fresh(win) -> QImage:  # noqa: ANN001
    """The canvas drawn from scratch: no picture kept, every box drawn."""
    box_renders.clear()
    scene = win.canvas.canvas
    for item in scene.nodes.values():
        item.update()
    return _grab(win)


def test_stepping_on_after_the_idle_pass_draws_no_box(make_window, qtbot, monkeypatch) -> None:  # noqa: ANN001
    """Each new step's boxes were drawn in idle time: the step itself fills Qt's caches
    from the pictures (it changes boxes) and draws none; its pixels are a fresh render's."""
    for follow in (False, True):
        win = _window(make_window, follow)
        box_renders.clear()
        drawn = count_calls(monkeypatch, NodeItem, "_paint")
        filled = count_calls(monkeypatch, box_renders, "draw")
        for _ in range(4):
            _drawn_ahead(qtbot, win)
            drawn[0] = filled[0] = 0
            win.player.step_forward()
            shown = _grab(win)
            assert filled[0] > 0
            assert drawn[0] == 0
            assert shown == _fresh(win)
        monkeypatch.undo()


def test_an_edit_or_a_zoom_after_the_idle_pass_shows_a_fresh_render(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    win = _window(make_window, follow=False)
    _drawn_ahead(qtbot, win)
    doc = win.doc
    leaf = next(n for n, node in doc.graph.nodes.items() if node.is_leaf and node.value is not None)
    doc.set_value(leaf, np.asarray(doc.graph.nodes[leaf].value, dtype=float) + 1.0)
    win.player.step_forward()
    assert _grab(win) == _fresh(win)
    _drawn_ahead(qtbot, win)
    win.canvas.zoom_by(1.1)
    win.player.step_forward()
    assert _grab(win) == _fresh(win)


def test_the_stand_in_draws_what_the_box_draws(make_window, qtbot) -> None:  # noqa: ANN001
    """The picture drawn ahead for a box's present look, at the view's transform, is
    the one Qt's cache of the box was filled with when it was drawn there."""
    win = _window(make_window, follow=False)
    view, scene = win.canvas, win.canvas.canvas
    box_renders.clear()
    win.player.step_forward()
    win.player.step_back()  # (the first drawing of a look is not kept: see box_renders)
    win.player.step_forward()
    view.viewport().repaint()
    kept = dict(box_renders._pictures)
    assert kept
    box_renders.clear()
    frame = scene.frame
    for item in scene.nodes.values():
        assert item.content is not None
        item.draw_ahead(item.content, item.highlight_consumer,
                        item.sceneTransform() * view.viewportTransform(), view.viewport().rect(),
                        view.viewport().devicePixelRatioF(), view.renderHints())
    assert frame is scene.frame
    same = [k for k in kept if k in box_renders._pictures]
    assert same and len(same) == len(kept)
    for key in same:
        assert box_renders._pictures[key].toImage() == kept[key].toImage()
