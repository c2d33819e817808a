"""The notes area: the file's description, shown when it opens and editable.

Every example carries a description of what it shows; a teacher's own file can
carry notes the same way. Typing is one undoable edit per burst (consecutive
keystrokes merge), so the notes are saved with the graph and nothing is lost.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from ..commands import SetDescription, push
from ..document import GraphDocument


class NotesPanel(QWidget):
    """A small plain-text editor bound to ``doc.description``."""

    def __init__(self, doc: GraphDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NotesPanel")
        self.doc = doc
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName("NotesText")
        self.edit.setPlaceholderText("Notes about this graph (saved with it)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.edit)
        self._showing = False
        self.edit.textChanged.connect(self._typed)
        doc.fileChanged.connect(self.sync)
        self.sync()

    def text(self) -> str:
        return self.edit.toPlainText()

    def sync(self) -> None:
        """Show the document's description (a file opened, an undo, a new document)."""
        if self.edit.toPlainText() != self.doc.description:
            self._showing = True
            try:
                self.edit.setPlainText(self.doc.description)
            finally:
                self._showing = False

    def _typed(self) -> None:
        if not self._showing and self.edit.toPlainText() != self.doc.description:
            push(self.doc, SetDescription(self.doc, self.edit.toPlainText()))
