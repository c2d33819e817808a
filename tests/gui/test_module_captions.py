"""A collapsed module's caption reads like the boxes around it: at each module's step of
captured models, exported at 1280x720 and in presentation mode, its text shows at least
as large as the canvas draws box text (the scene's least size: the chain-rule size when
the camera follows); zoomed out, its title alone, as compact boxes show their names.
Its lines had been 12-point mono at about 0.8x: 13 px, below the boxes' names."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from engine import tracefile
from gui.canvas.group_frames import BODY_PT, TITLE_PT, GroupFrame
from gui.commands import push
from gui.document import GraphDocument
from gui.export.frame_sheet import frame_sheet
from gui.group_commands import set_collapsed
from support import captured_cnn, captured_mlp, present, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _too_small(frame: GroupFrame, zoom: float) -> str | None:
    """Why ``frame``'s caption is smaller on screen than the scene's box text, if it is."""
    least = frame.least_pt()
    if BODY_PT * zoom >= least:  # the whole caption, title over the lines
        return None if TITLE_PT * zoom >= least else f"title at {TITLE_PT * zoom:.1f} pt"
    shown = frame.compact_title_pt(zoom) * zoom
    return None if shown >= least - 1e-6 else f"compact title at {shown:.1f} pt < {least}"


def _module_steps(player, view, frames) -> list[str]:  # noqa: ANN001
    """At every module step: the caption's problem (``step k: why``), none expected."""
    bad, timeline, seen = [], player.timeline, 0
    for k in range(1, len(timeline.steps) + 1):
        player.seek(timeline.position_of_step(k))
        QApplication.processEvents()
        group = player.frame.active_group
        if group is None:
            continue
        seen += 1
        why = _too_small(frames[group.group.id], view.zoom())
        if why:
            bad.append(f"step {k} {group.group.id}: {why}")
    assert seen, "no module played as one step"
    return bad


@pytest.mark.parametrize("make", [captured_mlp, captured_cnn])
def test_exported_module_captions_read_like_the_boxes(make, tmp_path: Path) -> None:  # noqa: ANN001
    path = make(tmp_path / "model.bptrace")
    for view in ("slide", "canvas"):
        doc = GraphDocument()
        doc.load_trace(tracefile.load(path), path)
        with frame_sheet(doc, (1280, 720), view) as sheet:
            bad = []
            for k in range(1, len(sheet.player.timeline.steps) + 1):
                sheet.show_position(sheet.player.timeline.position_of_step(k))
                group = sheet.player.frame.active_group
                if group is not None:
                    frame = sheet.group_frames.frames[group.group.id]
                    if why := _too_small(frame, sheet.canvas.zoom()):
                        bad.append(f"{view} step {k}: {why}")
            assert not bad, bad


def test_presentation_module_captions_read_like_the_boxes(make_window, tmp_path: Path) -> None:  # noqa: ANN001
    win = present(make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720)))
    frames = win.teaching.group_frames.frames
    assert not _module_steps(win.player, win.canvas, frames)
    # a module expanded and collapsed again reads the same
    gid = win.doc.groups[0].id
    for collapsed in (False, True):
        assert push(win.doc, set_collapsed(win.doc, gid, collapsed)) is None
    assert not _module_steps(win.player, win.canvas, frames)


def test_a_module_caption_names_its_edges_inputs_and_outputs(make_window, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720))
    frame = win.teaching.group_frames.frames[win.doc.groups[-1].id]
    assert frame.title.text() == "2 · Linear"
    lines = frame.caption.text().split("\n")
    assert lines[0] == "4 edges as one step"  # as the chain-rule heading counts them
    assert lines[1] == "in: Tanh1, 2.weight, 2.bias" and lines[2] == "out: Addmm2"


def test_a_module_box_says_its_gradients_while_its_step_plays(make_window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 24: a collapsed module shows its incoming and outgoing gradients: while its
    one step plays, the gradient at its outputs and the vjp it sends to its inputs (the
    numbers the chain-rule panel multiplies out); before and after, their names."""
    import numpy as np

    from gui.model.group_view import group_vectors

    win = make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720))
    player, frames = win.player, win.teaching.group_frames.frames
    played = 0
    for k in range(1, len(player.timeline.steps) + 1):
        player.seek(player.timeline.position_of_step(k))
        QApplication.processEvents()
        step = player.frame.active_group
        if step is None:
            continue
        played += 1
        row, vjps = group_vectors(step)
        lines = frames[step.group.id].caption.text().split("\n")
        said_out = lines[1].removeprefix("grad out: ")
        said_in = lines[2].removeprefix("grad in: ")
        assert lines[1].startswith("grad out: ") and lines[2].startswith("grad in: ")
        # the numbers said are the step's: its count and its range
        for said, v in ((said_out, row), (said_in, vjps)):
            assert said.split()[0] == str(v.size)
            assert f"max {float(np.max(v)):.4g}" in said, (said, v)
        others = [f for gid, f in frames.items() if gid != step.group.id]
        assert all("grad out" not in f.caption.text() for f in others)
    assert played
    player.to_start()
    QApplication.processEvents()
    assert all(f.caption.text().split("\n")[1].startswith("in: ") for f in frames.values())


def test_an_expanded_module_caption_reads_like_a_box_line_inside_its_frame(
        make_window, tmp_path: Path) -> None:  # noqa: ANN001
    """Expanded, a module's caption (``2 · Linear: Relu1, 2.weight, 2.bias → Addmm2``)
    is as large as a collapsed box's lines, cut short to its frame, and sits above the
    members it names (at 9.5 points a projector showed it 10 px high)."""
    win = make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720))
    frames, scene = win.teaching.group_frames.frames, win.canvas.canvas
    for group in win.doc.groups:
        assert push(win.doc, set_collapsed(win.doc, group.id, False)) is None
    QApplication.processEvents()
    for group in win.doc.groups:
        frame = frames[group.id]
        caption = frame.caption.sceneBoundingRect()
        assert frame.caption.font().pointSizeF() >= BODY_PT
        assert frame.sceneBoundingRect().contains(caption), group.id
        assert all(caption.bottom() < scene.nodes[m].scene_rect().top()
                   for m in group.members), group.id
