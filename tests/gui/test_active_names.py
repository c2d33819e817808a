"""The active step's two boxes keep their names at least as large as the other boxes'.

In presentation mode at 1280x720 the other boxes' names read 27 px while the active
box's, three lines (name, gradient, value) in the same height, shrank to 17-22 px:
exactly when the class looks for it. Measured here as each compact box's name size on
screen over several steps of seed 2 and a bigger example.
"""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import example_path
from gui.main_window import MainWindow
from support import present


def _name_px(win: MainWindow) -> tuple[list[float], list[float]]:
    """The on-screen name sizes of the active step's boxes and of every other box."""
    view = win.canvas
    zoom = view.zoom()
    active: list[float] = []
    other: list[float] = []
    for item in view.canvas.nodes.values():
        form = item.compact_form(zoom)
        assert form is not None, item.node_id  # presentation mode shows them compact
        (name, pt), *_rest = form
        assert name.kind == "name"
        (active if item._in_step() else other).append(pt * zoom)  # noqa: SLF001
    return active, other


@pytest.mark.parametrize("example", ["seed2_stack_vjp", "classifier_head"])
def test_the_active_boxes_names_are_as_large_as_any(
        make_window, artifacts_dir, example) -> None:  # noqa: ANN001
    win = present(make_window(path=example_path(example), size=(1280, 720)))
    steps = len(win.player.timeline.steps)
    assert steps >= 2
    for k in sorted({1, (steps + 1) // 2, steps}):
        win.player.seek(win.player.timeline.position_of_step(k))
        QApplication.processEvents()
        active, other = _name_px(win)
        assert active and other, k
        assert min(active) >= max(other) - 0.01, (example, k, active, other)
    if example == "seed2_stack_vjp":  # the grown boxes, looked at
        win.player.seek(win.player.timeline.position_of_step(1))
        QApplication.processEvents()
        win.grab().save(os.path.join(artifacts_dir, "active_names_presentation_seed2_step1.png"))
