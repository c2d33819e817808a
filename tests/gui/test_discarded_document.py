"""A discarded document is collected without a crash, whatever order the collector
takes its objects in (the full suite segfaulted in ``QUndoStack::clear``).

The document, its undo stack and the commands that hold the document are one
reference cycle. shiboken6 6.11 clears a pushed command's wrapper by handing the C++
command back to Python, which deletes it while the stack still lists it, so when the
collector reached two commands before their document the stack deleted one twice.
The order depends on which generation each object sits in; the script below puts the
document in an older one than its commands, so a full collection reaches them first,
deterministically. It runs in a child process: a regression is a failed assertion,
not a suite killed by SIGSEGV.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_DISCARD = """
import gc, sys
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
app = QApplication([])
from gui.commands import AddNode, Connect, delete_selection, push
from gui.document import GraphDocument

owner = QObject() if sys.argv[1] == "window's" else None  # a window is its doc's parent
doc = GraphDocument(owner)
if owner is not None:
    owner.doc, owner.me = doc, owner  # a window is in cycles of its own
gc.collect(0)  # the document (and its stack) one generation older than its commands
push(doc, AddNode(doc, "input", (0.0, 0.0), id="a", value=[1.0]))
push(doc, AddNode(doc, "tanh", (0.0, 0.0), id="t"))
push(doc, AddNode(doc, "exp", (0.0, 0.0), id="e"))
push(doc, Connect(doc, "a", "t", 0))
push(doc, Connect(doc, "a", "e", 0))
push(doc, delete_selection(doc, ["t"], [("a", "e", 0)]))  # a composite: parts hold doc
doc.undo_stack.undo()  # one command past the index, still the stack's
del doc, owner
print("collected", gc.collect() > 0, flush=True)
"""


@pytest.mark.parametrize("kind", ["a test's", "window's"])
def test_a_discarded_document_with_undo_history_is_collected_without_a_crash(
        kind: str) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _DISCARD, kind], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]  # -11: SIGSEGV in QUndoStack::clear
    assert done.stdout.split() == ["collected", "True"]
