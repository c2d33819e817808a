"""Every hostile input class of issue 15 through File > Open, Paste and ``export``: each
ends with a result or one clean line, and a refusal leaves the open document as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.fileformat import FileFormatError
from gui.clipboard import paste_snapshots, snapshots_from_json
from gui.commands import SetValue, push
from gui.main_window import MainWindow
from hostile_inputs import hostile_files, loadable_files
from hostile_inputs import window_state as state

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def window(make_window):  # noqa: ANN001, ANN201
    return make_window(size=(800, 600))


def write_all(folder: Path) -> list[tuple[str, Path]]:
    files = []
    for k, (name, text) in enumerate([*hostile_files(), *loadable_files()]):
        path = folder / f"{k}.bpgraph"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        files.append((name, path))
    return files


def test_open_and_paste_leave_the_document_alone_when_they_refuse(
    window: MainWindow, no_dialogs: dict, tmp_path: Path  # noqa: ANN001
) -> None:
    own = tmp_path / "own.bpgraph"
    assert window.files.save_as(own)
    files = write_all(tmp_path)
    refused = 0
    assert push(window.doc, SetValue(window.doc, "x1", 4.0)) is None  # unsaved work
    no_dialogs["discard"] = "cancel"  # keep it: an accepted file asks first
    before = state(window)
    for name, path in files:
        errors = len(no_dialogs["errors"])
        assert not window.files.open_path(path), name  # refused, or the user said cancel
        assert state(window) == before, name
        if len(no_dialogs["errors"]) > errors:
            refused += 1
            message = no_dialogs["errors"][-1]
            assert "\n" not in message and len(message) < 400, name
        # Paste the same text: refused in one line, or pasted and undone as one step.
        text = path.read_text(encoding="utf-8", errors="surrogatepass")
        try:
            snaps = snapshots_from_json(text)
        except FileFormatError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 400, name
            assert state(window) == before, name
        else:
            result = paste_snapshots(window.doc, snaps, (40.0, 40.0), "Paste")
            if isinstance(result, list) and result:
                window.doc.undo_stack.undo()
            assert state(window)["nodes"] == before["nodes"], name
            before = state(window)  # the undone paste stays on the redo side
    assert refused > 300


def test_open_accepts_the_loadable_files(
    window: MainWindow, no_dialogs: dict, tmp_path: Path  # noqa: ANN001
) -> None:
    for k, (name, text) in enumerate(loadable_files()):
        path = tmp_path / f"{k}.bpgraph"
        path.write_text(text)
        assert window.files.open_path(path), (name, no_dialogs["errors"])
        t = window.canvas.transform()
        assert all(v == v for v in (t.m11(), t.m22(), t.dx(), t.dy())), name


DRIVER = """
import contextlib, io, json, sys
from gui.export import main
for path in sys.argv[2:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main([path, "--step", "end", "--out", sys.argv[1], "--size", "200x200"])
    print(json.dumps([path, status, err.getvalue()]), flush=True)
"""


def test_export_ends_with_an_image_or_one_line(tmp_path: Path) -> None:
    """Every third hostile file (rendering costs) and every loadable one."""
    every = write_all(tmp_path)
    n_loadable = len(list(loadable_files()))
    files = every[: -n_loadable : 3] + every[-n_loadable:]
    out = tmp_path / "frame.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(out), *(str(p) for _, p in files)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(files)
    names = {str(p): name for name, p in files}
    for path, status, err in results:
        assert status in (0, 2), (names[path], err)
        if status == 2:
            assert err.count("\n") == 1 and err.startswith("error: "), (names[path], err)
            assert len(err) < 600, names[path]
    assert sum(status == 2 for _, status, _ in results) > 100
    assert all(status == 0 for _, status, _ in results[-n_loadable:])
