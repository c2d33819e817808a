"""The rule a teacher relies on: the active edge's label never covers the step's two boxes
and is whole inside the canvas, at every step of every example and of captured models, in
the window and in presentation mode at 1280x720 (read from the real label item).

It did cover them: at steps 9-10 of an imported two-layer tanh network in presentation
mode, and at 93 of the 325 frames ``bench_legibility.py`` looks at."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import list_examples
from gui.commands import push
from gui.group_commands import set_collapsed
from gui.main_window import MainWindow
from support import captured_cnn, captured_mlp, torch


def _broken_steps(win: MainWindow) -> list[str]:
    """Every step whose shown label meets its consumer's or operand's box, or sticks out
    of the canvas (as ``step k: what``)."""
    canvas, view = win.canvas.canvas, win.canvas
    bad = []
    tl = win.player.timeline
    for k in range(1, len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        QApplication.processEvents()
        step = win.player.frame.active
        if step is None:  # a collapsed module's step: its boxes' numbers, no edge label
            continue
        assert canvas.label.isVisible(), f"step {k}: no label"
        label = canvas.label.sceneBoundingRect()
        for nid in (step.consumer, step.operand):
            if label.intersects(canvas.nodes[nid].scene_rect()):
                bad.append(f"step {k}: over {nid}")
        if not view.mapToScene(view.viewport().rect()).boundingRect().contains(label):
            bad.append(f"step {k}: not whole in the canvas")
    return bad


@pytest.fixture(params=["window", "presentation"])
def window(request: pytest.FixtureRequest, make_window) -> MainWindow:  # noqa: ANN001
    win = make_window(size=(1280, 720))
    win.canvas.animations_enabled = False
    if request.param == "presentation":
        win.enter_presentation()
        win.showNormal()  # the offscreen screen is not 1280x720: size the window instead
        win.resize(1280, 720)
    QApplication.processEvents()
    return win


def test_every_example_keeps_its_label_off_the_step_boxes(window: MainWindow) -> None:
    bad = []
    for path, _title in list_examples():
        assert window.files.load_path(path, example=True)
        bad += [f"{path.stem} {b}" for b in _broken_steps(window)]
    assert not bad, bad


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_captured_models_keep_their_label_off_the_step_boxes(
    window: MainWindow, tmp_path: Path
) -> None:
    # a two-layer MLP with its modules collapsed and expanded, and a small CNN
    bad = []
    assert window.files.load_path(captured_mlp(tmp_path / "mlp.bptrace"))
    bad += [f"mlp {b}" for b in _broken_steps(window)]
    for group in list(window.doc.groups):
        assert push(window.doc, set_collapsed(window.doc, group.id, False)) is None
    bad += [f"mlp expanded {b}" for b in _broken_steps(window)]
    assert window.files.load_path(captured_cnn(tmp_path / "cnn.bptrace"))
    bad += [f"cnn {b}" for b in _broken_steps(window)]
    assert not bad, bad
