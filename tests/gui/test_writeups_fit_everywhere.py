"""Every write-up fits where it is shown, by one rule (``fit_export``):

- a PDF handout's step (its half page) and a web page's (its column) at every step of
  every shipped example and of a captured MLP and CNN: no wider than the column (the PDF's
  no taller than its half page), at a legible size (xor_mlp's steps had run off the
  PDF's right edge, one shrunk to about 5 pt; the web page's column grew to its widest
  table and pushed the picture off the page);
- forward mode in presentation mode: the write-up's list of tangents ran past the
  bottom of the panel (xor_mlp's forward step 3), now it fits at every step;
- a collapsed module's write-up joins its vectors once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import example_path, list_examples
from gui.export.render import load_document
from support import laid_out, lesson_file, pdf_page_size, present

SIZE = (1280, 720)
EXAMPLES = [path.stem for path, _title in list_examples()]
NAMES = EXAMPLES + ["mlp", "cnn"]


def _pt(html: str) -> float:
    """The write-up's body size (points), as :func:`labels.h_document` sets it."""
    m = re.search(r"font-size:([0-9.]+)pt", html)
    assert m is not None
    return float(m.group(1))


@pytest.mark.parametrize("name", NAMES)
def test_every_pdf_and_web_page_step_fits_its_column(name: str, qapp: Any, tmp_path: Path) -> None:
    from gui.export.frame_sheet import frame_sheet
    from gui.export.handout import STEP_MIN_FIT, STEP_PT, step_layout
    from gui.export.html_player import TEXT_PT, TEXT_PX

    width, height = pdf_page_size()
    _half, _picture, text_h = step_layout(width, height)
    bad = []
    with frame_sheet(load_document(lesson_file(name, tmp_path)), SIZE) as sheet:
        tl = sheet.player.timeline
        for k in range(1, len(tl.steps) + 1):
            position = tl.position_of_step(k)
            sheet.show_position(position)
            pdf = sheet.write_up(position, STEP_PT, width, text_h, STEP_MIN_FIT)
            doc = laid_out(pdf, width)
            # the whole page's text, the last step's summary too (a page does not scroll)
            if doc.idealWidth() > width or doc.size().height() > text_h:
                bad.append(f"PDF step {k}: {doc.idealWidth()}x{doc.size().height()}")
            # the numbers kept to STEP_MIN_FIT; shortened and still too tall (a captured
            # CNN's last step shares its half page with the summary), shrunk: 7.1 pt
            if _pt(pdf) < STEP_PT * 0.7:
                bad.append(f"PDF step {k}: {_pt(pdf)} pt")
            page = sheet.write_up(position, TEXT_PT, TEXT_PX, None)
            if laid_out(page, TEXT_PX).idealWidth() > TEXT_PX:
                bad.append(f"page step {k}: {laid_out(page, TEXT_PX).idealWidth()} px")
            if _pt(page) < TEXT_PT * 0.9:
                bad.append(f"page step {k}: {_pt(page)} pt")
    assert not bad, bad


def test_the_web_page_keeps_its_text_column_and_the_pdf_its_numbers(
    qapp: Any, tmp_path: Path
) -> None:
    """xor_mlp's step 4: the PDF keeps the vjp's 16 numbers (it had cut the row off), and
    the web page's column has the width the steps were fitted to, scrolling if wider."""
    from gui.export.frame_sheet import frame_sheet
    from gui.export.handout import STEP_MIN_FIT, STEP_PT, step_layout
    from gui.export.html_player import STYLE, TEXT_PX
    from gui.model.formatting import fmt_num

    assert f"width:{TEXT_PX}px;overflow-x:auto" in STYLE
    width, height = pdf_page_size()
    with frame_sheet(load_document(example_path("xor_mlp")), SIZE) as sheet:
        tl = sheet.player.timeline
        position = tl.position_of_step(4)
        sheet.show_position(position)
        html = sheet.write_up(position, STEP_PT, width, step_layout(width, height)[2],
                              STEP_MIN_FIT)
        text = laid_out(html, width).toPlainText()
        missing = [fmt_num(v) for v in tl.steps[3].vjp.ravel() if fmt_num(v) not in text]
        assert not missing, missing


