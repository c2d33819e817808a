"""Open, save, recent files and autosave: no edit and no saved file is ever lost."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.examples import EXAMPLES_DIR
from gui.commands import AddNode, Connect, MoveNodes, SetBackward, SetValue, push
from gui.document import GraphDocument
from gui.files import MAX_RECENT, FileController, autosave_dir


class FakeHost:
    """Answers the controller's questions the way a test tells it to, and records them."""

    def __init__(self) -> None:
        self.discard_answer = "discard"
        self.recover_answer = True
        self.replace_read_only_answer = False
        self.save_path: str | None = None
        self.errors: list[str] = []
        self.asked: list[str] = []
        self.questions: list[str] = []
        self.view: dict[str, Any] | None = {"zoom": 1.25, "center": [10.0, -20.0]}
        self.applied: list[Any] = []

    def confirm_discard(self) -> str:
        self.asked.append("discard")
        return self.discard_answer

    def show_error(self, text: str) -> None:
        self.errors.append(text)

    def ask_recover(self, text: str) -> bool:
        self.asked.append("recover")
        self.questions.append(text)
        return self.recover_answer

    def ask_save_path(self, suggested: str) -> str | None:
        return self.save_path

    def ask_replace_read_only(self, name: str) -> bool:
        self.asked.append("replace_read_only")
        return self.replace_read_only_answer

    def ask_open_path(self) -> str | None:
        return None

    def view_state(self) -> dict[str, Any] | None:
        return self.view

    def apply_view_state(self, view: dict[str, Any] | None) -> None:
        self.applied.append(view)


def build(doc: GraphDocument) -> None:
    """x = [1, 2] input, k = 3 const, y = x * k, s = sum(y); backward from s."""
    for cmd in (
        AddNode(doc, "input", (10.5, 20.25), id="x", value=[1.0, 2.0]),
        AddNode(doc, "const", (10.0, 120.0), id="k", value=3.0),
        AddNode(doc, "mul", (200.0, 60.0), id="y"),
        AddNode(doc, "sum", (380.0, 60.0), id="s", attrs={"dim": [0], "keepdim": True}),
        AddNode(doc, "add", (380.0, 200.0), id="half"),  # one port left empty: still saved
        Connect(doc, "x", "y", 0),
        Connect(doc, "k", "y", 1),
        Connect(doc, "y", "s", 0),
        Connect(doc, "y", "half", 0),
        SetBackward(doc, "s", [1.0]),
    ):
        assert push(doc, cmd) is None


@pytest.fixture
def setup(qtbot, settings_sandbox):  # noqa: ANN001, ANN201
    doc = GraphDocument()
    host = FakeHost()
    files = FileController(doc, host)
    yield doc, host, files
    files.shutdown()


def snapshot(doc: GraphDocument) -> dict[str, Any]:
    nodes = {
        n.id: (n.op, list(n.inputs), dict(n.attrs),
               None if n.value is None else n.value.tolist(), n.requires_grad)
        for n in doc.graph.nodes.values()
    }
    grad = None if doc.gradient is None else doc.gradient.tolist()
    return {"nodes": nodes, "positions": dict(doc.positions), "output": doc.output, "v": grad}


def test_save_and_reopen_is_identical(setup, tmp_path: Path) -> None:
    doc, host, files = setup
    build(doc)
    assert doc.modified
    host.save_path = str(tmp_path / "graph")  # no suffix: .bpgraph is added
    assert files.save()
    path = tmp_path / "graph.bpgraph"
    assert path.exists() and doc.path == path.resolve() and not doc.modified
    before = snapshot(doc)

    other = GraphDocument()
    other_files = FileController(other, FakeHost())
    assert other_files.load_path(path)
    assert snapshot(other) == before
    assert other_files.host.applied[-1] == {"zoom": 1.25, "center": [10.0, -20.0]}
    assert not other.modified
    np.testing.assert_array_equal(other.results.trace.grads["x"], [3, 3])
    other_files.shutdown()


