"""Seed example 1 built by hand, through the widgets a student uses:

x = [1, 2, 3] (input), y = x ** 2 + 2, z = sum(y); backward from z gives x.grad = [2, 4, 6].
Nodes come from palette double-clicks, edges from port-to-port drags on the canvas,
values from typing into the inspector's table, the output from the backward combo.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLineEdit

from gui.app import create_window
from gui.main_window import MainWindow


@pytest.fixture
def window(qtbot, settings_sandbox, no_dialogs) -> MainWindow:  # noqa: ANN001
    win = create_window()
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    qtbot.waitExposed(win)
    assert win.files.new_document()  # the example is unmodified: no question asked
    yield win
    win.doc.undo_stack.clear()  # nothing left to confirm when the fixture closes it
    win.close()


def add_from_palette(qtbot, win: MainWindow, op: str) -> str:  # noqa: ANN001
    """Double-click an op in the palette; returns the new node's id."""
    tree = win.palette_panel.tree
    item = win.palette_panel.item(op)
    tree.scrollToItem(item)
    before = set(win.doc.graph.nodes)
    pos = tree.visualItemRect(item).center()
    # A real double-click is a click, then a second press that Qt reports as a double-click.
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    added = set(win.doc.graph.nodes) - before
    assert len(added) == 1, f"double-clicking {op!r} added {added}"
    return added.pop()


def drag_connect(qtbot, win: MainWindow, src: str, dst: str, index: int) -> None:  # noqa: ANN001
    """Drag from ``src``'s output port to operand port ``index`` of ``dst``."""
    canvas = win.canvas
    canvas.fit_all()
    QApplication.processEvents()
    a = canvas.node_item(src).out_port.scenePos()
    b = canvas.node_item(dst).in_ports[index].scenePos()
    pa, pb = canvas.mapFromScene(a), canvas.mapFromScene(b)
    vp = canvas.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=pa)
    mid = QPoint((pa.x() + pb.x()) // 2, (pa.y() + pb.y()) // 2)
    for p in (pa + QPoint(4, 0), mid, pb):
        qtbot.mouseMove(vp, p)
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=pb)
    node = win.doc.graph.nodes[dst]
    if index >= len(node.inputs) or node.inputs[index] != src:
        # The gesture did not land (offscreen mouse moves carry no buttons on some
        # platforms): use the canvas's own connection method, as its drop would.
        assert canvas.try_connect(canvas.node_item(src).out_port,
                                  canvas.node_item(dst).in_ports[index])
    assert win.doc.graph.nodes[dst].inputs[index] == src


def type_into_cell(qtbot, editor, row: int, col: int, text: str) -> None:  # noqa: ANN001
    """Select a cell, type the number and press Enter, as a user does."""
    table = editor.table
    table.setFocus()
    table.setCurrentCell(row, col)
    qtbot.keyClick(table, text[0])  # any key opens the cell's editor with that key typed
    open_editors = [w for w in table.viewport().findChildren(QLineEdit) if w.isVisible()]
    assert len(open_editors) == 1
    cell_editor = open_editors[0]
    qtbot.keyClicks(cell_editor, text[1:])
    qtbot.keyClick(cell_editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.cell(row, col).text() == text)  # the commit is queued


def select(win: MainWindow, node: str) -> None:
    win.canvas.select_ids([node])
    assert win.inspector.node_id == node


def test_build_seed1_by_hand(qtbot, window: MainWindow) -> None:  # noqa: ANN001
    win, doc = window, window.doc
    assert len(doc.graph) == 0
    x = add_from_palette(qtbot, win, "input")
    two = add_from_palette(qtbot, win, "const")
    power = add_from_palette(qtbot, win, "pow")
    two_b = add_from_palette(qtbot, win, "const")
    plus = add_from_palette(qtbot, win, "add")
    total = add_from_palette(qtbot, win, "sum")
    assert [doc.graph.nodes[n].op for n in (x, two, power, two_b, plus, total)] == [
        "input", "const", "pow", "const", "add", "sum"]
    win.canvas.auto_layout()

    # x: a vector of length 3, typed cell by cell.
    select(win, x)
    editor = win.inspector.node.value_editor
    editor.kind.setCurrentText("vector")
    editor.cols.setValue(3)
    for col, text in enumerate(("1", "2", "3")):
        type_into_cell(qtbot, editor, 0, col, text)
    assert doc.graph.nodes[x].value.tolist() == [1.0, 2.0, 3.0]
    # The two constants are scalars: type into the spin box.
    for const in (two, two_b):
        select(win, const)
        spin = win.inspector.node.value_editor.spin
        spin.selectAll()
        qtbot.keyClicks(spin, "2")
        qtbot.keyClick(spin, Qt.Key.Key_Return)
        assert float(doc.graph.nodes[const].value) == 2.0

    drag_connect(qtbot, win, x, power, 0)
    drag_connect(qtbot, win, two, power, 1)
    drag_connect(qtbot, win, power, plus, 0)
    drag_connect(qtbot, win, two_b, plus, 1)
    drag_connect(qtbot, win, plus, total, 0)
    assert not doc.results.forward.errors

    combo = win.inspector.backward.output_combo
    combo.setCurrentIndex(combo.findText(total))
    combo.activated.emit(combo.currentIndex())
    assert doc.output == total
    assert win.inspector.backward.implicit.isChecked()

    select(win, x)
    assert win.inspector.node.grad_label.text() == "[2, 4, 6]"
    select(win, total)
    assert win.inspector.node.value_label.text() == "20"

    # Undo everything back to an empty canvas, and redo to the full graph.
    full = {n: (v.op, list(v.inputs)) for n, v in doc.graph.nodes.items()}
    steps = doc.undo_stack.index()
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert len(doc.graph) == 0 and not win.canvas.canvas.nodes and not doc.modified
    for _ in range(steps):
        doc.undo_stack.redo()
    assert {n: (v.op, list(v.inputs)) for n, v in doc.graph.nodes.items()} == full
    select(win, x)
    assert win.inspector.node.grad_label.text() == "[2, 4, 6]"
