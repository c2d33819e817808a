"""The window's chain-rule panel at 1280x720 never cuts a step off at its right edge: every
step of every shipped example and of a captured MLP and CNN is laid out no wider than the
panel's viewport, its text no smaller than MIN_FIT (a too-wide step is written narrow, long
rows wrapped, not shrunk further), also when a user pauses between steps and the next step
is shown from its drawing laid out ahead (it brought the scroll bar: attention_scores's
step 5 was cut 14 px); xor_mlp's step 4 keeps all 16 upstream numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.examples import example_path, list_examples
from gui.model.formatting import fmt_num
from support import lesson_file

SIZE = (1280, 720)
NAMES = [path.stem for path, _title in list_examples()] + ["mlp", "cnn"]


@pytest.mark.parametrize("paused", [False, True], ids=["stepping", "paused"])
@pytest.mark.parametrize("name", NAMES)
def test_every_step_fits_the_windows_panel_width(
    name: str, paused: bool, make_window: Any, tmp_path: Path
) -> None:
    from gui.panels.chain_rule import BASE_PT, MIN_FIT, PX_PER_PT, text_px

    win = make_window(lesson_file(name, tmp_path), size=SIZE)
    win.canvas.animations_enabled = False
    panel, tl = win.chain_rule, win.player.timeline
    bad = []
    for k in range(1, len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        panel.follow.flush()
        if paused:
            panel._lay_out_ahead()  # what its idle timer does while the user pauses
        doc, viewport = panel.browser.document(), panel.browser.viewport()
        if doc.idealWidth() > viewport.width():
            bad.append(f"step {k}: {doc.idealWidth()} px wide in {viewport.width()}")
        body, _subs = text_px(doc)
        if body and min(body) < BASE_PT * PX_PER_PT * MIN_FIT * 0.9 - 0.5:
            bad.append(f"step {k}: {min(body):.1f} px text")
    assert not bad, bad


def test_xor_mlp_step_4_shows_all_16_upstream_numbers(make_window: Any) -> None:
    win = make_window(example_path("xor_mlp"), size=SIZE)
    win.canvas.animations_enabled = False
    tl = win.player.timeline
    win.player.seek(tl.position_of_step(4))
    step = tl.steps[3]
    text = win.chain_rule.text()
    missing = [fmt_num(v) for v in step.upstream.ravel() if fmt_num(v) not in text]
    assert step.upstream.size == 16 and not missing, missing
    browser = win.chain_rule.browser
    assert browser.document().idealWidth() <= browser.viewport().width()
