"""An exported frame's chain-rule write-up fits its column whole, at a size a reader of
the window knows: at 1280x720, every step of every shipped example and of two captured
models (an MLP with cross-entropy, a small CNN) is laid out no wider than the column and
no taller than the picture, its smallest text no smaller than the window's panel sets
the same step at (xor_mlp's 4×4 step had been shrunk to 9 px and still cut at the right
edge), and a 4×4 Jacobian keeps its numbers (written one factor a line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import tracefile
from engine.examples import example_path, list_examples
from engine.fileformat import load
from gui.document import GraphDocument
from support import lesson_file

SIZE = (1280, 720)


def _document(path: Path) -> GraphDocument:
    doc = GraphDocument()
    if path.suffix == tracefile.SUFFIX:
        doc.load_trace(tracefile.load(path), path)
    else:
        doc.load(load(path), path)
    return doc


def _positions(timeline: Any) -> list[int]:
    return [timeline.position_of_step(k) for k in range(1, len(timeline.steps) + 1)]


def _smallest_px(panel: Any) -> float:
    from gui.panels.chain_rule import text_px

    panel.follow.flush()
    body, _subs = text_px(panel.browser.document())
    return min(body)


def _window_px(make_window: Any, path: Path) -> list[float]:
    """The window's panel's smallest text size at each step, at 1280x720."""
    win = make_window(path, size=SIZE)
    win.canvas.animations_enabled = False
    tl = win.player.timeline
    sizes = []
    for position in _positions(tl):
        win.player.seek(position)
        sizes.append(_smallest_px(win.chain_rule))
    return sizes


NAMES = [path.stem for path, _title in list_examples()] + ["mlp", "cnn"]


@pytest.mark.parametrize("name", NAMES)
def test_every_exported_step_writes_its_chain_rule_whole_and_legible(
    name: str, make_window: Any, tmp_path: Path
) -> None:
    from gui.export.frame_sheet import frame_sheet
    from gui.panels.chain_rule import step_bottom

    path = lesson_file(name, tmp_path)
    window = _window_px(make_window, path)
    doc = _document(path)
    bad = []
    with frame_sheet(doc, SIZE) as sheet:
        panel = sheet.panel
        for k, position in enumerate(_positions(sheet.player.timeline), 1):
            sheet.show_position(position)
            px = _smallest_px(panel)
            text, viewport = panel.browser.document(), panel.browser.viewport()
            if text.idealWidth() > viewport.width():
                bad.append(f"step {k}: {text.idealWidth()} px wide in {viewport.width()}")
            if step_bottom(text) > viewport.height() - text.documentMargin():
                bad.append(f"step {k}: {step_bottom(text)} px tall in {viewport.height()}")
            if px < window[k - 1] - 0.01:
                bad.append(f"step {k}: {px:.1f} px, the window's {window[k - 1]:.1f}")
    assert not bad, bad


def test_xor_mlps_4x4_step_keeps_its_numbers_one_factor_a_line(qapp) -> None:  # noqa: ANN001
    from gui.export.frame_sheet import frame_sheet
    from gui.theme import CHAIN_RULE_PT

    with frame_sheet(_document(example_path("xor_mlp")), SIZE) as sheet:
        sheet.show_position(sheet.player.timeline.position_of_step(3))  # out → W2, J 4×4
        panel = sheet.panel
        assert (panel.fit, panel.elide) == (1.0, False) and panel.narrow  # one factor a line
        assert _smallest_px(panel) >= CHAIN_RULE_PT * 96 / 72 * 0.9 - 0.01  # full size
        text = panel.text()
        assert "-0.6351" in text and "0.05394" in text  # J's last entry, the vjp's


@pytest.mark.parametrize("k", [2, 4, 5])
def test_xor_mlps_frames_keep_every_number_of_their_matrices(qapp, k: int) -> None:  # noqa: ANN001
    """Steps 4 and 5 had written their vjp and gradient as ``[4×4]``/``[3×4]``: the
    accumulation line was 496 px in a 486 px column, and at step 5 the summary's vᵀJ row
    was wider still; step 2 wrote its 4×16 Jacobian as ``J[4×16]``. Now each keeps its
    numbers (step 2's Jacobian wrapped, 8 a line), at full size."""
    from gui.export.frame_sheet import frame_sheet
    from gui.model.formatting import fmt_num

    with frame_sheet(_document(example_path("xor_mlp")), SIZE) as sheet:
        sheet.show_position(sheet.player.timeline.position_of_step(k))
        panel, step = sheet.panel, sheet.player.timeline.steps[k - 1]
        text = panel.text()
        wanted = [step.vjp, step.accumulated] + ([step.jacobian()] if k == 2 else [])
        missing = [fmt_num(v) for a in wanted for v in a.ravel() if fmt_num(v) not in text]
        assert not missing, missing
        assert "×4]" not in text and "×16]" not in text
        assert panel.fit == 1.0 and not panel.elide
        doc = panel.browser.document()
        assert doc.idealWidth() <= panel.browser.viewport().width()
