"""Issue 15 in the GUI: a hostile file or paste leaves the open document exactly as it was,
exports fail in one line without leaving a partial file, and user text is never markup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gui.clipboard import snapshots_from_json
from gui.commands import SetValue, push
from gui.export import ExportError, save_frame
from gui.main_window import MainWindow
from hostile_inputs import window_state as state

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    '{"format":"backprop-studio-graph","version":1,"nodes":[{"id":"x","op":"input",'
    '"value":1.0,"position":POS},{"id":"y","op":"exp","inputs":["x"]}],'
    '"backward":{"output":"y","gradient":null}}'
)
POSITIONS = ['["a","b"]', "[[1],2]", "[null,null]", "[1e400, 0]", "[NaN, Infinity]"]


@pytest.fixture
def window(make_window):  # noqa: ANN001, ANN201
    return make_window(size=(1280, 720))


@pytest.mark.parametrize("pos", POSITIONS)
def test_open_refuses_a_bad_position_and_keeps_the_open_file(
    window: MainWindow, no_dialogs: dict, tmp_path: Path, pos: str  # noqa: ANN001
) -> None:
    """Issue 15 #1: the old file's path and title stayed on the new graph, undo history
    gone, and the next Ctrl+S overwrote the old file."""
    good = tmp_path / "mine.bpgraph"
    assert window.files.save_as(good)
    assert push(window.doc, SetValue(window.doc, "x1", 5.0)) is None
    before = state(window)
    bad = tmp_path / "bad.bpgraph"
    bad.write_text(HOSTILE.replace("POS", pos))
    assert not window.files.open_path(bad)
    assert state(window) == before
    assert len(no_dialogs["errors"]) == 1
    assert no_dialogs["errors"][0].startswith("Cannot open bad.bpgraph: node 'x': position")


@pytest.mark.parametrize("pos", POSITIONS)
def test_paste_refuses_the_same_json(window: MainWindow, pos: str) -> None:
    before = state(window)
    with pytest.raises(Exception, match="position must be two finite numbers"):
        snapshots_from_json(HOSTILE.replace("POS", pos))
    assert state(window) == before


def test_a_foreign_paste_that_is_broken_says_why(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtCore import QMimeData

    from gui.clipboard import MIME_NODES

    mime = QMimeData()
    mime.setData(MIME_NODES, HOSTILE.replace("POS", "[NaN, 0]").encode("utf-8"))
    clip = QApplication.clipboard()
    clip.setMimeData(mime)
    monkeypatch.setattr(type(clip), "ownsClipboard", lambda self: False)  # another window's
    before = state(window)
    result = window.clipboard.paste(window.doc)
    assert "cannot paste: node 'x': position" in str(result)
    assert state(window) == before
    clip.clear()


def test_the_canvas_survives_a_refused_nan_file(window: MainWindow, tmp_path: Path) -> None:
    """Issue 15 #2: a NaN position made the view transform NaN for the whole session."""
    bad = tmp_path / "nan.bpgraph"
    bad.write_text(HOSTILE.replace("POS", "[NaN, Infinity]"))
    assert not window.files.open_path(bad)
    t = window.canvas.transform()
    assert all(v == v for v in (t.m11(), t.m22(), t.dx(), t.dy()))  # no NaN


def test_user_text_in_labels_is_plain(window: MainWindow) -> None:
    """Issue 15 #11: an id like <img ...> rendered as HTML in the problems label."""
    from gui.commands import Rename

    evil = "<img src='local.png' width=900 height=900>"
    assert push(window.doc, Rename(window.doc, "y", evil)) is None
    assert push(window.doc, SetValue(window.doc, "x1", [1.0, 2.0])) is None
    assert evil in window.problems.text()
    assert window.problems.textFormat() == Qt.TextFormat.PlainText
    assert window.problems.sizeHint().height() < 100
    assert "&lt;img" in window.problems.toolTip()


def run_export(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "main.py", "export", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_export_refuses_nan_positions_in_one_line(tmp_path: Path) -> None:
    """Issue 15 #2: exit 139 (segfault) after a traceback in drawBackground."""
    bad = tmp_path / "nan.bpgraph"
    bad.write_text(HOSTILE.replace("POS", "[NaN, Infinity]"))
    proc = run_export(str(bad), "--step", "1", "--out", str(tmp_path / "f.png"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "position must be two finite numbers" in proc.stderr
    assert not (tmp_path / "f.png").exists()


def test_export_one_line_contracts(tmp_path: Path) -> None:
    """Issue 15 #10: a 5,000-digit --step gave a traceback; an unwritable folder printed
    Qt warnings before the error line."""
    seed = str(ROOT / "assets" / "examples" / "seed1_square_sum.bpgraph")
    proc = run_export(seed, "--step", "9" * 5000, "--out", str(tmp_path / "f.png"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and len(proc.stderr) < 400
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    proc = run_export(seed, "--step", "1", "--out", str(blocker / "f.png"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")


def test_export_to_a_full_disk_fails_and_leaves_no_partial_file(
    qapp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    """Issue 15 #6: a PNG without its end chunk was reported as exported."""
    from engine.fileformat import load
    from gui.document import GraphDocument

    doc = GraphDocument()
    doc.load(load(ROOT / "assets" / "examples" / "seed1_square_sum.bpgraph"), None)
    written = 0

    def full_after_4k(fd: int, data: Any) -> int:
        nonlocal written
        if written >= 4096:
            raise OSError(28, "No space left on device")
        n = min(len(data), 4096 - written)
        written += n
        return real_write(fd, bytes(data[:n]))

    real_write = os.write
    monkeypatch.setattr(os, "write", full_after_4k)
    out = tmp_path / "frame.png"
    with pytest.raises(ExportError, match="No space left on device"):
        save_frame(doc, None, out, (400, 300))
    monkeypatch.setattr(os, "write", real_write)
    assert list(tmp_path.iterdir()) == []


def test_export_image_menu_reports_a_full_disk(
    window: MainWindow, no_dialogs: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    from PySide6.QtWidgets import QFileDialog

    out = tmp_path / "frame.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))

    def full(_fd: int, _data: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    window.export_image()
    monkeypatch.undo()
    assert no_dialogs["errors"] and "No space left on device" in no_dialogs["errors"][-1]
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_saved_document_reopens_with_its_view(window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "v.bpgraph"
    assert window.files.save_as(path)
    view = json.loads(path.read_text())["view"]
    assert set(view) == {"zoom", "center"}
    assert window.files.open_path(path)


def test_what_the_window_saves_always_reopens(window: MainWindow) -> None:
    """A rename past the id limit is refused (the loader would refuse the saved file)."""
    from gui.commands import Rename

    assert "at most 200 characters" in str(push(window.doc, Rename(window.doc, "x1", "q" * 201)))
