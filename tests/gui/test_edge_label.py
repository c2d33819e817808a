"""The active edge's label: readable from the back row and never cut by the canvas edge.

The label says what the step multiplies; zoomed out it keeps at least the chain-rule
text size on screen, and wherever the camera is (following or the user's own pan
and zoom) it stays inside the canvas, shrinking only when it is wider than the canvas.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication

from engine.examples import list_examples
from gui.app import create_window
from gui.canvas.scene import LABEL_MARGIN_PX, LABEL_SHADOW
from gui.main_window import MainWindow
from gui.theme import CHAIN_RULE_PT, THEME

EXAMPLES = {path.stem: path for path, _title in list_examples()}


@pytest.fixture
def window(qtbot, settings_sandbox, no_dialogs):  # noqa: ANN001, ANN201
    win: MainWindow = create_window()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    win.canvas.animations_enabled = False
    yield win
    win.doc.undo_stack.clear()
    win.close()


def _visible(win: MainWindow) -> QRectF:
    return win.canvas.visible_scene_rect()


def _check_label(win: MainWindow, where: str) -> None:
    view, label = win.canvas, win.canvas.canvas.label
    assert label.isVisible(), where
    visible, rect = _visible(win), label.sceneBoundingRect()
    assert visible.contains(rect), f"{where}: label {rect} not inside {visible}"
    natural = label.natural_rect()
    on_screen = label.scale() * view.zoom()  # screen pixels per label unit
    fills = (natural.width() + 2 * LABEL_SHADOW) * on_screen >= (
        view.viewport().width() - 2 * LABEL_MARGIN_PX - 1
    ) or (natural.height() + 2 * LABEL_SHADOW) * on_screen >= (
        view.viewport().height() - 2 * LABEL_MARGIN_PX - 1
    )
    assert fills or view.edge_label_pt() >= CHAIN_RULE_PT * THEME.scale - 1e-6, (
        f"{where}: label text {view.edge_label_pt():.1f} pt on screen"
    )


@pytest.mark.parametrize("stem", ["seed4_weighted_v", "logistic_loss", "classifier_head"])
def test_label_keeps_its_size_and_stays_inside_in_the_free_view(window, stem) -> None:  # noqa: ANN001
    win = window
    assert win.files.load_path(EXAMPLES[stem], example=True)
    QApplication.processEvents()
    tl = win.player.timeline
    for k in (1, (len(tl.steps) + 1) // 2, len(tl.steps)):
        win.player.seek(tl.position_of_step(k))
        win.canvas.fit_all()
        _check_label(win, f"{stem} step {k}, fitted")
        win.canvas.zoom_by(0.4)  # far out: the label is scaled up to stay readable
        _check_label(win, f"{stem} step {k}, zoomed out")
        # pan so the edge's middle sits at the canvas's left edge
        view = win.canvas
        anchor = (
            view.canvas.label.leader.line().p2()
            if view.canvas.label.leader.isVisible()
            else view.canvas.label.pos()
        )
        view.zoom_by(4.0)
        centre = view.visible_scene_rect().center()
        view.look_at(
            (anchor.x() + (centre.x() - view.visible_scene_rect().left()), anchor.y()), view.zoom()
        )
        _check_label(win, f"{stem} step {k}, panned to the edge")


def test_label_follows_the_window_in_an_export_sized_canvas(window) -> None:  # noqa: ANN001
    win = window
    assert win.files.load_path(EXAMPLES["seed2_stack_vjp"], example=True)
    win.canvas.follow_step = True
    tl = win.player.timeline
    for k in range(1, len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        _check_label(win, f"seed 2 step {k}, following")
