"""Semantic zoom: the compact form's decision, text and sizes (pure), and the canvas
drawing it when the whole graph is shown small."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gui.model.node_box import side_by_side
from gui.model.semantic_zoom import (
    MIN_ACTIVE_GRAD_CHARS,
    compact_lines,
    compact_min_zoom,
    compact_rows,
    compact_sizes,
    fitting_chars,
    is_compact,
    name_growth,
    room_chars,
    shortened,
)


def _painted(item, zoom: float):  # noqa: ANN001, ANN202
    """``item`` painted at ``zoom`` on white, with 4 px to spare."""
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtWidgets import QStyleOptionGraphicsItem

    width, height = item.size
    image = QImage(int(width * zoom) + 4, int(height * zoom) + 4, QImage.Format.Format_RGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    painter.scale(zoom, zoom)
    item.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    return image


def test_compact_below_the_minimum_screen_size() -> None:
    assert is_compact(0.5, 10.0, 8.0)  # 5 pt on screen
    assert not is_compact(0.8, 10.0, 8.0)  # exactly 8 pt: full box
    assert not is_compact(2.0, 10.0, 19.2)


def test_compact_lines_keep_name_and_first_row() -> None:
    lines = compact_lines("W", "[[1, 2],\n [3, 4]]", None)
    assert [(ln.text, ln.kind) for ln in lines] == [("W", "name"), ("[[1, 2], …", "value")]
    lines = compact_lines("x", "[" + ", ".join(["0.125"] * 9) + "]", "0 → 2")
    assert len(lines[1].text) <= 22 and lines[1].text.endswith("…")
    assert lines[2].text == "grad 0 → 2" and lines[2].kind == "grad"


def test_a_matrix_gradients_change_keeps_its_arrow_in_one_line() -> None:
    # ``before → after`` side by side puts the arrow on the middle row, not the first
    change = side_by_side("0", " → ", "[[1, 2],\n [3, 4],\n [5, 6]]")
    assert "→" not in change.split("\n")[0]
    assert compact_lines("W", "1", change)[2].text == "grad 0 → [[1, 2], …"
    both = side_by_side("[[1, 2],\n [3, 4],\n [5, 6]]", " → ", "[[7, 8],\n [9, 0],\n [1, 2]]")
    assert compact_lines("W", "1", both)[2].text.startswith("grad [[1, 2], → [[7, 8]")


def test_a_stacked_change_keeps_the_value_it_ends_at() -> None:
    # too wide side by side, ``after`` goes under ``before``, its row starting "→ ";
    # the one-line form read the first row alone: the value before the step
    change = side_by_side("[-0.04243, 1.618, 2.25]", " → ", "[-0.08486, 3.236, 4.5]")
    assert change.split("\n")[1].startswith("→ [-0.08486")
    line = compact_lines("x", "1", change)[2].text
    assert line.startswith("grad → [-0.08486, 3.236") and len(line) <= 27


def test_a_shortened_gradient_line_gives_up_its_start_first() -> None:
    assert shortened("grad 1.013 → 2.026", 14) == "grad → 2.026"
    assert shortened("grad [2.098, 1.192, 1.075]", MIN_ACTIVE_GRAD_CHARS) == "grad [2.098…"
    assert shortened("grad 3", MIN_ACTIVE_GRAD_CHARS) == "grad 3"
    assert len(shortened("grad 0 → [1, 2, 3, 4, 5, 6]", 12)) <= 12


def test_fitting_chars_cut_to_the_room_but_not_below_the_shortest_cut() -> None:
    # 20 characters 2 units wide at 1 pt (0.1 a character), in a room 30 units wide
    assert fitting_chars(20, 2.0, 10.0, 30.0) == 20  # 20 wide: all fit
    assert fitting_chars(20, 2.0, 20.0, 30.0) == 15  # 40 wide: 15 characters fit
    assert fitting_chars(20, 2.0, 60.0, 30.0) == MIN_ACTIVE_GRAD_CHARS  # 5 would fit
    assert fitting_chars(20, 2.0, float("inf"), 30.0) == MIN_ACTIVE_GRAD_CHARS
    assert fitting_chars(8, 2.0, 60.0, 30.0) == 8  # already short: kept, it shrinks


def test_a_wide_box_holds_more_characters_than_the_usual_cut() -> None:
    # a room 300 wide at 10 pt of 0.6-wide characters: 50 characters, less "grad "
    assert room_chars(300.0, 0.6, 10.0) == 45
    long = "[" + ", ".join(["0.125"] * 6) + "]"  # 42 characters
    assert compact_lines("x", long, None, chars=45)[1].text == long
    assert compact_lines("x", long, None, chars=5) == compact_lines("x", long, None)  # never less


def test_the_active_boxs_gradient_line_uses_the_boxs_width_before_cutting(qtbot) -> None:  # noqa: ANN001, E501
    # Fix 10: "grad → [[-1.411, 1.294, -…" was cut at 22 characters in a box with room
    from gui.canvas.node_item import COMPACT_REF_PT, NodeItem, advance, compact_fonts
    from gui.model.node_box import NodeContent

    after = "[[-1.411, 1.294, -0.5012, 2.123],\n [1, 2, 3, 4]]"
    grad = side_by_side("[[0, 0, 0, 0],\n [0, 0, 0, 0]]", " → ", after)
    item = NodeItem("W1", NodeContent(title="W1", value=after, grad=grad, grad_active=True))
    zoom = 0.7
    form = item.compact_form(zoom)
    assert form is not None
    (line, pt), = [(ln, pt) for ln, pt in form if ln.kind == "grad"]
    assert line.text.startswith("grad → [[-1.411, 1.294, -0.5012")
    assert pt * zoom >= item.min_screen_pt() - 1e-6  # not shrunk for it
    width, _height = item.size
    drawn = advance(compact_fonts().fm_mono, line.text) / COMPACT_REF_PT * pt
    assert drawn <= width - 16.0  # inside the box's text room


def test_sizes_reach_the_screen_minimum_when_there_is_room() -> None:
    sizes = compact_sizes(0.5, 8.0, [2.0, 1.0], 1.5, (200.0, 80.0))
    # 16 pt x 0.5 = 8 pt; the name grows to 1.5x that in the room left
    assert sizes == [pytest.approx(24.0), pytest.approx(16.0)]
    sizes = compact_sizes(0.5, 8.0, [2.0, 1.0], 1.5, (200.0, 50.0))
    assert sizes == [pytest.approx(50.0 / 1.5 - 16.0), pytest.approx(16.0)]


def test_a_long_line_shrinks_alone_and_a_cramped_gradient_is_left_out() -> None:
    sizes = compact_sizes(0.5, 8.0, [20.0, 1.0], 1.5, (200.0, 80.0))
    assert sizes[0] == pytest.approx(10.0) and sizes[1] == pytest.approx(16.0)
    sizes = compact_sizes(0.5, 8.0, [2.0, 1.0, 3.0], 1.5, (200.0, 50.0))
    assert sizes[0] >= 16.0 and sizes[1] == pytest.approx(16.0) and sizes[2] == 0.0


def test_the_name_keeps_its_size_and_the_other_lines_shrink_together() -> None:
    # 3 lines of 16 pt need 72 units; 60 leave 20 for each of the two extra lines
    sizes = compact_sizes(0.5, 8.0, [2.0, 1.0, 3.0], 1.5, (200.0, 60.0))
    assert sizes[0] == pytest.approx(16.0)
    assert sizes[1] == pytest.approx(12.0) and sizes[2] == pytest.approx(12.0)
    # little height left: the value line (always shown) takes what there is
    assert compact_sizes(0.5, 8.0, [2.0, 1.0], 1.5, (200.0, 30.0)) == [
        pytest.approx(16.0),
        pytest.approx(4.0),
    ]


def test_a_short_value_and_gradient_go_side_by_side_and_the_name_grows() -> None:
    # stacked, three lines of 16 pt need 72 units and 60 leave the name at the minimum;
    # side by side the two short lines keep 16 pt and the name grows 1.5x
    stacked = compact_sizes(0.5, 8.0, [2.0, 1.0, 1.0], 1.5, (200.0, 60.0))
    assert stacked[0] == pytest.approx(16.0)
    sizes, beside = compact_rows(0.5, 8.0, [2.0, 1.0, 1.0], 1.5, (200.0, 60.0), 0.5)
    assert beside and sizes == [pytest.approx(24.0), pytest.approx(16.0), pytest.approx(16.0)]
    # long lines would shrink side by side: they stay stacked, nothing is left out
    sizes, beside = compact_rows(0.5, 8.0, [2.0, 6.0, 6.0], 1.5, (100.0, 60.0), 0.5)
    assert not beside and sizes == compact_sizes(0.5, 8.0, [2.0, 6.0, 6.0], 1.5, (100.0, 60.0))
    assert all(pt > 0 for pt in sizes)
    # no height left under the name: nothing to put side by side, no error
    sizes, beside = compact_rows(0.5, 8.0, [2.0, 1.0, 1.0], 1.5, (200.0, 20.0), 0.5)
    assert sizes[1:] == [0.0, 0.0] and not beside
    # a name with one line under it is as before
    two = compact_rows(0.5, 8.0, [2.0, 1.0], 1.5, (200.0, 60.0), 0.5)
    assert two == (compact_sizes(0.5, 8.0, [2.0, 1.0], 1.5, (200.0, 60.0)), False)


def test_an_active_box_grows_and_gives_its_name_the_third_lines_room() -> None:
    # floor 16: name 1.5x = 24 over a 16 pt line need 40 pt x 1.5 = 60 units of height
    assert name_growth(0.5, 8.0, [2.0, 1.0, 1.0], 1.5, (200.0, 50.0)) == pytest.approx(10.0)
    assert name_growth(0.5, 8.0, [2.0, 1.0, 1.0], 1.5, (200.0, 80.0)) == 0.0
    stacked, _beside = compact_rows(0.5, 8.0, [2.0, 6.0, 6.0], 1.5, (100.0, 60.0), 0.5)
    sizes, beside = compact_rows(0.5, 8.0, [2.0, 6.0, 6.0], 1.5, (100.0, 60.0), 0.5,
                                 name_first=True)
    assert sizes[0] > stacked[0] and sizes[1] > 0 and sizes[2] == 0.0 and not beside


def test_the_active_edges_boxes_put_the_gradient_first() -> None:
    lines = compact_lines("x", "3", "0 → 2", grad_first=True)
    assert [ln.kind for ln in lines] == ["name", "grad", "value"]


def test_the_camera_needs_more_zoom_to_keep_the_gradient_line() -> None:
    name_only = compact_min_zoom(8.0, [2.0, 1.0], 1.5, (200.0, 40.0))
    with_grad = compact_min_zoom(8.0, [2.0, 1.0], 1.5, (200.0, 40.0), with_next=True)
    assert name_only == pytest.approx(8.0 * 1.5 / 40.0)
    assert with_grad == pytest.approx(8.0 * 1.5 * 1.6 / 40.0)
    sizes = compact_sizes(with_grad, 8.0, [2.0, 1.0], 1.5, (200.0, 40.0))
    assert sizes[0] * with_grad == pytest.approx(8.0) and sizes[1] > 0


def test_canvas_draws_compact_boxes_when_zoomed_out(qtbot) -> None:  # noqa: ANN001
    from gui.canvas.view import CanvasView
    from gui.document import GraphDocument

    doc = GraphDocument()
    nid = "x1"
    doc.add_node(nid, "input", (0.0, 0.0), value=1.0)
    view = CanvasView(doc)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    item = view.node_item(nid)
    view.resetTransform()
    assert item.compact_form(view.zoom()) is None
    assert view.box_text_pt(nid) == pytest.approx(10.0)
    view.scale(0.4, 0.4)
    form = item.compact_form(view.zoom())
    assert form is not None and form[0][0].text == nid
    assert view.box_text_pt(nid) > 1.5 * 4.0  # 4 pt: the full box at this zoom


def test_compact_text_is_drawn_as_wide_as_it_was_fitted(qtbot) -> None:  # noqa: ANN001
    # A long value fitted into a compact box at a small size: drawn, it keeps the
    # margin it was fitted with, clear of the box's sides where the edges plug in
    # (it used to be laid out up to 8 % wider and ran into them).
    import numpy as np

    from gui.canvas.view import CanvasView
    from gui.document import GraphDocument

    doc = GraphDocument()
    doc.add_node("n1_1", "input", (0.0, 0.0), value=[-0.04243, 1.618, 1.618])
    view = CanvasView(doc)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    item = view.node_item("n1_1")
    zoom = 0.5  # the value is fitted to the box's width, at about 15 pt
    form = item.compact_form(zoom)
    assert form is not None and form[1][0].text.startswith("[-0.04243")
    width, height = item.size
    image = _painted(item, zoom)
    grey = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4)[..., 1]
    grey = grey[:, : image.width()]
    inside = grey[3 : int(height * zoom) - 3, 3 : int(width * zoom) - 3]  # the sides left out
    ink = np.nonzero((inside < 128).any(axis=0))[0] + 3
    margin = 8.0 * zoom  # compact_sizes fits text into the box less 8 units a side
    assert ink.min() >= margin - 0.5, (ink.min(), margin)
    assert ink.max() <= width * zoom - margin + 0.5, (ink.max(), width * zoom - margin)


def test_a_compact_box_draws_value_and_gradient_on_one_row(qtbot) -> None:  # noqa: ANN001
    # A scalar with its gradient, shown small: the name is larger than the minimum,
    # value and gradient share the row under it, and both are drawn, inside the box.
    import numpy as np

    from gui.document import GraphDocument
    from gui.export.frame_sheet import View, frame_sheet

    doc = GraphDocument()
    doc.add_node("x0", "input", (0.0, 0.0), value=0.1006)
    doc.add_node("n1_0", "mul", (300.0, 0.0))
    doc.connect_operand("x0", "n1_0", 0)
    doc.connect_operand("x0", "n1_0", 1)
    doc.set_backward("n1_0", None)
    with frame_sheet(doc, (1280, 720), View.CANVAS) as sheet:
        sheet.show_position(sheet.player.timeline.end)  # every gradient shown
        item = sheet.canvas.node_item("n1_0")
        assert item.content is not None and item.content.grad is not None
        # a box outside the active step: the active one gives its name the row instead
        # (test_active_names.py)
        item.set_content(replace(item.content, grad_active=False))
        item.set_consumer_highlight(False)
        zoom = 0.568  # the random 16-node graph's frames
        form = item.compact_form(zoom)
        width, height = item.size
        image = _painted(item, zoom)
        min_pt = item.min_screen_pt()
    assert form is not None and {ln.kind for ln, _pt in form[1:]} == {"value", "grad"}
    (_name, name_pt), (first, first_pt), (second, second_pt) = form
    assert (first.kind, second.kind) == ("value", "grad")  # "8  grad 0 → 2"
    assert second.beside and not first.beside and first_pt == second_pt > 0
    assert name_pt * zoom > min_pt * 1.2  # grown, not at the minimum
    rgb = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4)
    inner = 4  # the border (red on the active box) left out
    rgb = rgb[inner : int(height * zoom) - inner, inner : int(width * zoom) - inner, :3]
    rgb = rgb.astype(int)  # B, G, R
    red = (rgb[..., 2] > 150) & (rgb[..., 1] < 110)  # the gradient's colour
    dark = rgb.max(axis=2) < 110  # the name and the value
    red_rows = np.nonzero(red.any(axis=1))[0]
    red_cols = np.nonzero(red.any(axis=0))[0]
    assert len(red_rows) > 0
    # the value's dark ink on the gradient's rows, beside it: one row, side by side
    band = dark[red_rows.min() : red_rows.max() + 1]
    value_cols = np.nonzero(band.any(axis=0))[0]
    assert len(value_cols) > 0
    assert value_cols.max() < red_cols.min() or red_cols.max() < value_cols.min()
    margin = 8.0 * zoom
    ink = np.concatenate([value_cols, red_cols]) + inner
    assert ink.min() >= margin - 0.5 and ink.max() <= width * zoom - margin + 0.5
