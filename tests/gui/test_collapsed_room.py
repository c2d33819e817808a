"""A user's collapsed group box covers no box outside it: grouping (collapsed) or
collapsing pushes such boxes out of its way in the same command, undone with it."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow

MEMBERS = ["x1x2", "y1", "x1_plus_x2", "y2", "x2x3", "y3"]  # seed example 2's ops


@pytest.fixture
def window(make_window):  # noqa: ANN001, ANN201
    return make_window(size=(1280, 720))


def _covered(win: MainWindow) -> list[tuple[str, str]]:
    """(group, box) for every box outside a collapsed group that its frame meets."""
    frames, nodes = win.teaching.group_frames.frames, win.canvas.canvas.nodes
    bad = []
    for g in win.doc.groups:
        if g.collapsed and g.id in frames:
            rect = frames[g.id].rect()
            bad += [(g.id, n) for n, item in nodes.items()
                    if n not in g.members and rect.intersects(item.scene_rect())]
    return bad


def _centre_of(win: MainWindow, ids: list[str]) -> tuple[float, float]:
    rect = QRectF()
    for n in ids:
        rect = rect.united(win.canvas.canvas.nodes[n].scene_rect())
    return rect.center().x(), rect.center().y()


def test_grouping_pushes_a_box_between_the_members_out(window, qtbot, artifacts_dir) -> None:  # noqa: ANN001
    doc = window.doc
    x, y = _centre_of(window, MEMBERS)
    doc.move_nodes({"x1": (x, y)})  # a leaf (never a member) sits among the members
    before = dict(doc.positions)
    window.canvas.select_ids(["x1", *MEMBERS])
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    QApplication.processEvents()
    assert [(g.members, g.collapsed) for g in doc.groups] == [(MEMBERS, True)]
    assert not _covered(window)
    moved = {n for n in doc.positions if doc.positions[n] != before[n]}
    assert "x1" in moved and not moved & set(MEMBERS)  # the group stays where it was made
    assert window.grab().save(os.path.join(artifacts_dir, "group_pushes_x1.png"))
    doc.undo_stack.undo()  # one command: the group and the push go together
    assert doc.groups == [] and doc.positions == before
    # expanded (double-click on the box), x1 put back among the members, collapsed again
    doc.undo_stack.redo()
    frame = window.teaching.group_frames.frames["group"]
    assert window.canvas.toggle_group_at(window.canvas.mapFromScene(frame.rect().center()))
    assert not doc.groups[0].collapsed
    doc.move_nodes({"x1": (x, y)})
    window.canvas.select_ids(["y2"])
    window.teaching.actions["collapse_or_expand_group"].trigger()
    QApplication.processEvents()
    assert doc.groups[0].collapsed and not _covered(window)
