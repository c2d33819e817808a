"""The bugs issue 9 found on the way, each pinned by a test driving the real widgets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from gui.main_window import MainWindow
from gui.model.placement import place_box


@pytest.fixture
def win(make_window):  # noqa: ANN001, ANN201
    return make_window(size=(1280, 720))


def test_auto_names_start_at_x1(win: MainWindow) -> None:
    win.files.new_document()
    view = win.canvas
    assert view.add_node_at("input", QPointF(0, 0)) == "x1"
    assert view.add_node_at("input", QPointF(0, 200)) == "x2"
    assert view.add_node_at("const", QPointF(0, 400)) == "c1"


def test_palette_double_clicks_do_not_stack(win: MainWindow) -> None:
    win.files.new_document()
    first = win.add_op_at_centre("add")
    second = win.add_op_at_centre("add")
    a, b = win.canvas.node_item(first), win.canvas.node_item(second)
    assert first != second and not a.scene_rect().intersects(b.scene_rect())
    visible = win.canvas.mapToScene(win.canvas.viewport().rect()).boundingRect()
    assert visible.contains(b.scene_rect())


def test_node_added_at_the_canvas_edge_lands_inside(win: MainWindow) -> None:
    view = win.canvas
    corner = view.mapToScene(view.viewport().rect().bottomRight())
    nid = view.add_node_at("mul", corner)
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.node_item(nid).scene_rect())


def test_place_box_moves_inside_and_off_others() -> None:
    visible = (0.0, 0.0, 1000.0, 600.0)
    assert place_box((990.0, 590.0), (100.0, 50.0), visible, []) == (884.0, 534.0)
    x, y = place_box((100.0, 100.0), (100.0, 50.0), visible, [(100.0, 100.0, 100.0, 50.0)])
    assert (x, y) != (100.0, 100.0) and (y >= 166.0 or y <= 34.0 or x >= 216.0)


def _open_example(win: MainWindow, stem: str) -> None:
    from engine.examples import EXAMPLES_DIR

    assert win.files.load_path(EXAMPLES_DIR / f"{stem}.bpgraph", example=True)
    QApplication.processEvents()


def test_implicit_scalar_v_shows_one_and_new_document_shows_no_v(win: MainWindow) -> None:
    _open_example(win, "seed1_square_sum")  # z = sum(y): scalar, v not given
    backward = win.inspector.backward
    assert win.doc.gradient is None and backward.implicit.isChecked()
    assert float(backward.v_editor.value()) == 1.0  # PyTorch's implicit gradient
    win.files.new_document()
    QApplication.processEvents()
    assert not backward.v_editor.isVisibleTo(win.inspector)


def test_not_a_number_note_goes_when_another_node_is_selected(win: MainWindow) -> None:
    _open_example(win, "seed1_square_sum")  # x = [1, 2, 3]
    win.canvas.select_ids(["x"])
    editor = win.inspector.node.value_editor
    item = editor.cell(0, 0)
    assert item is not None
    item.setText("abc")
    assert editor.note.isVisibleTo(editor) and "'abc' is not a number" in editor.note.text()
    win.canvas.select_ids(["y"])
    win.canvas.select_ids(["x"])
    assert editor.isVisibleTo(win.inspector) and not editor.note.isVisibleTo(editor)


def test_wrong_shaped_v_puts_a_badge_on_the_output(win: MainWindow) -> None:
    from gui.commands import SetValue, push

    doc = win.doc  # seed 2: y = stack(y1, y2, y3), v = [0.1, 0.2, 0.3]
    y1 = doc.graph.nodes["y"].inputs[0]
    assert push(doc, SetValue(doc, "x1", [1.0, 2.0])) is None  # y1 and y become 2-row
    QApplication.processEvents()
    assert doc.results.backward_error is not None, y1
    badge = win.canvas.node_item("y").badge
    assert badge is not None and "shape" in badge.toolTip()


def test_presentation_reaches_every_panel_and_chain_rule_fits_its_width(
        win: MainWindow, qtbot) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    from gui.theme import THEME

    _open_example(win, "logistic_loss")  # long names: wide equations
    win.enter_presentation()
    win.showNormal()
    win.resize(1280, 720)
    try:
        tl = win.player.timeline
        win.player.seek(tl.position_of_step(5))
        qtbot.wait(30)
        QApplication.processEvents()
        browser = win.chain_rule.browser
        assert browser.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        assert browser.document().idealWidth() <= browser.viewport().width() + 1
        assert "Step 5 of" in win.chain_rule.text()
        assert browser.verticalScrollBar().value() == 0  # the step is in view
        seen = []
        for _ in range(win.tabs.count()):
            win.named_actions["next_panel"].trigger()
            seen.append(win.tabs.tabText(win.tabs.currentIndex()))
            assert win.tabs.currentWidget().isVisible()
        assert "End-to-end" in seen and "Jacobian heatmap" in seen
    finally:
        win.leave_presentation()
        THEME.scale, THEME.high_contrast = 1.0, False


def test_export_image_size_and_copy_frame(win: MainWindow, monkeypatch, tmp_path) -> None:  # noqa: ANN001
    from PySide6.QtGui import QGuiApplication, QImage
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("800x450", True)))
    win.named_actions["export_size"].trigger()
    target = tmp_path / "frame.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "")))
    win.named_actions["export"].trigger()
    assert QImage(str(target)).size().toTuple() == (800, 450)
    win.named_actions["copy_frame"].trigger()
    copied = QGuiApplication.clipboard().image()
    assert copied.size().toTuple() == (800, 450)
    assert "Copied" in win.statusBar().currentMessage()


def test_example_description_shows_in_the_notes_and_edits_are_saved(
        win: MainWindow, tmp_path) -> None:  # noqa: ANN001
    from engine.fileformat import load

    _open_example(win, "fan_out")
    assert win.notes_dock.isVisible()
    assert win.notes.text() == win.doc.description and "x = 2" in win.notes.text()
    win.notes.edit.setPlainText("my notes")
    assert win.doc.description == "my notes" and win.doc.modified
    win.doc.undo_stack.undo()
    assert win.notes.text() == win.doc.description != "my notes"
    win.doc.undo_stack.redo()
    target = tmp_path / "mine.bpgraph"
    assert win.files.save_as(target)
    assert load(target).description == "my notes"
    win.files.new_document()
    assert win.notes.text() == ""


def test_tensor_indices_are_zero_based_in_formulas_as_in_tables(win: MainWindow) -> None:
    win.player.to_end()  # seed 2: vᵀJ with v = [∂A/∂y₀, ∂A/∂y₁, ∂A/∂y₂]
    text = win.chain_rule.text()
    assert "∂y0" in text.replace("₀", "0") and "∂y2" in text.replace("₂", "2")
    assert "∂y3" not in text.replace("₃", "3")