@pytest.mark.parametrize("name", EXAMPLES)
def test_forward_mode_in_presentation_fits_every_step(name: str, make_window: Any) -> None:
    from engine.errors import GraphError
    from gui.model.timeline import Direction
    from gui.panels.chain_rule import step_bottom

    win = make_window(example_path(name), size=SIZE)
    try:
        win.player.set_direction(Direction.FORWARD)
    except GraphError:
        pytest.skip("no forward mode for this graph")
    present(win, SIZE)
    panel, tl = win.chain_rule, win.player.timeline
    bad = []
    for k in range(len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        QApplication.processEvents()
        panel.follow.flush()
        doc, viewport = panel.browser.document(), panel.browser.viewport()
        if step_bottom(doc) > viewport.height() - doc.documentMargin():
            bad.append(f"step {k}: {step_bottom(doc)} px tall in {viewport.height()}")
        if doc.idealWidth() > viewport.width():
            bad.append(f"step {k}: {doc.idealWidth()} px wide in {viewport.width()}")
    assert not bad, bad


def test_xor_forward_step_3_names_its_tangents_when_shortened(make_window: Any) -> None:
    from gui.model.forward_view import TANGENTS_SO_FAR
    from gui.model.timeline import Direction

    win = make_window(example_path("xor_mlp"), size=SIZE)
    win.player.set_direction(Direction.FORWARD)
    present(win, SIZE)
    win.player.seek(win.player.timeline.position_of_step(3))
    QApplication.processEvents()
    text = win.chain_rule.text()
    assert win.chain_rule.elide
    assert TANGENTS_SO_FAR.format("") in text and "h, out" in text


def test_a_modules_write_up_joins_its_vectors_once(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.groups import GroupStep
    from gui.export.frame_sheet import frame_sheet
    from gui.model import group_view

    doc = load_document(lesson_file("mlp", tmp_path))
    with frame_sheet(doc, SIZE) as sheet:
        steps = [s for s in sheet.player.timeline.steps if isinstance(s, GroupStep)]
    assert steps
    joined = []
    real = group_view._joined
    monkeypatch.setattr(group_view, "_joined", lambda *a: joined.append(1) or real(*a))
    fwd = doc.results.forward
    for elide in (False, True):
        joined.clear()
        html = group_view.group_step_html(doc.graph, fwd, steps[0], 1, 1, False, elide)
        assert len(joined) == 2, (elide, len(joined))  # the row and the vjps, once each
        rows, columns = group_view.group_shape(steps[0])
        assert f"{rows}×{columns}" in html or "J = ∂" in html


@pytest.mark.parametrize("name", ["xor_mlp", "neuron_layer", "classifier_head", "mlp"])
def test_the_end_card_fits_its_picture_page_and_web_page(
    name: str, qapp: Any, tmp_path: Path
) -> None:
    """The end card's vᵀJ rows ran off the right edge of an animation's end card, the
    PDF's end page and the web page (xor_mlp's 16 numbers, neuron_layer's 2×11 J)."""
    from gui.export.handout import CARD_PT as PAGE_PT
    from gui.export.html_player import CARD_PX, TEXT_PT
    from gui.export.options import Kind, LessonOptions
    from gui.export.render import CARD_PT, lesson_renderer
    from gui.model.lesson import ShotKind

    doc = load_document(lesson_file(name, tmp_path))
    with lesson_renderer(doc, LessonOptions(Kind.GIF)) as renderer:
        for pt, room in ((CARD_PT, (1100.0, 600.0)), (PAGE_PT, (680.0, 500.0)),
                         (TEXT_PT * 1.2, (float(CARD_PX), None))):
            html = renderer.card_html(ShotKind.END, pt, room=room)
            laid = laid_out(html, room[0])
            assert laid.idealWidth() <= room[0], (pt, laid.idealWidth())
            assert room[1] is None or laid.size().height() <= room[1]
            assert "Leaf gradients" in laid.toPlainText()


def test_a_wrapped_row_marks_each_continuation_line(make_window: Any) -> None:
    """A row wrapped onto several lines had only an indent to tell its continuation from
    the matrix's next row: each continuation line now starts with ↪, in the window (xor
    step 4's 16 upstream numbers) and in an exported frame (step 2's 4×16 Jacobian: one
    mark per row, its 16 numbers on two lines)."""
    from gui.export.frame_sheet import frame_sheet
    from gui.model.labels import CONTINUED, WRAP_NUMBERS, h_matrix

    cells = [[str(i) for i in range(2 * WRAP_NUMBERS)], ["x"] * 3]
    html = h_matrix(cells, wrap=WRAP_NUMBERS)
    assert html.count(CONTINUED) == 1 and html.count("<tr>") == 3
    win = make_window(example_path("xor_mlp"), size=SIZE)
    win.player.seek(win.player.timeline.position_of_step(4))
    assert CONTINUED in win.chain_rule.text()
    with frame_sheet(load_document(example_path("xor_mlp")), SIZE) as sheet:
        sheet.show_position(sheet.player.timeline.position_of_step(2))
        assert sheet.panel.text().count(CONTINUED) == 4  # J's 4 rows, each on two lines


def test_a_gradients_name_gets_a_line_of_its_own_only_when_its_row_needs_it(qapp: Any) -> None:
    """neuron_layer's last step shortens only the whole call's summary to fit an exported
    frame and the web page: its ``x.grad`` (three numbers) had been put on a line of its
    own above them all the same. It stays beside its numbers; xor_mlp's step 4, whose 4×4
    gradient's line is too wide for the frame's column, still gives the name its line."""
    from gui.export.frame_sheet import frame_sheet
    from gui.export.html_player import TEXT_PT, TEXT_PX
    from gui.model.labels import Narrow, h_equation, h_name

    def name_alone(node: str, leaf: bool) -> str:  # the name and "=" as one line
        return h_equation([f"{h_name(node)}.grad" if leaf else f"∂loss/∂{h_name(node)}", "="])

    with frame_sheet(load_document(example_path("neuron_layer")), SIZE) as sheet:
        last = sheet.player.timeline.end
        sheet.show_position(last)
        sheet.panel.follow.flush()
        assert sheet.panel.narrow is Narrow.SUMMARY  # shortened: the summary, not the name
        assert "x.grad" in sheet.panel.html() and name_alone("x", True) not in sheet.panel.html()
        page = sheet.write_up(last, TEXT_PT, TEXT_PX, None)
        assert "x.grad" in page and name_alone("x", True) not in page
        assert laid_out(page, TEXT_PX).idealWidth() <= TEXT_PX
    with frame_sheet(load_document(example_path("xor_mlp")), SIZE) as sheet:
        sheet.show_position(sheet.player.timeline.position_of_step(4))
        sheet.panel.follow.flush()
        assert sheet.panel.narrow is Narrow.SPLIT
        assert sheet.panel.fit == 1.0  # its numbers kept at full size
