"""A desktop citizen: the desktop entry and file types (and their removal), a second
launch opening its file in a new window of the running app, Help > About, the icon."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from PySide6.QtWidgets import QApplication

from engine import app_version
from engine.examples import example_path
from gui import desktop
from gui.about import AboutDialog, dependencies
from gui.app import Windows
from gui.commands import Rename, push
from gui.files import autosave_dir
from gui.single_instance import InstanceServer, channel_name

ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_install_desktop_writes_the_entry_and_types_and_uninstall_removes_exactly_them(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    home = tmp_path / "share with space"
    mine = home / "applications" / "my-editor.desktop"
    mine.parent.mkdir(parents=True)
    mine.write_text("[Desktop Entry]\nName=Mine\n")
    before = _tree(home)
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    script = tmp_path / "bin dir" / "backprop-studio"  # a venv's command, spaces in its path
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(script)])
    assert desktop.main("--install-desktop") == 0

    entry = (home / "applications" / "backprop-studio.desktop").read_text()
    assert "MimeType=application/x-bpgraph;application/x-bptrace;\n" in entry
    assert "Icon=backprop-studio\n" in entry and "Exec=" in entry and entry.endswith("\n")
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    assert exec_line == f'Exec="{script}" %F'
    types = ET.parse(home / "mime" / "packages" / "backprop-studio.xml").getroot()
    globs = {m.get("type"): m.find("{*}glob").get("pattern") for m in types}
    assert globs == {"application/x-bpgraph": "*.bpgraph", "application/x-bptrace": "*.bptrace"}
    icon = home / "icons" / "hicolor" / "scalable" / "apps" / "backprop-studio.svg"
    assert icon.read_bytes() == desktop.ICON_FILE.read_bytes()
    if shutil.which("update-mime-database"):  # the cache the file manager reads
        assert "*.bpgraph" in (home / "mime" / "globs2").read_text()
    assert desktop.main("--install-desktop") == 0  # again: the same files, nothing new

    assert desktop.main("--uninstall-desktop") == 0
    assert _tree(home) == before
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == [
        "applications", "applications/my-editor.desktop"]
    assert desktop.main("--uninstall-desktop") == 0  # nothing left to remove: still fine


def test_exec_quoting_follows_the_desktop_entry_spec() -> None:
    assert desktop.exec_quote("/usr/bin/backprop-studio") == "/usr/bin/backprop-studio"
    assert desktop.exec_quote('/a b/"c"$d') == '"/a b/\\\\"c\\\\"\\\\$d"'
    assert desktop.exec_quote("/100%/x") == "/100%%/x"


def test_a_second_launch_opens_its_file_in_a_new_window_and_keeps_unsaved_work(
    qtbot, settings_sandbox, no_dialogs, tmp_path: Path  # noqa: ANN001
) -> None:
    windows = Windows()
    server = InstanceServer(windows.open_files, channel_name())
    assert server.listen()
    try:
        assert windows.open_files([]) == []
        first = windows.open[0]
        qtbot.waitExposed(first)
        push(first.doc, Rename(first.doc, "x1", "renamed"))
        assert first.doc.modified
        bad = tmp_path / "cut.bptrace"
        bad.write_text('{"format": "backprop-studio-trace", "version": 1, "nodes": [')
        graph = tmp_path / "mine.bpgraph"
        shutil.copy(example_path("seed1_square_sum"), graph)
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        launch = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), str(graph), str(bad)],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        qtbot.waitUntil(lambda: launch.poll() is not None, timeout=60_000)
        err = launch.stderr.read()
        assert launch.returncode == 2, err  # the bad trace, said in the second launch's terminal
        assert err.startswith(f"error: {bad}: not valid JSON") and err.count("\n") == 1
        assert len(windows.open) == 2
        second = windows.open[1]
        assert second.doc.path == graph and not second.doc.modified
        assert first.doc.modified and "renamed" in first.doc.graph.nodes
    finally:
        server.close()
        for window in list(windows.open):
            window.doc.undo_stack.clear()
            window.close()
        QApplication.processEvents()


def test_about_names_the_version_the_licences_and_where_things_are(qtbot) -> None:  # noqa: ANN001
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    text = dialog.text.toPlainText()
    assert app_version() in text.splitlines()[0]
    assert "SIL OPEN FONT LICENSE Version 1.1" in text
    names = {name.lower().replace("_", "-") for name, _v, _l in dependencies()}
    assert {"numpy", "networkx", "pyqtgraph", "pyside6-essentials", "pillow", "av"} <= names
    assert "BSD-3-Clause" in text and "LGPL-3.0-only" in text
    assert str(autosave_dir()) in text and ".conf" in text


def test_every_window_carries_the_app_icon(qapp) -> None:  # noqa: ANN001
    from gui.application import ensure_app

    icon = ensure_app().windowIcon()
    assert not icon.isNull() and not icon.pixmap(32, 32).toImage().isNull()
    assert icon.pixmap(32, 32).toImage().pixelColor(16, 16).alpha() > 0


def test_asking_for_the_app_again_leaves_the_windows_icons_be(qapp, qtbot) -> None:  # noqa: ANN001
    # The icon is set once: setting it again sent every widget an icon-change event
    # (10 ms per call with a window open, timed into every benchmark step that asked).
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QLabel

    from gui.application import ensure_app

    ensure_app()
    seen: list[QEvent.Type] = []

    class Spy(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.ApplicationWindowIconChange:
                seen.append(event.type())
            return False

    label = QLabel("a window")
    qtbot.addWidget(label)
    label.show()
    spy = Spy()
    label.installEventFilter(spy)
    icon = ensure_app().windowIcon()
    assert seen == [] and not icon.isNull()