def test_broken_file_leaves_document_untouched(setup, tmp_path: Path) -> None:
    doc, host, files = setup
    build(doc)
    before, graph = snapshot(doc), doc.graph
    bad = tmp_path / "broken.bpgraph"
    bad.write_text('{"format": "backprop-studio-graph", "version": 1, "nodes": [{"id": 3}]}')
    assert not files.open_path(bad)
    assert len(host.errors) == 1 and host.errors[0].startswith("Cannot open broken.bpgraph: ")
    assert "\n" not in host.errors[0]
    assert doc.graph is graph and snapshot(doc) == before and doc.modified
    assert not files.load_path(tmp_path / "missing.bpgraph")
    assert "no such file" in host.errors[-1]


def test_unsaved_changes_are_confirmed(setup, tmp_path: Path) -> None:
    doc, host, files = setup
    example = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"
    build(doc)
    host.discard_answer = "cancel"
    assert not files.open_path(example)
    assert host.asked == ["discard"] and "half" in doc.graph
    assert not files.open_path(EXAMPLES_DIR / "missing.bpgraph")
    assert host.asked == ["discard"]  # a broken file is refused before asking
    assert not files.new_document() and "half" in doc.graph
    host.discard_answer = "save"
    host.save_path = None  # the save dialog is cancelled: so is the open
    assert not files.open_path(example) and "half" in doc.graph
    host.save_path = str(tmp_path / "kept.bpgraph")
    assert files.open_path(example)
    assert (tmp_path / "kept.bpgraph").exists() and "x1" in doc.graph
    assert doc.path is None  # an example opens as an untitled copy
    host.asked.clear()
    assert files.new_document() and len(doc.graph) == 0
    assert host.asked == []  # nothing was modified: nothing to ask


def test_save_failure_is_one_line(setup, tmp_path: Path) -> None:
    doc, host, files = setup
    build(doc)
    target = tmp_path / "no-such-dir" / "g.bpgraph"
    assert not files.save_as(target)
    assert host.errors and host.errors[0].startswith("Cannot save g.bpgraph")
    assert doc.modified and doc.path is None


def test_recent_files(setup, tmp_path: Path) -> None:
    doc, host, files = setup
    build(doc)
    paths = []
    for i in range(MAX_RECENT + 2):
        p = tmp_path / f"g{i}.bpgraph"
        assert files.save_as(p)
        paths.append(p.resolve())
    recent = files.recent_files()
    assert recent == list(reversed(paths))[:MAX_RECENT]
    assert files.open_path(paths[3])
    assert files.recent_files()[0] == paths[3] and len(files.recent_files()) == MAX_RECENT
    paths[3].unlink()
    assert not files.open_path(paths[3])
    assert paths[3] not in files.recent_files()  # a vanished file leaves the list
    files.clear_recent()
    assert files.recent_files() == []


def test_autosave_and_recovery(qtbot, setup, tmp_path: Path) -> None:
    doc, host, files = setup
    build(doc)
    written = files.write_autosave()
    assert written is not None and written.parent == autosave_dir() and written.exists()
    assert files.recoverable() == []  # this session's own copy is not a crash leftover

    # Simulate a crash: the copy now belongs to a process that no longer exists.
    text = written.read_text()
    orphan = autosave_dir() / "untitled-crashed.bpgraph"
    orphan.write_text(text.replace(f'"pid": {os.getpid()}', '"pid": 999999999'))
    files.shutdown()
    assert not written.exists()  # a consented close removes this session's copy
    assert files.recoverable() == [(orphan, None)]

    fresh = GraphDocument()
    fresh_host = FakeHost()
    fresh_files = FileController(fresh, fresh_host)
    fresh_host.recover_answer = False
    assert not fresh_files.offer_recovery()
    assert not orphan.exists()  # declined: forgotten

    orphan.write_text(text.replace(f'"pid": {os.getpid()}', '"pid": 999999999'))
    fresh_host.recover_answer = True
    assert fresh_files.offer_recovery()
    assert snapshot(fresh)["nodes"] == snapshot(doc)["nodes"]
    assert fresh.modified  # recovered work is unsaved work
    assert not orphan.exists() and fresh_files.autosave_path().exists()
    assert fresh_files.save_as(tmp_path / "recovered.bpgraph")
    assert list(autosave_dir().glob("*.bpgraph")) == []  # a clean save removes the copy
    fresh_files.shutdown()


