"""An exported frame has no tabs and no double-click: the window's hints ("see the
Jacobian heatmap tab", "(double-click: expand)", "expand it to play them") appear in the
window and never in a picture, a page or a handout, which say what is true on paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import tracefile
from engine.examples import example_path
from engine.fileformat import load
from gui.document import GraphDocument
from support import captured_mlp, torch

#: The window's hints an export must not carry.
HINTS = ("double-click", "heatmap tab", "Jacobian view", "expand it")


def _hints(text: str) -> list[str]:
    return [h for h in HINTS if h in text]


def _captured(folder: Path) -> GraphDocument:
    if torch is None:
        pytest.skip("torch is not installed")
    doc = GraphDocument()
    path = captured_mlp(folder / "mlp.bptrace")
    doc.load_trace(tracefile.load(path), path)
    return doc


def _xor() -> GraphDocument:
    doc = GraphDocument()
    doc.load(load(example_path("xor_mlp")), None)
    return doc


def _texts(sheet, interactive: bool) -> list[str]:  # noqa: ANN001
    """The write-up and every module caption at each step of ``sheet``'s player, with
    its panel and captions written for the window (``interactive``) or an export."""
    sheet.panel.interactive = interactive
    sheet.group_frames.interactive = interactive
    sheet.group_frames.apply_theme()  # every caption written again
    texts = []
    tl = sheet.player.timeline
    for k in range(1, len(tl.steps) + 1):
        sheet.show_position(tl.position_of_step(k))
        texts.append(sheet.panel.text())
        texts += [frame._shown[2] for frame in sheet.group_frames.frames.values()]
    return texts


@pytest.mark.parametrize("which", ["xor", "captured"])
def test_exported_frames_carry_none_of_the_windows_hints(
    which: str, tmp_path: Path, qapp  # noqa: ANN001
) -> None:
    from gui.export.frame_sheet import frame_sheet

    doc = _captured(tmp_path) if which == "captured" else _xor()
    with frame_sheet(doc, (1280, 720)) as sheet:
        exported = [h for t in _texts(sheet, False) for h in _hints(t)]
        window = [h for t in _texts(sheet, True) for h in _hints(t)]
    assert not exported, exported
    assert window  # the window's text has them (else nothing was tested)


def test_a_frame_sheet_writes_for_an_export(qapp) -> None:  # noqa: ANN001
    from gui.export.frame_sheet import frame_sheet

    with frame_sheet(_xor(), (640, 360)) as sheet:
        assert not sheet.panel.interactive and not sheet.group_frames.interactive


def test_a_module_too_large_to_print_says_its_shape_in_an_export(
    tmp_path: Path, qapp  # noqa: ANN001
) -> None:
    from engine.groups import GroupStep
    from gui.export.frame_sheet import frame_sheet
    from gui.model.group_view import group_jacobian_text, group_vectors

    doc = _captured(tmp_path)
    with frame_sheet(doc, (640, 360)) as sheet:
        steps = [s for s in sheet.player.timeline.steps if isinstance(s, GroupStep)]
    fwd = doc.results.forward
    big = [s for s in steps if "too large" in group_jacobian_text(doc.graph, fwd, s)]
    assert big  # a module whose Jacobian the window sends to its tab
    row, out = group_vectors(big[0])
    text = group_jacobian_text(doc.graph, fwd, big[0], interactive=False)
    assert text.endswith(f"(too large to print: {row.size}×{out.size})")
