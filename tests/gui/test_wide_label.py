"""A long edge label is wrapped, so the camera can still frame a small graph whole."""

from __future__ import annotations

from pathlib import Path

from engine.examples import EXAMPLES_DIR
from engine.fileformat import load
from gui.document import GraphDocument
from gui.export.frame_sheet import frame_sheet
from gui.export.options import View
from gui.model.labels import LABEL_WRAP_CHARS, wrap_label


def test_wrap_breaks_between_rows_then_at_commas_and_keeps_short_lines() -> None:
    short = "∂y/∂y1 = [1, 0, 0]ᵀ\n[3, 2, 1] · J = 3"
    assert wrap_label(short) == short.split("\n")
    long = "[1, 2] · J = [[0.25, 0.5, 0.75], [1.25, 1.5, 1.75], [2.25, 2.5, 2.75]]"
    lines = wrap_label(long, 40)
    assert all(len(line) <= 40 for line in lines)
    assert lines[0].endswith("],") and lines[1].startswith("  [1.25")
    assert "".join(line.strip() + " " for line in lines).split() == long.split()
    assert wrap_label("x" * 70, 40) == ["x" * 70]  # one word: left whole


def test_classifier_heads_wide_label_no_longer_pushes_the_graph_out(qapp) -> None:  # noqa: ANN001
    path = EXAMPLES_DIR / "classifier_head.bpgraph"
    doc = GraphDocument()
    doc.load(load(path, partial=True), Path(path))
    with frame_sheet(doc, (1280, 720), View.CANVAS) as sheet:
        tl = sheet.player.timeline
        sheet.show_position(tl.position_of_step(len(tl.steps)))
        label = sheet.canvas.canvas.label
        assert max(len(line) for line in label._lines) <= LABEL_WRAP_CHARS
        assert len(label.text.split("\n")[0]) > LABEL_WRAP_CHARS  # it was a long one
        target = sheet.canvas.camera_target()
        assert set(target.nodes) == set(doc.graph.nodes)  # the whole graph is framed
        visible = sheet.canvas.visible_scene_rect()
        for nid in doc.graph.nodes:
            assert visible.contains(sheet.canvas.node_item(nid).scene_rect()), nid
        assert visible.contains(label.sceneBoundingRect())
