"""The Notes editor keeps the description within what the loader opens (issue 25, item 13).

A note longer than ``MAX_TEXT_LENGTH`` would save but never reopen, so the editor
refuses the edit that crosses the limit, says so in one line, and keeps what was there.
"""

from __future__ import annotations

from engine import fileformat
from engine.file_limits import MAX_TEXT_LENGTH
from gui.document import GraphDocument
from gui.panels.notes import NotesPanel

#: One character short of the limit, in lines (one 1,000,000-character line lays out slowly).
LONG = ("n" * 99 + "\n") * (MAX_TEXT_LENGTH // 100 - 1) + "n" * 99


def test_an_edit_past_the_limit_is_refused_and_what_is_kept_reopens(qtbot):  # noqa: ANN001
    doc = GraphDocument()
    panel = NotesPanel(doc)
    qtbot.addWidget(panel)
    panel.show()
    doc.set_description(LONG)  # as a file opened with it
    panel.edit.moveCursor(panel.edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(panel.edit, "a")  # exactly at the limit: accepted
    assert len(doc.description) == MAX_TEXT_LENGTH
    assert panel.message.isHidden()

    panel.edit.insertPlainText("pasted")  # one paste over the limit: refused whole
    assert len(doc.description) == MAX_TEXT_LENGTH
    assert panel.text() == doc.description
    assert panel.message.isVisible()
    message = panel.message.text()
    assert "1,000,000 characters" in message and "not applied" in message
    assert "\n" not in message

    text = fileformat.dumps(doc.to_file())
    assert fileformat.loads(text).description == doc.description  # it reopens

    doc.undo_stack.undo()  # the refused edit left no undo step of its own
    assert doc.description == LONG
    qtbot.keyClicks(panel.edit, "b")  # a later edit within the limit clears the message
    assert panel.message.isHidden()
