"""The rule a teacher relies on: the active edge's label never covers the step's two boxes
(a collapsed module's step: the module's box) and is whole inside the canvas, at every
step of every example and of three captured models (modules collapsed and expanded), in
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
from support import captured_block, captured_cnn, captured_mlp, torch


def _broken_steps(win: MainWindow) -> list[str]:
    """Every step whose shown label meets its consumer's or operand's box (a collapsed
    module's step: the module's box), or sticks out of the canvas (as ``step k: what``)."""
    canvas, view = win.canvas.canvas, win.canvas
    frames = win.teaching.group_frames.frames
    bad = []
    tl = win.player.timeline
    modules = 0
    for k in range(1, len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        QApplication.processEvents()
        frame = win.player.frame
        step = frame.active
        if step is None:  # a collapsed module's step: its box's numbers, no edge label
            assert frame.active_group is not None, f"step {k}: neither an edge nor a module"
            modules += 1
            boxes = {frame.active_group.group.id: frames[frame.active_group.group.id].rect()}
            if not canvas.label.isVisible():
                continue
        else:
            assert canvas.label.isVisible(), f"step {k}: no label"
            boxes = {n: canvas.nodes[n].scene_rect() for n in (step.consumer, step.operand)}
        label = canvas.label.sceneBoundingRect()
        bad += [f"step {k}: over {name}" for name, box in boxes.items() if label.intersects(box)]
        if not view.mapToScene(view.viewport().rect()).boundingRect().contains(label):
            bad.append(f"step {k}: not whole in the canvas")
    collapsed = any(g.collapsed for g in win.doc.groups)
    assert bool(modules) == collapsed, f"{modules} module steps, collapsed: {collapsed}"
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
    # a two-layer MLP, a small CNN and a transformer-style block, each with its modules
    # collapsed (each plays as one step) and expanded (their edges play)
    bad = []
    for name, make in (("mlp", captured_mlp), ("cnn", captured_cnn), ("block", captured_block)):
        assert window.files.load_path(make(tmp_path / f"{name}.bptrace"))
        bad += [f"{name} {b}" for b in _broken_steps(window)]
        for group in list(window.doc.groups):
            assert push(window.doc, set_collapsed(window.doc, group.id, False)) is None
        bad += [f"{name} expanded {b}" for b in _broken_steps(window)]
    assert not bad, bad
