"""The notes area: the file's description, shown when it opens and editable.

Every example carries a description of what it shows; a teacher's own file can
carry notes the same way. Typing is one undoable edit per burst (consecutive
keystrokes merge), so the notes are saved with the graph and nothing is lost.
An edit that would make the notes longer than the loader accepts
(:data:`engine.file_limits.MAX_TEXT_LENGTH`) is refused with a one-line message:
otherwise the file would save but never open again.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from engine.file_limits import MAX_TEXT_LENGTH

from ..commands import SetDescription, push
from ..document import GraphDocument
from ..layouts import fill


class NotesPanel(QWidget):
    """A small plain-text editor bound to ``doc.description``."""

    def __init__(self, doc: GraphDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NotesPanel")
        self.doc = doc
        self.edit = QPlainTextEdit(self, placeholderText="Notes about this graph (saved with it)")
        self.edit.setObjectName("NotesText")
        self.message = QLabel(self)
        self.message.setObjectName("NotesMessage")
        self.message.hide()
        fill(QVBoxLayout(self), self.edit, self.message, margins=(4, 4, 4, 4))
        self.edit.textChanged.connect(self._typed)
        doc.fileChanged.connect(self.sync)
        self.sync()

    def text(self) -> str:
        return self.edit.toPlainText()

    def sync(self) -> None:
        """Show the document's description (a file opened, an undo, a new document)."""
        self.message.hide()
        if self.edit.toPlainText() != self.doc.description:
            self._show_description()

    def _show_description(self) -> None:
        with QSignalBlocker(self.edit):  # showing the notes is not typing them
            self.edit.setPlainText(self.doc.description)

    def _typed(self) -> None:
        text = self.edit.toPlainText()
        if len(text) > MAX_TEXT_LENGTH:
            self._refuse(len(text))
        elif text != self.doc.description:
            self.message.hide()
            push(self.doc, SetDescription(self.doc, text))

    def _refuse(self, length: int) -> None:
        """Put the notes back as they were (the cursor too) and say why, in one line."""
        cursor = min(self.edit.textCursor().position(), len(self.doc.description))
        self._show_description()
        moved = self.edit.textCursor()
        moved.setPosition(cursor)
        self.edit.setTextCursor(moved)
        self.message.setText(
            f"Notes may have at most {MAX_TEXT_LENGTH:,} characters; the edit "
            f"(making {length:,}) was not applied."
        )
        self.message.show()
