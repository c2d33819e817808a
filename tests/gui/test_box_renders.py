"""A box returning to a look it was drawn with is a blit, and the blit is the drawing
(issue 28): stepping back to a step shown before draws no box, and what a kept picture
puts into Qt's device cache is, pixel for pixel, what drawing the box there puts."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPixmap

from gui.canvas import box_renders
from gui.canvas.node_item import NodeItem
from support import count_calls


def _stepping_window(make_window):  # noqa: ANN001, ANN202
    """A window with the camera still (Follow step off), a few steps into the pass."""
    win = make_window()
    win.canvas.follow_step = False
    win.canvas.animations_enabled = False
    win.player.to_start()
    win.canvas.viewport().repaint()
    return win


def _step(win, forward: bool) -> None:  # noqa: ANN001
    (win.player.step_forward if forward else win.player.step_back)()
    win.canvas.viewport().repaint()


def test_stepping_back_to_a_look_drawn_before_draws_no_box(make_window, monkeypatch) -> None:  # noqa: ANN001
    """Once four steps were played forward and back (a box's first drawing, on opening,
    is not kept: a zoom or a pan's new boxes would pay for pictures never used), playing
    them again either way draws no box, though each step changes some."""
    win = _stepping_window(make_window)
    drawn = count_calls(monkeypatch, NodeItem, "_paint")
    filled = count_calls(monkeypatch, box_renders, "draw")
    for forward in [True] * 4 + [False] * 4:
        _step(win, forward)
    assert drawn[0] > 0  # each step's new looks are drawn once
    for forward in [True] * 4 + [False] * 4:
        drawn[0] = filled[0] = 0
        _step(win, forward)
        assert filled[0] > 0  # the step changed boxes: Qt asked for their pictures
        assert drawn[0] == 0


def test_a_kept_picture_fills_the_cache_as_drawing_the_box_would(
    make_window, monkeypatch,  # noqa: ANN001
) -> None:
    """After each fill from the pictures, the box is drawn again into Qt's own pixmap,
    with the painter Qt gave it: the two pixmaps are equal."""
    win = _stepping_window(make_window)
    fills, kept_fills, unequal = [0], [0], []
    original = box_renders.draw

    def checked(painter: QPainter, key: object, render) -> bool:  # noqa: ANN001
        kept = original(painter, key, render)
        device = painter.device()
        pixmap = shiboken6.wrapInstance(shiboken6.getCppPointer(device)[0], QPixmap)
        filled = pixmap.toImage()
        painter.save()
        painter.resetTransform()
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
        painter.fillRect(0, 0, device.width(), device.height(), Qt.GlobalColor.transparent)
        painter.restore()
        painter.save()
        render(painter)
        painter.restore()
        fills[0] += 1
        kept_fills[0] += kept
        if pixmap.toImage() != filled:
            unequal.append(key)
        return kept

    monkeypatch.setattr(box_renders, "draw", checked)
    for forward in [True] * 4 + [False] * 3 + [True] * 3:
        _step(win, forward)
    node = next(iter(win.canvas.canvas.nodes.values()))
    node.setSelected(True)  # a look of its own: selected
    win.canvas.viewport().repaint()
    node.setSelected(False)  # back to the one drawn before
    win.canvas.viewport().repaint()
    assert kept_fills[0] > 0 and fills[0] > kept_fills[0]
    assert unequal == []


def test_the_pictures_keep_within_their_bytes_and_a_forgotten_look_is_drawn_again(
    make_window, monkeypatch,  # noqa: ANN001
) -> None:
    win = _stepping_window(make_window)
    box_renders.clear()
    monkeypatch.setattr(box_renders, "MAX_BYTES", 1)  # one picture at a time
    drawn = count_calls(monkeypatch, NodeItem, "_paint")
    for _ in range(3):
        _step(win, forward=True)
    assert len(box_renders._pictures) == 1
    drawn[0] = 0
    _step(win, forward=False)
    assert drawn[0] > 0


def test_a_theme_change_forgets_the_pictures(make_window) -> None:  # noqa: ANN001
    win = _stepping_window(make_window)
    _step(win, forward=True)
    assert box_renders._pictures
    win.canvas.canvas.restyle()
    assert not box_renders._pictures
