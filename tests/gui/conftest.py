"""GUI tests run offscreen, with settings and autosaves in a throw-away folder.

The environment is set at import time, before any QApplication or QSettings
exists, so no test can touch a real user's recent files or autosaves.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = tempfile.mkdtemp(prefix="bpstudio-tests-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_SANDBOX, "config")
os.environ["XDG_DATA_HOME"] = os.path.join(_SANDBOX, "data")
os.environ["XDG_CACHE_HOME"] = os.path.join(_SANDBOX, "cache")

import pytest  # noqa: E402

ARTIFACTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "artifacts")


@pytest.fixture
def settings_sandbox(qapp):  # noqa: ANN001, ANN201 - pytest fixture
    """Fresh QSettings and autosave folder for one test."""
    from PySide6.QtCore import QSettings, QStandardPaths

    qapp.setOrganizationName("Backprop Studio")
    qapp.setApplicationName("Backprop Studio")
    QSettings().clear()
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    autosave = os.path.join(folder, "autosave")
    if os.path.isdir(autosave):
        for name in os.listdir(autosave):
            os.remove(os.path.join(autosave, name))
    yield
    QSettings().clear()


@pytest.fixture
def artifacts_dir() -> str:
    """tests/artifacts/ (git-ignored): screenshots for a reviewer to look at."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(autouse=True)
def no_dialogs(monkeypatch):  # noqa: ANN001, ANN201 - pytest fixture
    """Replace every dialog the main window can open, so no test can hang on one
    (autouse: a failing test's teardown would otherwise wait on a modal box).

    Returns the record of what was asked; tests change the answers in it.
    """
    from gui.main_window import MainWindow

    record: dict = {"errors": [], "asked": [], "discard": "discard", "recover": False,
                    "replace_read_only": False}

    def confirm_discard(self) -> str:  # noqa: ANN001
        record["asked"].append("discard")
        return record["discard"]

    def ask_recover(self, text: str) -> bool:  # noqa: ANN001
        record["asked"].append("recover")
        return record["recover"]

    def ask_replace_read_only(self, name: str) -> bool:  # noqa: ANN001
        record["asked"].append("replace_read_only")
        return record["replace_read_only"]

    monkeypatch.setattr(MainWindow, "confirm_discard", confirm_discard)
    monkeypatch.setattr(MainWindow, "ask_replace_read_only", ask_replace_read_only)
    monkeypatch.setattr(MainWindow, "ask_recover", ask_recover)
    monkeypatch.setattr(MainWindow, "show_error",
                        lambda self, text: record["errors"].append(text))
    monkeypatch.setattr(MainWindow, "ask_open_path", lambda self: None)
    monkeypatch.setattr(MainWindow, "ask_save_path", lambda self, suggested: None)
    return record
