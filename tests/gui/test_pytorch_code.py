"""PyTorch code in the window: the import dialog, the code dock, export and the torch check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from engine.pytorch_import import import_code
from gui.commands import SetValue, push
from gui.main_window import MainWindow, menu_of
from gui.pytorch_code import CheckDialog, ImportCodeDialog
from support import torch

SEED1 = (
    "import torch\n"
    "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
    "y = x ** 2 + 2\n"
    "z = torch.sum(y)\n"
    "z.backward()\n"
)


@pytest.fixture
def window(qtbot, settings_sandbox):  # noqa: ANN001, ANN201 - pytest fixture
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    w.files.load_path(Path("assets/examples/seed2_stack_vjp.bpgraph"), example=True)
    return w


def test_menus_hold_the_pytorch_actions(window) -> None:  # noqa: ANN001
    titles = [a.text() for a in menu_of(window, "File").actions()]
    assert "Import PyTorch &Code…" in titles
    export = next(a.menu() for a in menu_of(window, "File").actions() if a.text() == "E&xport")
    assert [a.text() for a in export.actions()] == ["&PyTorch Script…"]
    edit = [a.text() for a in menu_of(window, "Edit").actions()]
    assert ("Check with &PyTorch" in edit) == (torch is not None)


def test_import_dialog_previews_marks_errors_and_opens_the_graph(window, qtbot) -> None:  # noqa: ANN001
    dialog = ImportCodeDialog(window)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.buttons()[0]
    dialog.set_code("import torch\na = torch.ones(3)\nb = torch.ones(2)\nc = a + b\n")
    assert dialog.preview.text() == ("line 4, column 5: add: cannot broadcast shapes (3,) and (2,)")
    assert dialog.editor.error_line == 4 and not ok.isEnabled()
    before = list(window.doc.graph.nodes)
    # typing updates the preview by itself
    dialog.editor.setPlainText(SEED1)
    qtbot.waitUntil(lambda: dialog.imported is not None, timeout=3000)
    assert ok.isEnabled() and dialog.editor.error_line is None
    assert "backward from z" in dialog.preview.text()
    assert list(window.doc.graph.nodes) == before  # nothing changes until Import
    assert window.pytorch.open_imported(dialog.imported)
    assert list(window.doc.graph.nodes) == ["x", "two", "x_sq", "y", "z"]
    np.testing.assert_array_equal(window.doc.results.trace.grads["x"], [2.0, 4.0, 6.0])


def test_import_dialog_opens_a_py_file(window, qtbot, tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "snippet.py"
    path.write_text(SEED1)
    dialog = ImportCodeDialog(window)
    qtbot.addWidget(dialog)
    dialog.load_file(str(path))
    assert dialog.imported is not None and dialog.imported.output == "z"


def test_code_dock_follows_edits_and_applies_code_as_one_undo_step(window, qtbot) -> None:  # noqa: ANN001
    dock = window.pytorch.dock
    editor = dock.editor
    assert editor.toPlainText() == ""  # hidden: no code written on every edit
    dock.show()
    qtbot.waitUntil(lambda: editor.toPlainText() != "", timeout=3000)
    assert "y.backward(gradient=torch.tensor([0.1, 0.2, 0.3]" in editor.toPlainText()
    # An edit anywhere rewrites the code
    push(window.doc, SetValue(window.doc, "x1", 5.0))
    assert "x1 = torch.tensor(5.0, dtype=torch.float64, requires_grad=True)" in (
        editor.toPlainText()
    )
    window.doc.undo_stack.undo()
    positions = dict(window.doc.positions)
    steps = window.doc.undo_stack.index()

    # A refused edit marks its line and leaves the graph alone
    editor.setPlainText(editor.toPlainText().replace("y1 = x1x2 * x3", "y1 = x1x2 * "))
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert editor.error_line is not None and "syntax error" in dock.status.text()
    assert window.doc.undo_stack.index() == steps and window.doc.graph.nodes["y1"].op == "mul"

    # A good edit applies as one undo step and keeps the positions of surviving names
    text = (
        window.pytorch.dock.code()
        .replace("x3 = torch.tensor(3.0,", "x3 = torch.tensor(4.0,")
        .replace("y3 = x1 + x2x3", "y3 = x1 - x2x3")
    )
    editor.setPlainText(text)
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.doc.undo_stack.index() == steps + 1
    assert float(window.doc.graph.nodes["x3"].value) == 4.0
    assert window.doc.graph.nodes["y3"].op == "sub"
    assert all(window.doc.positions[n] == p for n, p in positions.items())
    assert not dock.edited and dock.editor.toPlainText() == dock.code()
    window.doc.undo_stack.undo()
    assert float(window.doc.graph.nodes["x3"].value) == 3.0
    assert window.doc.graph.nodes["y3"].op == "add"


def test_export_writes_a_script_that_imports_back(window, tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "seed2.py"
    assert window.pytorch.export_to(str(path))
    im = import_code(path.read_text())
    assert list(im.graph.nodes) == list(window.doc.graph.nodes)
    assert im.output == "y"


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
def test_check_with_pytorch_shows_every_node_agreeing(window, qtbot) -> None:  # noqa: ANN001
    """Rehearsal fix 6: the check froze the window about 10 s; it runs in the
    background with a progress note and Cancel, the window answering meanwhile."""
    with qtbot.waitSignal(window.pytorch.checked, timeout=120_000) as result:
        window.pytorch.check()
        assert window.pytorch.check_note.isVisible()  # returned at once, the note up
        window.player.to_start()  # the window still takes commands
    rows = result.args[0]
    assert rows is not None and all(r.agree for r in rows)
    dialog = window.pytorch.check_dialog
    assert isinstance(dialog, CheckDialog)
    assert dialog.table.rowCount() == len(window.doc.graph.nodes)
    assert {dialog.table.item(k, 3).text() for k in range(len(rows))} == {"yes"}
    dialog.close()


def test_code_dock_refuses_an_id_with_a_lone_surrogate_and_the_doc_still_saves(
    window, qtbot, tmp_path
) -> None:  # noqa: ANN001
    dock = window.pytorch.dock
    dock.show()
    qtbot.waitUntil(lambda: dock.editor.toPlainText() != "", timeout=3000)
    steps = window.doc.undo_stack.index()
    text = dock.code().replace(
        "x1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)",
        'x1 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)  # id: "\\ud800"',
    )
    assert text != dock.code()
    dock.editor.setPlainText(text)
    assert dock.apply() is False
    assert "lone surrogate" in dock.status.text()
    assert window.doc.undo_stack.index() == steps and "x1" in window.doc.graph.nodes
    assert window.files.save_to(tmp_path / "still.bpgraph")


def test_view_code_opens_at_a_usable_size_and_keeps_it(window, qtbot) -> None:  # noqa: ANN001
    """Rehearsal fix 7: View > Code opened as a 320x90 px dock; it opens at least 40
    columns by 12 lines of code, and at the size the user left it."""
    from gui.pytorch_code import CODE_COLUMNS, CODE_LINES

    window.resize(1280, 720)
    dock = window.pytorch.dock
    dock.toggleViewAction().trigger()
    qtbot.waitUntil(dock.isVisible)
    QApplication.processEvents()
    fm = dock.editor.fontMetrics()
    room = dock.editor.viewport().size()
    assert room.width() >= fm.horizontalAdvance("0" * CODE_COLUMNS), room
    assert room.height() >= fm.lineSpacing() * CODE_LINES, room
    wider = dock.width() + 80
    window.resizeDocks([dock], [wider], Qt.Orientation.Horizontal)
    QApplication.processEvents()
    assert dock.width() == wider
    dock.toggleViewAction().trigger()  # closed, then opened again: as it was left
    dock.toggleViewAction().trigger()
    QApplication.processEvents()
    assert dock.width() == wider


def test_check_with_pytorch_can_be_cancelled(window, qtbot) -> None:  # noqa: ANN001
    with qtbot.waitSignal(window.pytorch.checked, timeout=60_000) as result:
        window.pytorch.check()
        from PySide6.QtWidgets import QPushButton

        qtbot.mouseClick(
            window.pytorch.check_note.findChild(QPushButton), Qt.MouseButton.LeftButton
        )
    assert result.args == [None] and window.pytorch.check_process is None
    assert window.pytorch.check_dialog is None


def test_code_dock_shows_the_training_loop_export_torch_writes(
    window, qtbot, tmp_path, capsys
) -> None:  # noqa: ANN001
    """Issue 30: a file with a train block reads in the dock as ``main.py export-torch``
    writes it, torch.optim loop included; editing the loop's lr and applying changes
    the train block, one undo step."""
    from engine.pytorch_cli import export_main

    path = Path("assets/examples/fit_line.bpgraph")
    assert window.files.load_path(path, example=True)
    dock = window.pytorch.dock
    dock.show()
    qtbot.waitUntil(lambda: "torch.optim" in dock.editor.toPlainText(), timeout=3000)
    out = tmp_path / "fit_line.py"
    assert export_main([str(path), "--out", str(out)]) == 0
    assert dock.editor.toPlainText() == out.read_text(encoding="utf-8")
    spec = window.doc.train
    assert spec is not None and f"lr={spec.lr!r}" in dock.code()
    dock.editor.setPlainText(dock.code().replace(f"lr={spec.lr!r}", "lr=0.125"))
    assert dock.apply()
    assert window.doc.train is not None and window.doc.train.lr == 0.125
    assert "lr=0.125" in dock.editor.toPlainText()
    window.doc.undo_stack.undo()
    assert window.doc.train == spec and f"lr={spec.lr!r}" in dock.editor.toPlainText()
