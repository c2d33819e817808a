"""PyTorch code in the window: import a snippet, export a script, check with PyTorch, and a
live code dock where the graph and its code are two views of one thing.

Everything here reads and writes code through the engine (``engine.pytorch_import``
never runs the code; ``engine.pytorch_export`` writes it; ``engine.pytorch_check``
runs our own exported script in a separate process). Errors are marked at their
line and never touch the graph; applying code is one undoable step.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from PySide6.QtCore import (
    QObject,
    QSettings,
    QSize,
    Qt,
    QTemporaryDir,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QFontDatabase,
    QKeySequence,
    QShortcut,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QProgressDialog,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from engine.errors import GraphError
from engine.graph import Graph
from engine.pytorch_check import (
    ISOLATED_ARGS,
    Comparison,
    TorchCheckError,
    checking_script,
    compare_grads,
    torch_available,
    torch_grads,
)

from .commands import SwapEdit, push
from .document import GraphDocument, Point
from .layouts import fill
from .model.formatting import count
from .paint_cache import painted_alone
from .qt_override import reported
from .theme import THEME, error_sheet, style

if TYPE_CHECKING:
    from PySide6.QtCore import QProcess

    from engine.pytorch_import import Imported
    from engine.train import TrainSpec


class CodeEditor(QPlainTextEdit):
    """A monospaced editor that can mark one line as the place of an error."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.error_line: int | None = None

    def mark_error(self, line: int | None) -> None:
        """Highlight ``line`` (1-based), or clear the mark with None."""
        self.error_line = line
        marks = []
        block = self.document().findBlockByNumber((line or 1) - 1)
        if line is not None and block.isValid():
            # Here, not at the top: QTextFormat's ~200 properties are an enum PySide6
            # builds when the class is first imported (as gui.panels.chain_rule.text_px).
            from PySide6.QtGui import QTextFormat

            mark = QTextEdit.ExtraSelection()
            mark.format.setBackground(THEME.error_mark)
            mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            mark.cursor = QTextCursor(block)
            marks.append(mark)
        self.setExtraSelections(marks)

    def read_code(self, say: QLabel) -> Imported | None:
        """The editor's code imported (never run), or None: the error is then marked at
        its line and said in ``say``, in the error colour."""
        # Lazy: the importer (the code reader's tables) loads when code is first
        # imported, not at start-up.
        from engine.pytorch_import import CodeError, import_code

        try:
            imported = import_code(self.toPlainText())
        except (CodeError, GraphError) as exc:  # GraphError: a node the graph refuses (an id)
            self.mark_error(getattr(exc, "line", None))
            say.setText(str(exc))
            style(say, error_sheet)
            return None
        self.mark_error(None)
        style(say, str)
        return imported


def _summary(im: Imported) -> str:
    """What an import will make, in a few lines for the preview."""
    n = len(im.graph.nodes)
    lines = [
        f"{count(n, 'node')}: {', '.join(list(im.graph.nodes)[:12])}"
        + (" …" if n > 12 else "")
    ]
    if im.output is None:
        lines.append("no backward(...): no output chosen")
    else:
        v = "" if im.gradient is None else f" with v of shape {tuple(im.gradient.shape)}"
        lines.append(f"backward from {im.output}{v}")
    lines += im.notes + im.warnings
    return "\n".join(lines)


