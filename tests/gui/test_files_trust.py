"""No save loses another's edit, no autosave record is trusted blindly, a failing
backward never half-opens a file (issue 25, items 4, 9, 16)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_files import FakeHost, build, setup  # noqa: F401 - the fixture

import gui.document
from gui.commands import SetValue, push
from gui.document import GraphDocument
from gui.files import DiskChange, FileController, autosave_dir


class DiskHost(FakeHost):
    def __init__(self, answer: DiskChange) -> None:
        super().__init__()
        self.disk_answer = answer

    def ask_changed_on_disk(self, name: str) -> DiskChange:
        self.asked.append(f"changed:{name}")
        return self.disk_answer


def _two_windows(tmp_path: Path, answer: DiskChange) -> tuple:
    doc_a, doc_b = GraphDocument(), GraphDocument()
    build(doc_a)
    path = tmp_path / "g.bpgraph"
    files_a = FileController(doc_a, FakeHost())
    assert files_a.save_as(path)
    host_b = DiskHost(answer)
    files_b = FileController(doc_b, host_b)
    assert files_b.open_path(path)  # B opened before A's next save
    assert push(doc_a, SetValue(doc_a, "k", 11.0)) is None
    assert files_a.save()
    assert push(doc_b, SetValue(doc_b, "x", [22.0, 2.0])) is None
    return path, files_a, files_b, host_b


@pytest.mark.parametrize("answer", list(DiskChange))
def test_a_save_over_another_windows_save_asks_first(qtbot, tmp_path, answer) -> None:  # noqa: ANN001
    path, files_a, files_b, host_b = _two_windows(tmp_path, answer)
    other = tmp_path / "mine.bpgraph"
    host_b.save_path = str(other)
    saved = files_b.save()
    assert host_b.asked[-1] == "changed:g.bpgraph"
    on_disk = json.loads(path.read_text())
    k = next(n for n in on_disk["nodes"] if n["id"] == "k")["value"]
    if answer == DiskChange.OVERWRITE:
        assert saved and k == 3.0  # the user chose to replace A's edit
    else:
        assert k == 11.0  # A's edit is still there
    if answer == DiskChange.SAVE_AS:
        assert saved and other.exists() and files_b.doc.path == other.resolve()
    if answer == DiskChange.RELOAD:
        assert float(files_b.doc.graph.nodes["k"].value) == 11.0
    if answer == DiskChange.CANCEL:
        assert not saved and files_b.doc.modified
    # once saved (or reloaded), the next save of an unchanged file asks nothing
    asked = len(host_b.asked)
    if answer != DiskChange.CANCEL:
        assert push(files_b.doc, SetValue(files_b.doc, "k", 7.0)) is None
        assert files_b.save() and len(host_b.asked) == asked
    files_a.shutdown()
    files_b.shutdown()


def _leftover(files: FileController, record: object, name: str) -> Path:
    if not files.doc.graph.nodes:
        build(files.doc)
    written = files.write_autosave()
    assert written is not None
    doc = json.loads(written.read_text())
    doc["autosave"] = record
    leftover = autosave_dir() / name
    leftover.write_text(json.dumps(doc))
    written.unlink()
    return leftover


def test_an_autosave_pointing_at_a_file_never_opened_is_offered_as_untitled(setup) -> None:  # noqa: ANN001, F811
    doc, host, files = setup
    leftover = _leftover(files, {"source": "/etc/passwd", "pid": 2**70}, "passwd-x-1.bpgraph")
    assert files.recoverable() == [(leftover, None)]  # no OverflowError, no /etc/passwd
    fresh = GraphDocument()
    fresh_host = FakeHost()
    fresh_files = FileController(fresh, fresh_host)
    assert fresh_files.offer_recovery()
    assert "passwd" not in fresh_host.questions[0] and fresh.path is None
    fresh_files.shutdown()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    record=st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=5),
        st.dictionaries(
            st.sampled_from(["source", "pid"]),
            st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
        ),
    )
)
def test_any_autosave_record_is_listed_without_an_error(setup, record) -> None:  # noqa: ANN001, F811
    doc, host, files = setup
    for old in autosave_dir().glob("*.bpgraph"):
        old.unlink()
    leftover = _leftover(files, record, "any-1.bpgraph")
    found = files.recoverable()
    assert [f for f, _ in found] in ([leftover], [])
    assert all(source is None for _, source in found)  # nothing here was opened
    files.remove_autosave()


def test_a_recovered_autosave_of_a_file_opened_here_keeps_its_source(setup, tmp_path) -> None:  # noqa: ANN001, F811
    doc, host, files = setup
    build(doc)
    source = tmp_path / "g.bpgraph"
    assert files.save_as(source)
    assert push(doc, SetValue(doc, "k", 4.0)) is None
    copy = files.write_autosave()
    assert copy is not None
    crashed = copy.with_name(copy.name.replace(files._session, "99-1"))
    crashed.write_text(copy.read_text().replace(f'"pid": {os.getpid()}', '"pid": 999999999'))
    assert (crashed, source.resolve()) in files.recoverable()


def test_an_engine_failure_in_backward_never_half_opens_a_file(
    setup, tmp_path, monkeypatch  # noqa: F811
) -> None:  # noqa: ANN001
    doc, host, files = setup
    path = tmp_path / "empty_mse.bpgraph"
    path.write_text(json.dumps({
        "format": "backprop-studio-graph", "version": 1,
        "nodes": [
            {"id": "x", "op": "input", "value": [], "requires_grad": True},
            {"id": "m", "op": "mse_loss", "inputs": ["x", "x"]},
        ],
        "backward": {"output": "m"},
    }))

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(gui.document, "backward", broken)
    assert files.open_path(path)  # no exception escapes
    assert list(doc.graph.nodes) == ["x", "m"]
    assert doc.results.trace is None and "ZeroDivisionError" in str(doc.results.backward_error)
    assert doc.results.forward.values["m"] is not None
