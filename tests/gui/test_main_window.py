"""The main window as a user meets it: seed example 2 open, menus with shortcuts, files,
editing comforts, presentation mode, and screenshots for a reviewer."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget

from gui.commands import Disconnect, SetValue, push
from gui.main_window import menu_of, presentation_scale
from gui.shortcuts import ShortcutsDialog, collect_actions
from gui.theme import PRESENTATION_SCALE, THEME

SEED2_NODES = {"x1", "x2", "x3", "y"}


def settle(qtbot, ms: int = 30) -> None:  # noqa: ANN001
    qtbot.wait(ms)
    QApplication.processEvents()




def test_opens_seed2_and_screenshots(qtbot, make_window, artifacts_dir: str) -> None:  # noqa: ANN001
    win = make_window()
    assert SEED2_NODES <= set(win.doc.graph.nodes)
    assert win.doc.output == "y" and win.doc.path is None and not win.doc.modified
    assert win.windowTitle().startswith("Seed 2") and win.windowTitle().endswith("Backprop Studio")
    np.testing.assert_allclose(
        [win.doc.results.trace.grads[x] for x in ("x1", "x2", "x3")], [1.1, 1.4, 1.0])
    assert win.inspector.backward.v_editor.value().tolist() == [0.1, 0.2, 0.3]
    assert win.player_status.text() == win.player.status_text()
    win.canvas.select_ids(["x2"])
    assert win.inspector.node.grad_label.text() == "1.4"
    win.canvas.select_ids([])
    settle(qtbot)
    assert win.grab().save(os.path.join(artifacts_dir, "main_window_seed2.png"))

    win.enter_presentation()
    settle(qtbot, 80)
    assert win.grab().save(os.path.join(artifacts_dir, "presentation_mode.png"))


def test_broken_file_argument_opens_example(make_window, no_dialogs, tmp_path: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.bpgraph"
    bad.write_text("{ not json")
    win = make_window(bad)
    assert len(no_dialogs["errors"]) == 1
    assert no_dialogs["errors"][0].startswith("Cannot open bad.bpgraph: ")
    assert "\n" not in no_dialogs["errors"][0]
    assert SEED2_NODES <= set(win.doc.graph.nodes)


def test_broken_open_leaves_document_untouched(make_window, no_dialogs, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window()
    assert push(win.doc, SetValue(win.doc, "x1", 5.0)) is None
    graph, count = win.doc.graph, win.doc.undo_stack.count()
    bad = tmp_path / "cycle.bpgraph"
    bad.write_text(
        '{"format": "backprop-studio-graph", "version": 1, "nodes": ['
        '{"id": "a", "op": "neg", "inputs": ["b"]}, {"id": "b", "op": "neg", "inputs": ["a"]}]}'
    )
    assert not win.files.open_path(bad)
    assert no_dialogs["errors"] and "cycle" in no_dialogs["errors"][-1]
    assert no_dialogs["asked"] == []  # refused before asking about unsaved changes
    assert win.doc.graph is graph and win.doc.undo_stack.count() == count
    assert float(win.doc.graph.nodes["x1"].value) == 5.0 and win.doc.modified


def test_cycle_is_refused(make_window) -> None:  # noqa: ANN001
    win = make_window()
    doc, canvas = win.doc, win.canvas
    assert push(doc, Disconnect(doc, "y1", 1)) is None  # y1 = x1x2 * x3: free port 1
    count = doc.undo_stack.count()
    messages: list[str] = []
    canvas.statusMessage.connect(messages.append)
    assert not canvas.try_connect(canvas.node_item("y").out_port,
                                  canvas.node_item("y1").in_ports[1])
    assert doc.undo_stack.count() == count and doc.graph.nodes["y1"].inputs[1] is None
    assert messages and "cycle" in messages[-1]
    assert "cycle" in win.statusBar().currentMessage()


def test_close_with_unsaved_changes_asks(make_window, no_dialogs) -> None:  # noqa: ANN001
    win = make_window()
    assert win.close()  # unmodified: closes without a question
    assert no_dialogs["asked"] == []
    win = make_window()
    assert push(win.doc, SetValue(win.doc, "x3", 4.0)) is None
    assert win.isWindowModified() and "[*]" in win.windowTitle()
    no_dialogs["discard"] = "cancel"
    assert not win.close()
    assert win.isVisible() and no_dialogs["asked"] == ["discard"]
    win.named_actions["new"].trigger()
    assert SEED2_NODES <= set(win.doc.graph.nodes)  # New was cancelled too
    no_dialogs["discard"] = "discard"
    assert win.close()


def test_save_reopen_keeps_graph_positions_and_view(qtbot, make_window, no_dialogs,  # noqa: ANN001
                                                    tmp_path: Path) -> None:
    win = make_window()
    win.canvas.zoom_by(1.5)
    win.canvas.centerOn(123.0, 45.0)
    assert push(win.doc, SetValue(win.doc, "x1", [1.0, 2.0])) is None
    path = tmp_path / "mine.bpgraph"
    assert win.files.save_as(path)
    assert not win.isWindowModified() and win.windowTitle().startswith("mine.bpgraph")
    view = win.view_state()

    other = make_window(path)
    assert other.doc.path == path.resolve()
    a, b = win.doc, other.doc
    assert list(a.graph.nodes) == list(b.graph.nodes)
    for nid, node in a.graph.nodes.items():
        twin = b.graph.nodes[nid]
        assert (node.op, node.inputs, node.attrs, node.requires_grad) == (
            twin.op, twin.inputs, twin.attrs, twin.requires_grad)
        if node.value is not None:
            np.testing.assert_array_equal(node.value, twin.value)
    assert a.positions.keys() == b.positions.keys()
    for nid, (x, y) in a.positions.items():  # files keep positions to 1/100 of a unit
        assert b.positions[nid] == pytest.approx((round(x, 2), round(y, 2)), abs=1e-9)
    assert (a.output, a.gradient.tolist()) == (b.output, b.gradient.tolist())
    settle(qtbot)
    restored = other.view_state()
    assert restored["zoom"] == pytest.approx(view["zoom"], rel=1e-3)
    assert restored["center"] == pytest.approx(view["center"], abs=1.0)
    recent = menu_of(other, "File").actions()
    assert any(a.menu() is other.recent_menu for a in recent)
    assert other.recent_menu.actions()[0].text().endswith("mine.bpgraph")


def test_copy_paste_duplicate_keep_inner_edges(make_window) -> None:  # noqa: ANN001
    win = make_window()
    doc, canvas = win.doc, win.canvas
    before = set(doc.graph.nodes)
    canvas.select_ids(["x1", "x2", "x1x2"])
    win.named_actions["duplicate"].trigger()
    new = set(doc.graph.nodes) - before
    assert len(new) == 3 and set(canvas.selected_ids()) == new
    product = next(n for n in new if doc.graph.nodes[n].op == "mul")
    assert set(doc.graph.nodes[product].inputs) <= new  # edges inside the copy, renamed
    assert all(doc.positions[n] != doc.positions.get(m) for n in new for m in before)
    doc.undo_stack.undo()  # one step removes the whole duplicate
    assert set(doc.graph.nodes) == before

    canvas.select_ids(["x3", "x2x3"])  # x2x3 = x2 * x3: the x2 link is outside
    win.named_actions["copy"].trigger()
    win.named_actions["paste"].trigger()
    pasted = set(doc.graph.nodes) - before
    prod = next(n for n in pasted if doc.graph.nodes[n].op == "mul")
    x3_copy = next(n for n in pasted if doc.graph.nodes[n].op == "input")
    assert doc.graph.nodes[prod].inputs == [None, x3_copy]
    doc.undo_stack.undo()

    canvas.select_ids(["y"])
    win.named_actions["cut"].trigger()
    assert "y" not in doc.graph and doc.output is None
    win.named_actions["paste"].trigger()
    assert "y" in doc.graph  # a cut name is free again: pasted under its own name
    assert doc.graph.nodes["y"].inputs == []  # its operands were outside the cut


def test_select_all_delete_undo(make_window) -> None:  # noqa: ANN001
    win = make_window()
    doc = win.doc
    win.named_actions["select_all"].trigger()
    assert set(win.canvas.selected_ids()) == set(doc.graph.nodes)
    n = len(doc.graph)
    win.named_actions["delete"].trigger()
    assert len(doc.graph) == 0
    win.named_actions["undo"].trigger()
    assert len(doc.graph) == n and doc.output == "y"
    win.named_actions["redo"].trigger()
    assert len(doc.graph) == 0


def test_menus_show_shortcuts_and_sheet_lists_them(make_window) -> None:  # noqa: ANN001
    win = make_window()
    rows = {(where, what): keys for where, what, keys in collect_actions(win.menuBar())}
    assert rows[("Edit", "Undo")] == "Ctrl+Z"
    assert rows[("Edit", "Duplicate")] == "Ctrl+D"
    assert rows[("Edit", "Select All")] == "Ctrl+A"
    assert rows[("File", "Save")] == "Ctrl+S"
    assert rows[("View", "Fit All")] == "F"
    assert rows[("View", "Auto-layout")] == "Ctrl+L"
    assert rows[("View", "Presentation Mode")] == "F5"
    assert rows[("Playback", "Step forward")].startswith("Right")
    assert ("File › Open Example", "Seed 1: x = [1, 2, 3], y = x² + 2, z = sum(y)") in rows or any(
        where == "File › Open Example" for where, _ in rows)
    dialog = ShortcutsDialog(win.menuBar(), win)
    texts = {dialog.table.item(r, 1).text(): dialog.table.item(r, 2).text()
             for r in range(dialog.table.rowCount())}
    assert texts["Duplicate"] == "Ctrl+D" and texts["Presentation Mode"] == "F5"
    dialog.deleteLater()


def test_presentation_mode(qtbot, make_window) -> None:  # noqa: ANN001
    win = make_window()
    win.set_font_scale(2.0)
    assert presentation_scale() == 2.0
    win.named_actions["present"].trigger()
    settle(qtbot)
    assert win.presenting and win.isFullScreen()
    assert THEME.scale == 2.0 and THEME.high_contrast
    assert not win.palette_dock.isVisible() and not win.inspector_dock.isVisible()
    assert not win.menuBar().isVisible() and not win.player_bar.isVisible()
    assert win.chain_rule.isVisible() and win.tabs.currentWidget() is win.chain_rule
    # Arrow keys and PageUp/PageDown step the player.
    keys = {k.toString() for k in win.player_bar.named_actions["step_back"].shortcuts()}
    assert {"Left", "PgUp"} <= keys
    end = win.player.position
    win.player_bar.named_actions["step_back"].trigger()
    assert win.player.position == end - 1
    assert win.view_state() is None  # the projector's zoom never goes into the file
    win.named_actions["leave"].trigger()  # Esc
    settle(qtbot)
    assert not win.presenting and not win.isFullScreen()
    assert THEME.scale == 1.0 and not THEME.high_contrast
    assert win.palette_dock.isVisible() and win.inspector_dock.isVisible()
    assert win.menuBar().isVisible() and win.tabs.tabBar().isVisible()
    assert win.player_bar.isVisible()
    win.set_font_scale(PRESENTATION_SCALE)


def test_a_panel_added_as_a_tab_follows_presentation_mode(qtbot, make_window) -> None:  # noqa: ANN001
    """A new panel is registered once (its tab); the theme reaches it without a list."""

    class Probe(QWidget):
        scales: list[float] = []

        def apply_theme(self) -> None:
            self.scales.append(THEME.scale)

    win = make_window()
    probe = Probe()
    win.tabs.addTab(probe, "Probe")
    win.set_font_scale(2.0)
    win.named_actions["present"].trigger()
    settle(qtbot)
    win.named_actions["leave"].trigger()
    settle(qtbot)
    assert probe.scales == [2.0, 1.0]
    win.set_font_scale(PRESENTATION_SCALE)


def test_status_bar_warns_about_nan(make_window) -> None:  # noqa: ANN001
    win = make_window()
    assert win.problems.text() == ""
    assert push(win.doc, SetValue(win.doc, "x1", float("nan"))) is None
    assert "NaN or inf in" in win.problems.text() and "x1" in win.problems.text()
    win.doc.undo_stack.undo()
    assert win.problems.text() == ""


def test_examples_menu_and_palette(qtbot, make_window, no_dialogs) -> None:  # noqa: ANN001
    win = make_window()
    assert win.examples_menu.isEnabled()
    win.examples_menu.aboutToShow.emit()  # filled as it opens
    examples = win.examples_menu.actions()
    assert len(examples) >= 5
    first = examples[0]
    first.trigger()
    assert win.doc.path is None and "Seed 1" in win.windowTitle()
    node = win.add_op_at_centre("exp")
    assert node in win.doc.graph and win.canvas.selected_ids() == [node]
    assert win.inspector.node_id == node


def test_palette_drag_drops_a_node(qtbot, make_window) -> None:  # noqa: ANN001
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    from gui.panels.palette import op_mime

    win = make_window()
    mime = op_mime("tanh")
    viewport = win.canvas.viewport()
    where = viewport.rect().center()
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(where, Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    drop = QDropEvent(where, Qt.DropAction.CopyAction, mime, buttons, mods)
    QApplication.sendEvent(viewport, drop)
    added = [n for n, node in win.doc.graph.nodes.items() if node.op == "tanh"]
    assert len(added) == 1 and win.inspector.node_id == added[0]


def test_inspector_follows_rename_and_undo(make_window) -> None:  # noqa: ANN001
    win = make_window()
    win.canvas.select_ids(["x1"])
    name = win.inspector.node.name_edit
    name.setText("a")
    name.editingFinished.emit()
    assert "a" in win.doc.graph and win.inspector.node_id == "a"
    assert win.canvas.selected_ids() == ["a"]
    win.named_actions["undo"].trigger()
    assert "x1" in win.doc.graph
    assert win.inspector.node_id in (None, "x1")
    win.named_actions["redo"].trigger()
    assert "a" in win.doc.graph


def test_export_image(monkeypatch, make_window, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QFileDialog

    win = make_window()
    target = tmp_path / "frame.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(target), "")))
    win.named_actions["export"].trigger()
    assert target.exists() and target.stat().st_size > 1000


def test_keyboard_focus_in_table_does_not_step_player(qtbot, make_window) -> None:  # noqa: ANN001
    win = make_window()
    table = win.inspector.backward.v_editor.table
    table.setFocus()
    table.setCurrentCell(0, 0)
    position = win.player.position
    qtbot.keyClick(table, Qt.Key.Key_Right)
    assert table.currentColumn() == 1 and win.player.position == position


def test_space_on_the_canvas_plays_when_tapped_and_pans_when_held(qtbot, make_window) -> None:  # noqa: ANN001
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    win = make_window()
    canvas, vp = win.canvas, win.canvas.viewport()
    canvas.setFocus()
    settle(qtbot)
    assert not win.player.playing
    QTest.keyClick(canvas, Qt.Key.Key_Space)  # a tap: the window's Play/Pause
    assert win.player.playing
    QTest.keyClick(canvas, Qt.Key.Key_Space)
    assert not win.player.playing

    before = canvas.mapToScene(vp.rect().center())
    QTest.keyPress(canvas, Qt.Key.Key_Space)  # held with a drag: pans, does not play
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QTest.mousePress(vp, left, none, QPoint(600, 400))
    QTest.mouseMove(vp, QPoint(500, 450))
    QTest.mouseRelease(vp, left, none, QPoint(500, 450))
    QTest.keyRelease(canvas, Qt.Key.Key_Space)
    assert canvas.mapToScene(vp.rect().center()) != before
    assert not win.player.playing


def test_right_click_menus_offer_node_and_canvas_commands(make_window) -> None:  # noqa: ANN001
    win = make_window()
    canvas, doc = win.canvas, win.doc
    item = canvas.node_item("y2")
    at = canvas.mapFromScene(item.scene_rect().center())
    menu = canvas.context_menu(at)
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts[0] == "Run backward from 'y2'" and canvas.selected_ids() == ["y2"]
    assert {"Cu&t", "&Copy", "&Duplicate", "De&lete"} <= set(texts)
    menu.actions()[0].trigger()  # y2 is a scalar: implicit v, backward from it
    assert doc.output == "y2" and doc.gradient is None
    assert doc.results.trace is not None and doc.results.trace.output == "y2"
    doc.undo_stack.undo()
    assert doc.output == "y"

    empty = canvas.mapFromScene(canvas.sceneRect().bottomRight()) - QPoint(20, 20)
    menu = canvas.context_menu(empty)
    add = menu.actions()[0].menu()
    shape = next(a.menu() for a in add.actions() if a.text() == "Shape")
    before = set(doc.graph.nodes)
    next(a for a in shape.actions() if a.text() == "reshape").trigger()
    (new,) = set(doc.graph.nodes) - before
    assert doc.graph.nodes[new].op == "reshape"
    assert "Auto-&layout" in [a.text() for a in menu.actions()]


def test_presentation_without_a_window_manager_covers_the_screen_frameless(
    make_window,  # noqa: ANN001
    qtbot,  # noqa: ANN001
    monkeypatch,  # noqa: ANN001
) -> None:
    """Rehearsal fix 12: with no window manager, showFullScreen does nothing; the
    window falls back to a frameless one as big as the screen, and leaving restores it."""
    from PySide6.QtCore import Qt

    win = make_window(size=(900, 600))
    # what no window manager does: Qt records the state, nothing moves the window
    monkeypatch.setattr(win, "showFullScreen", lambda: None)
    monkeypatch.setattr(win, "isFullScreen", lambda: True)
    win.enter_presentation()
    screen = win.screen().geometry()
    qtbot.waitUntil(lambda: win.geometry() == screen, timeout=3000)
    assert win.windowFlags() & Qt.WindowType.FramelessWindowHint
    win.leave_presentation()
    assert not win.windowFlags() & Qt.WindowType.FramelessWindowHint