class ImportCodeDialog(QDialog):
    """File > Import PyTorch Code…: paste or open a ``.py``; a live preview says what the
    code makes, or where it is refused (the line is marked)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import PyTorch Code")
        self.setObjectName("ImportCodeDialog")
        self.resize(720, 520)
        self.imported: Imported | None = None
        self.editor = CodeEditor(self)
        self.editor.setPlaceholderText("Paste PyTorch code here, or open a .py file")
        self.preview = QLabel(self, textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        self.preview.setObjectName("ImportPreview")
        open_button = QPushButton("Open .py…", self)
        open_button.clicked.connect(self.open_file)
        SB = QDialogButtonBox.StandardButton
        self.buttons = QDialogButtonBox(SB.Ok | SB.Cancel, self)
        self.buttons.button(SB.Ok).setText("Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        row = fill(QHBoxLayout(), open_button, 1, self.buttons)
        fill(QVBoxLayout(self), (self.editor, 1), self.preview, row)
        self._timer = QTimer(self, singleShot=True, interval=250)
        self._timer.timeout.connect(self.update_preview)
        self.editor.textChanged.connect(self._timer.start)
        self.update_preview()

    def set_code(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.update_preview()

    def open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open PyTorch code", "", "Python (*.py)")
        if path:
            self.load_file(path)

    def load_file(self, path: str) -> None:
        from engine.pytorch_cli import read_source  # lazy, as import_code (see there)

        try:
            self.set_code(read_source(path))
        except (OSError, ValueError) as exc:
            self.preview.setText(f"Cannot read {Path(path).name}: {exc}")

    def update_preview(self) -> None:
        """Import the text (never running it): the preview, the error mark, the OK button."""
        self._timer.stop()
        text = self.editor.toPlainText()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.imported = None
        if not text.strip():
            self.preview.setText("")
            self.editor.mark_error(None)
        else:
            self.imported = self.editor.read_code(self.preview)
            if self.imported is not None:
                self.preview.setText(_summary(self.imported))
        ok.setEnabled(self.imported is not None)


#: What the code dock's apply replaces: graph, positions, output, gradient, train block.
_Side = tuple[Graph, dict[str, Point], str | None, np.ndarray | None, "TrainSpec | None"]


class ReplaceGraph(SwapEdit):
    """The code dock's apply: the whole graph, and the train block its training loop
    says (none without one), replaced in one undoable step."""

    def __init__(self, doc: GraphDocument, imported: Imported) -> None:
        super().__init__(doc, "Apply code")
        self.old = (doc.graph.copy(), dict(doc.positions), doc.output, doc.gradient, doc.train)
        kept: dict[str, Point] = {
            n: p for n, p in doc.positions.items() if n in imported.graph.nodes
        }
        self.new = (imported.graph, kept, imported.output, imported.gradient, imported.train)

    def put(self, side: _Side) -> None:
        graph, positions, output, gradient, train = side
        self.doc.replace_graph(graph.copy(), positions, output, gradient)
        if train != self.doc.train:
            self.doc.set_train(train)


#: The code dock opens at least this many columns wide and lines high; its size is kept.
CODE_COLUMNS, CODE_LINES = 40, 12
CODE_SIZE_KEY = "code/size"


class CodeDock(QDockWidget):
    """The current graph as PyTorch code, rewritten on every edit; edit it and press
    Ctrl+Enter to apply (one undo step). An error is marked at its line and the graph
    stays as it is."""

    applied = Signal()

    def __init__(self, doc: GraphDocument, parent: QWidget | None = None) -> None:
        super().__init__("Code", parent)
        self.setObjectName("CodeDock")
        self.doc = doc
        self.edited = False
        self._writing = False
        self._editor: CodeEditor | None = None  # built when first shown (see editor)
        self._status: QLabel | None = None
        doc.resultsChanged.connect(self.refresh)
        doc.trainChanged.connect(self.refresh)  # the training loop's settings
        self.visibilityChanged.connect(lambda visible: visible and self.refresh())  # type: ignore[func-returns-value]
        self.visibilityChanged.connect(self._open_at_size)

    @property
    def editor(self) -> CodeEditor:
        """The code editor; the dock's contents are built the first time they are shown
        or asked for: the dock starts hidden, and most sessions never open it."""
        if self._editor is None:
            self._build()
        assert self._editor is not None
        return self._editor

    @property
    def status(self) -> QLabel:
        """The line under the editor: an import error, or that the code was edited."""
        if self._status is None:
            self._build()
        assert self._status is not None
        return self._status

    def _build(self) -> None:
        body = QWidget(self)
        editor = self._editor = CodeEditor(body)
        editor.setObjectName("CodeEditor")
        editor.setWhatsThis(
            "The graph as PyTorch code. The backward pass the player shows is the loop in "
            "engine/reference.py, written to be read: reverse topological order, one VJP "
            "per edge, gradients summed where edges meet."
        )
        status = self._status = QLabel(body, textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        apply_button = QPushButton("Apply (Ctrl+Enter)", body)
        apply_button.clicked.connect(self.apply)
        revert = QPushButton("Revert", body)
        revert.clicked.connect(self.revert)
        row = fill(QHBoxLayout(), (status, 1), revert, apply_button)
        fill(QVBoxLayout(body), (editor, 1), row, margins=(4, 4, 4, 4))
        self.setWidget(body)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), editor)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(self.apply)
        editor.textChanged.connect(self._text_changed)

    def usable_size(self) -> QSize:
        """The editor's size for :data:`CODE_COLUMNS` x :data:`CODE_LINES` of code."""
        fm, frame = self.editor.fontMetrics(), 2 * self.editor.frameWidth()
        margin = 2 * int(self.editor.document().documentMargin())
        bar = self.editor.horizontalScrollBar().sizeHint().height()  # long lines scroll
        return QSize(
            fm.horizontalAdvance("0" * CODE_COLUMNS) + frame + margin + bar + 4,
            fm.lineSpacing() * CODE_LINES + frame + margin + bar + 4,
        )

    def _open_at_size(self, visible: bool) -> None:
        """Shown: at the size it had last time (remembered), its editor never smaller
        than :meth:`usable_size`."""
        window = self.parentWidget()
        if not visible or self.isFloating() or not hasattr(window, "resizeDocks"):
            return
        self.editor.setMinimumSize(self.usable_size())  # never the 320x90 px it was
        want = self.size().expandedTo(QSettings().value(CODE_SIZE_KEY, QSize()) or QSize())  # type: ignore[arg-type]
        window.resizeDocks([self], [want.width()], Qt.Orientation.Horizontal)  # type: ignore[union-attr]
        window.resizeDocks([self], [want.height()], Qt.Orientation.Vertical)  # type: ignore[union-attr]

    @reported
    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.isVisible():
            QSettings().setValue(CODE_SIZE_KEY, self.size())

    def code(self) -> str:
        """The document as the PyTorch script ``main.py export-torch`` writes for its file
        (title, and the ``torch.optim`` loop of a train block): what the dock shows and
        File > Export writes, one copy."""
        # Lazy: the exporter (and its training-loop writer) loads when code is first shown,
        # exported or checked, not at start-up.
        from engine.pytorch_export import export_script

        doc = self.doc
        return export_script(doc.graph, doc.output, doc.gradient, title=doc.title, train=doc.train)

    def refresh(self) -> None:
        """Show the graph's code, unless the user is in the middle of editing it (or the
        dock is hidden: it catches up when shown, so big graphs cost nothing meanwhile)."""
        if self.edited or not self.isVisible():
            return
        text = self.code()
        if text != self.editor.toPlainText():
            self._writing = True
            scroll = self.editor.verticalScrollBar().value()
            self.editor.setPlainText(text)
            self.editor.verticalScrollBar().setValue(scroll)
            self._writing = False
        self.editor.mark_error(None)
        self.status.setText("")

    def _text_changed(self) -> None:
        if not self._writing:
            self.edited = True
            self.status.setText("Edited: Ctrl+Enter applies, Revert shows the graph's code")

    def revert(self) -> None:
        self.edited = False
        self.refresh()

    def apply(self) -> bool:
        """Import the edited code and replace the graph as one undo step; False on an error
        (marked at its line, the graph untouched)."""
        imported = self.editor.read_code(self.status)
        if imported is None:
            return False
        self.edited = False
        push(self.doc, ReplaceGraph(self.doc, imported))
        self.refresh()
        self.applied.emit()
        return True


