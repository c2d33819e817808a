"""The active edge's label is readable from the back row: in presentation mode at 1280x720
XOR's step 4 (h → XW1: a 16-number row and a 4×4 J) shrank its label to 12-13 px while
everything else was 22+ px. A label whose full text cannot show whole in view, off the
step's boxes, at the readable size (:attr:`CanvasScene.label_pt`) now shows its short text
(tensors as the chain-rule panel's elided mode writes them) at that size; only when even
that does not fit does it shrink.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.model import labels
from support import present

EXAMPLES = sorted((Path(__file__).parents[2] / "assets" / "examples").glob("*.bpgraph"))
EPS = 0.05


def _show_step(win: MainWindow, k: int) -> None:
    win.player.seek(win.player.timeline.position_of_step(k))
    QApplication.processEvents()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_presentation_label_readable_every_step(make_window, path: Path) -> None:  # noqa: ANN001
    win = present(make_window(path, size=(1280, 720)))
    canvas = win.canvas.canvas
    assert EXAMPLES  # the examples were found
    for k in range(1, len(win.player.timeline.steps) + 1):
        _show_step(win, k)
        if not canvas.label.isVisible():
            continue
        step = canvas._label_step
        shown = win.canvas.edge_label_pt()
        if shown >= canvas.label_pt - EPS:
            continue
        # smaller than readable only with its short text shown (and it still didn't fit)
        assert canvas.label.text == canvas._label_text(short=True), (path.stem, k, shown)
        assert step is not None


def test_xor_step4_presentation_shows_the_short_text(make_window) -> None:  # noqa: ANN001
    path = Path(__file__).parents[2] / "assets" / "examples" / "xor_mlp.bpgraph"
    win = present(make_window(path, size=(1280, 720)))
    _show_step(win, 4)
    canvas = win.canvas.canvas
    step = win.player.frame.active
    assert canvas.label.text == labels.edge_label(step, short=True)
    assert canvas.label.text != labels.edge_label(step)
    assert "[4×4]" in canvas.label.text and "diagonal" in canvas.label.text  # structure kept
    assert win.canvas.edge_label_pt() >= canvas.label_pt - EPS


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_window_small_steps_keep_the_full_text(make_window, k: int) -> None:  # noqa: ANN001
    win = make_window(size=(1600, 1000))  # seed example 2
    win.canvas.animations_enabled = False
    if k > len(win.player.timeline.steps):
        pytest.skip("fewer steps")
    _show_step(win, k)
    step = win.player.frame.active
    assert win.canvas.canvas.label.text == labels.edge_label(step)


def test_short_text_follows_the_panel_elision() -> None:
    import numpy as np

    assert labels.short_tensor(np.zeros((4, 4))) == "[4×4]"
    assert labels.short_tensor(np.arange(3.0)) == "[0, 1, 2]"
    assert labels.short_tensor(np.zeros((4, 4)), as_row=True).startswith("4×4  min")
    assert labels.short_jacobian_text(np.array([[2.0]])) == "2"
