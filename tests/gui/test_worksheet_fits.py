"""A PDF worksheet's questions fit their half page by the export's one rule, whole and
legible: at every step of every shipped example and of a captured MLP and CNN, the
question is no wider than the page (xor_mlp's 16-number rows and attention's words on
its Jacobian had run off the right edge, cut), no taller than its room beside a picture
still a third of the half page, its text at 10 pt or more, every given number in it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.examples import list_examples
from engine.groups import GroupStep
from gui.export.render import load_document
from support import laid_out, lesson_file, pdf_page_size

NAMES = [path.stem for path, _title in list_examples()] + ["mlp", "cnn"]


@pytest.mark.parametrize("name", NAMES)
def test_every_worksheet_question_fits_its_half_page(name: str, qapp: Any, tmp_path: Path) -> None:
    from gui.export.handout import GAP, QUESTION_PICTURE_SHARE, question, step_layout
    from gui.model import labels
    from gui.model.formatting import fmt_num
    from gui.player import Player

    width, height = pdf_page_size()
    half, _picture, _text = step_layout(width, height)
    room = half * (1 - QUESTION_PICTURE_SHARE) - GAP / 2
    doc = load_document(lesson_file(name, tmp_path))
    steps = Player(doc).timeline.steps
    bad = []
    for k, step in enumerate(steps, 1):
        html, used = question(doc, step, k, len(steps), width, half)
        laid = laid_out(html, width)
        if laid.idealWidth() > width or used > room:
            bad.append(f"step {k}: {laid.idealWidth()}x{used} in {width}x{room}")
        pt = float(re.findall(r"font-size:([0-9.]+)pt", html)[0])
        if pt < 10.0:
            bad.append(f"step {k}: {pt} pt")
        text = laid.toPlainText()
        given = [] if isinstance(step, GroupStep) else list(np.asarray(step.upstream).ravel())
        if len(given) > labels.PANEL_MAX_VECTOR:
            given = []  # summarised as on the panel, by design
        missing = [fmt_num(v) for v in given if fmt_num(v) not in text]
        if missing:
            bad.append(f"step {k}: upstream numbers missing {missing}")
    assert not bad, bad


def test_a_question_that_fits_is_written_as_before(qapp: Any, tmp_path: Path) -> None:
    """Seed 2's questions fit as written: the fitting changes none of them."""
    from gui.export.handout import question, step_layout
    from gui.model import worksheet
    from gui.player import Player

    width, height = pdf_page_size()
    half = step_layout(width, height)[0]
    doc = load_document(lesson_file("seed2_stack_vjp", tmp_path))
    steps = Player(doc).timeline.steps
    for k, step in enumerate(steps, 1):
        as_written = worksheet.step_question_html(
            step, k, len(steps), doc.graph, doc.results.forward, worksheet.WORKSHEET_PT
        )
        assert question(doc, step, k, len(steps), width, half)[0] == as_written, k


def test_xor_mlp_step_4_keeps_all_16_upstream_numbers_on_the_page(
    qapp: Any, tmp_path: Path
) -> None:
    """The row that ran off the page is wrapped (its continuation marked) at 10 pt or more."""
    from gui.export.handout import question, step_layout
    from gui.model import labels
    from gui.player import Player

    width, height = pdf_page_size()
    doc = load_document(lesson_file("xor_mlp", tmp_path))
    steps = Player(doc).timeline.steps
    html, _used = question(doc, steps[3], 4, len(steps), width, step_layout(width, height)[0])
    assert labels.CONTINUED in html
    assert steps[3].upstream.size == 16