def _text(value: np.ndarray | None) -> str:
    if value is None:
        return "None"
    return np.array2string(np.asarray(value), precision=6, separator=", ", threshold=20)


class CheckDialog(QDialog):
    """Per node: our gradient beside PyTorch's and whether they agree."""

    def __init__(self, rows: list[Comparison], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Check with PyTorch")
        self.setObjectName("CheckWithTorchDialog")
        self.resize(760, 420)
        agree = sum(r.agree for r in rows)
        head = QLabel(
            f"{agree} of {len(rows)} gradients agree with PyTorch (float64, rtol 1e-12)", self
        )
        self.table = QTableWidget(len(rows), 4, self)
        self.table.setHorizontalHeaderLabels(["node", "ours", "PyTorch", "agree"])
        for k, row in enumerate(rows):
            cells = [row.node, _text(row.ours), _text(row.theirs), "yes" if row.agree else "NO"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 3 and not row.agree:
                    item.setForeground(THEME.error_text)
                self.table.setItem(k, c, item)
        self.table.resizeColumnsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        fill(QVBoxLayout(self), head, (self.table, 1), buttons)


class CodeHost(Protocol):
    """What the PyTorch actions need of the main window (no import of it: no circle)."""

    doc: GraphDocument
    files: Any  # FileController: maybe_save()

    def show_status(self, text: str) -> None: ...

    def show_error(self, text: str) -> None: ...

    def apply_view_state(self, view: dict[str, Any] | None) -> None: ...

    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget) -> None: ...  # noqa: N802

    def action(self, text: str, slot: Any, keys: str | None = None, tip: str = "") -> QAction: ...


class PytorchCode(QObject):
    """The window's PyTorch actions and the code dock (installed by :func:`install`)."""

    #: A check finished: its rows, or None (cancelled or refused).
    checked = Signal(object)

    def __init__(self, window: CodeHost) -> None:
        super().__init__(window)  # type: ignore[arg-type]
        self.window = window
        self.check_process: QProcess | None = None
        self.check_note: QProgressDialog | None = None
        self.dock = CodeDock(window.doc, window)  # type: ignore[arg-type]
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        painted_alone(self.dock)  # as the window's other docks
        self.dock.hide()
        self.check_dialog: CheckDialog | None = None
        self.import_action = window.action("Import PyTorch &Code…", self.import_dialog)
        self.export_action = window.action("&PyTorch Script…", self.export_dialog)
        self.check_action = window.action(
            "Check with &PyTorch", self.check, None,
            "Run the graph as a PyTorch script in a separate process and compare every gradient",
        )

    # ------------------------------------------------------------------ import

    def import_dialog(self) -> None:
        dialog = ImportCodeDialog(self.window)  # type: ignore[arg-type]
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.imported is not None:
            self.open_imported(dialog.imported)

    def open_imported(self, imported: Imported) -> bool:
        """Open an import as a new untitled document (after the unsaved-changes question)."""
        if not self.window.files.maybe_save():
            return False
        self.window.doc.load(imported.to_graph_file(), None)
        self.window.apply_view_state(None)
        self.window.show_status(f"Imported {len(imported.graph.nodes)} nodes from code")
        return True

    # ------------------------------------------------------------------ export

    def export_dialog(self) -> None:
        name = (self.window.doc.path.stem if self.window.doc.path else "graph") + ".py"
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export PyTorch script", name, "Python (*.py)"  # type: ignore[arg-type]
        )
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        try:
            Path(path).write_text(self.dock.code(), encoding="utf-8")
        except OSError as exc:
            self.window.show_error(f"Cannot write {Path(path).name}: {exc.strerror or exc}")
            return False
        self.window.show_status(f"Exported {Path(path).name}")
        return True

    # ------------------------------------------------------------------ check

    def check(self) -> None:
        """Run the exported script under PyTorch in a separate process, in the background
        (the window stays responsive; a progress note offers Cancel), then show the
        table; ``checked`` says when it is done."""
        doc = self.window.doc
        if doc.output is None:
            self.window.show_error("Check with PyTorch: choose an output node first")
            return
        if self.check_process is not None:
            return  # one check at a time
        from PySide6.QtCore import QProcess  # lazy: PySide6 builds the type at first use

        graph, output, gradient = doc.graph, doc.output, doc.gradient
        process = QProcess(self.window)  # type: ignore[arg-type]  # a CodeHost is the main window
        folder = QTemporaryDir()  # an empty working folder, kept until the run ends
        process.setWorkingDirectory(folder.path())
        self.check_process = process
        note = QProgressDialog("Running the graph under PyTorch…", "Cancel", 0, 0, self.window)  # type: ignore[call-overload]
        note.setWindowTitle("Check with PyTorch")
        note.setMinimumDuration(0)
        note.canceled.connect(process.kill)
        self.check_note = note

        def done(code: int, status: QProcess.ExitStatus) -> None:
            folder.remove()
            self.check_process = None
            note.reset()
            note.deleteLater()
            self.check_note = None
            if status != QProcess.ExitStatus.NormalExit:
                self.window.show_status("Check with PyTorch cancelled")
                self.checked.emit(None)
                return
            out = bytes(process.readAllStandardOutput().data()).decode("utf-8", "replace")
            err = bytes(process.readAllStandardError().data()).decode("utf-8", "replace")
            process.deleteLater()
            try:
                rows = compare_grads(graph, output, gradient, torch_grads(out, err, code))
            except TorchCheckError as exc:
                self.window.show_error(f"Check with PyTorch: {exc}")
                self.checked.emit(None)
                return
            self.check_dialog = CheckDialog(rows, self.window)  # type: ignore[arg-type]
            self.check_dialog.show()
            self.checked.emit(rows)

        process.finished.connect(done)
        process.start(sys.executable, list(ISOLATED_ARGS))
        process.write(checking_script(graph, output, gradient).encode("utf-8"))
        process.closeWriteChannel()
        note.show()


def install(window: CodeHost, menus: dict[str, QMenu]) -> PytorchCode:
    """Add the PyTorch actions to the File, Edit and View menus (Import before the first
    submenu, File > Export before the last item) and the code dock."""
    code = PytorchCode(window)
    file_menu = menus["File"]
    after_open = next((a for a in file_menu.actions() if a.menu() is not None), None)
    file_menu.insertAction(after_open, code.import_action)  # type: ignore[arg-type]
    export = QMenu("E&xport", file_menu)
    file_menu.insertMenu(file_menu.actions()[-1], export)
    export.addAction(code.export_action)
    if torch_available():
        menus["Edit"].addSeparator()
        menus["Edit"].addAction(code.check_action)
    menus["View"].addAction(code.dock.toggleViewAction())
    return code
