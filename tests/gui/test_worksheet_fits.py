"""A PDF worksheet's questions fit their half page by the export's one rule, whole and
legible: at every step of every shipped example and of a captured MLP and CNN, the
question is no wider than the page (xor_mlp's 16-number rows and attention's words on
its Jacobian had run off the right edge, cut), no taller than its room beside a picture
still a third of the half page, its text at 10 pt or more, every given number in it. The
answer key by the same rule: every page of it inside the page, at full size."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pypdf
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


def _chain_file(folder: Path, ids: list[str]) -> Path:
    """A 4×4 input through a tanh per id, summed: a step per id, each answer two 4×4
    gradients under that id."""
    x = [[0.11 * i + 0.013 * j for j in range(4)] for i in range(4)]
    nodes: list[dict[str, Any]] = [{"id": "x", "op": "input", "value": x, "requires_grad": True}]
    for before, nid in zip(["x", *ids], ids, strict=False):
        nodes.append({"id": nid, "op": "tanh", "inputs": [before]})
    nodes.append({"id": "s", "op": "sum", "inputs": [ids[-1]], "attrs": {"dim": None}})
    path = folder / "chain.bpgraph"
    path.write_text(json.dumps({"format": "backprop-studio-graph", "version": 1, "title": "chain",
                                "nodes": nodes, "backward": {"output": "s", "gradient": None}}))
    return path


#: 30 steps of two 4×4 gradients, each under a long name: 4 pages of answers, which a
#: fixed 24 rows a page had printed on one, shrunk to about 4 pt.
LONG_CHAIN = [f"activation_of_layer_{k}_with_a_rather_long_descriptive_name" for k in range(30)]


@pytest.mark.parametrize("name", [*NAMES, "long_chain"])
def test_every_answer_key_page_fits_the_page(name: str, qapp: Any, tmp_path: Path) -> None:
    """The answer key by the questions' rule: every page no wider and no taller than the
    page, every step's answers on it in order, in full, at full size (12 pt)."""
    from gui.export.handout import CARD_PT, answer_key_pages
    from gui.model import worksheet
    from gui.player import Player

    width, height = pdf_page_size()
    long_chain = name == "long_chain"
    path = _chain_file(tmp_path, LONG_CHAIN) if long_chain else lesson_file(name, tmp_path)
    doc = load_document(path)
    steps = Player(doc).timeline.steps
    pages = answer_key_pages(doc.graph, steps, width, height)
    texts = []
    for html in pages:
        laid = laid_out(html, width)
        assert laid.idealWidth() <= width and laid.size().height() <= height, (
            f"{laid.idealWidth()}x{laid.size().height()} in {width}x{height}")
        texts.append(" ".join(laid.toPlainText().split()))
        assert texts[-1].startswith("Answer key")
        pt = float(re.findall(r"font-size:([0-9.]+)pt", html)[0])
        assert pt == CARD_PT, pt
    key = " ".join(texts)
    assert re.findall(r"Step (\d+) \(", key) == [str(k) for k in range(1, len(steps) + 1)]
    for k, step in enumerate(steps, 1):
        for line in worksheet.answer_lines(step, k, doc.graph):
            assert " ".join(line.split()) in key
    if long_chain:
        assert len(pages) > 1


def test_a_long_answer_key_prints_on_pages_of_its_own_at_12_pt(qapp: Any, tmp_path: Path) -> None:
    """The long chain's worksheet as pypdf reads it back: the key is more than one page,
    every piece of its text at 12 pt or more (it had printed at about 4 pt), and the last
    step's answer is on its last page, before the end page."""
    from test_export_documents import _text_sizes, flat

    from gui.export.options import LessonOptions
    from gui.export.writers import write_lesson

    out = tmp_path / "chain.pdf"
    write_lesson(load_document(_chain_file(tmp_path, LONG_CHAIN)), out,
                 LessonOptions("pdf", worksheet=True))
    reader = pypdf.PdfReader(out)
    texts = [flat(page.extract_text()) for page in reader.pages]
    key = [i for i, text in enumerate(texts) if text.startswith("Answer key")]
    assert len(key) > 1 and key == list(range(key[0], key[0] + len(key)))
    sizes = [size for i in key for _text, size in _text_sizes(reader.pages[i])]
    assert sizes and min(sizes) >= 12.0 - 0.01, sorted(sizes)[:5]
    assert f"Step {len(LONG_CHAIN)} (" in texts[key[-1]]
    assert texts[key[-1] + 1].startswith("Backward done")