def test_autosave_older_than_its_source_is_offered_with_both_times(
    setup, tmp_path: Path
) -> None:  # noqa: ANN001
    """Issue 15 #4: a touched source (checkout, sync tool) must not make the crash copy
    disappear unasked; the question says when each was written."""
    doc, host, files = setup
    build(doc)
    source = tmp_path / "g.bpgraph"
    assert files.save_as(source)
    assert push(doc, SetValue(doc, "k", 4.0)) is None
    copy = files.write_autosave()
    assert copy is not None and "g-" in copy.name
    crashed = autosave_dir() / "crashed.bpgraph"
    crashed.write_text(copy.read_text().replace(f'"pid": {os.getpid()}', '"pid": 999999999'))
    old = time.time() - 3600
    os.utime(crashed, (old, old))  # the source (saved just now) is newer: `touch` did it
    assert files.recoverable() == [(crashed, source.resolve())]
    assert crashed.exists()
    fresh = GraphDocument()
    fresh_host = FakeHost()
    fresh_files = FileController(fresh, fresh_host)
    fresh_host.recover_answer = False
    assert not fresh_files.offer_recovery()
    question = fresh_host.questions[0]
    assert time.strftime("%H:%M:%S", time.localtime(old)) in question
    assert "changed later, at " + time.strftime("%Y-%m-%d", time.localtime()) in question
    fresh_files.shutdown()


def test_a_second_instance_never_deletes_the_first_ones_autosave(setup, tmp_path: Path) -> None:
    """Issue 15 #5: two windows on one file each keep their own autosave."""
    doc, host, files = setup
    build(doc)
    source = tmp_path / "g.bpgraph"
    assert files.save_as(source)
    assert push(doc, SetValue(doc, "k", 4.0)) is None
    first = files.write_autosave()
    other = GraphDocument()
    other_files = FileController(other, FakeHost())
    assert other_files.open_path(source)
    assert push(other, SetValue(other, "k", 5.0)) is None
    second = other_files.write_autosave()
    assert first is not None and second is not None and first != second
    other_files.save()  # saving removes its own copy only
    other_files.shutdown()
    assert first.exists() and not second.exists()
    files.shutdown()
    assert not first.exists()


def test_autosave_follows_modified_state(qtbot, setup) -> None:
    doc, host, files = setup
    build(doc)
    path = files.write_autosave()
    assert path is not None and path.exists()
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert not doc.modified and not path.exists()  # back to clean: nothing to keep
    assert push(doc, MoveNodes(doc, {}, {})) is None
    assert files.write_autosave() is not None


def test_saving_over_a_read_only_file_asks_first(setup, tmp_path: Path) -> None:  # noqa: ANN001
    doc, host, files = setup
    build(doc)
    target = tmp_path / "ro.bpgraph"
    target.write_text("keep me")
    target.chmod(0o444)
    assert not files.save_as(target)
    assert host.asked == ["replace_read_only"] and target.read_text() == "keep me"
    assert doc.modified
    host.replace_read_only_answer = True
    assert files.save_as(target)
    assert not doc.modified and "keep me" not in target.read_text()


def test_a_node_moved_far_away_is_saved_where_the_loader_accepts_it(
    setup, tmp_path: Path  # noqa: ANN001
) -> None:
    from engine.layout_keys import MAX_COORD

    doc, host, files = setup
    build(doc)
    assert push(doc, MoveNodes(doc, {"x": doc.positions["x"]}, {"x": (5e6, -5e6)})) is None
    path = tmp_path / "far.bpgraph"
    assert files.save_as(path)
    assert files.open_path(path)
    assert doc.positions["x"] == (MAX_COORD, -MAX_COORD)
