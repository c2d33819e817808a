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

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.fileformat import GraphFile  # noqa: E402
from gui.canvas import CanvasView  # noqa: E402
from gui.canvas.node_item import FAR_LOD  # noqa: E402
from gui.document import GraphDocument  # noqa: E402
from support import seed2_graph  # noqa: E402

ARTIFACTS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "artifacts")


@pytest.fixture
def settings_sandbox(qapp):  # noqa: ANN001, ANN201 - pytest fixture
    """Fresh QSettings and autosave folder for one test."""
    from PySide6.QtCore import QSettings, QStandardPaths

    qapp.setOrganizationName("Backprop Studio")
    qapp.setApplicationName("Backprop Studio")
    QSettings().clear()
    # no first-run tour over every window a test opens (test_guided_tour.py clears it)
    QSettings().setValue("tour/seen", True)
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
def widgets_freed_after_each_test():  # noqa: ANN201 - pytest fixture
    """Free the widgets a test closed when it ends (autouse: after pytest-qt's own
    close of the test's widgets), as the app's event loop frees a closed window.

    ``deleteLater`` outside an event loop waits for the next one to run, which in a test
    run is some later test's ``qtbot.wait``: the windows of earlier tests were then
    deleted in the middle of another test's events, at a moment that depended on the
    tests before it (a rare segfault late in full runs, never in one file)."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(autouse=True)
def no_dialogs(monkeypatch):  # noqa: ANN001, ANN201 - pytest fixture
    """Replace every dialog the main window can open, so no test can hang on one
    (autouse: a failing test's teardown would otherwise wait on a modal box).

    Returns the record of what was asked; tests change the answers in it.
    """
    from gui.main_window import MainWindow

    record: dict = {
        "errors": [],
        "asked": [],
        "discard": "discard",
        "recover": False,
        "replace_read_only": False,
    }

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
    monkeypatch.setattr(MainWindow, "show_error", lambda self, text: record["errors"].append(text))
    monkeypatch.setattr(MainWindow, "ask_open_path", lambda self: None)
    monkeypatch.setattr(MainWindow, "ask_save_path", lambda self, suggested: None)
    return record


@pytest.fixture
def make_window(qtbot, settings_sandbox, no_dialogs):  # noqa: ANN001, ANN201 - pytest fixture
    """Open real main windows (``path`` or seed example 2) at ``size``; all closed afterwards.

    Each is shown, exposed and settled; at teardown presentation mode is left, the undo
    stack cleared (nothing left to confirm) and the theme's scale reset.
    """
    from PySide6.QtWidgets import QApplication

    from gui.app import create_window
    from gui.theme import THEME

    windows = []

    def make(path=None, size=(1600, 1000)):  # noqa: ANN001, ANN202
        win = create_window(path)
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        qtbot.wait(30)
        QApplication.processEvents()
        windows.append(win)
        return win

    yield make
    for win in windows:
        if win.presenting:
            win.leave_presentation()
        win.doc.undo_stack.clear()
        win.close()
    THEME.scale, THEME.high_contrast = 1.0, False


@pytest.fixture
def shown_canvas(qtbot):  # noqa: ANN001, ANN201 - pytest fixture
    """Show a bare canvas for a document: ``shown_canvas(doc, (w, h))``, animations off
    so that camera moves land at once."""

    def show(doc: GraphDocument, size: tuple[int, int] = (1100, 700)) -> CanvasView:
        view = CanvasView(doc)
        view.animations_enabled = False
        qtbot.addWidget(view)
        view.resize(*size)
        view.show()
        qtbot.waitExposed(view)
        return view

    return show


@pytest.fixture
def far_view(shown_canvas) -> CanvasView:  # noqa: ANN001
    """Seed example 2 in a bare canvas seen from far away: one item paints every box."""
    doc = GraphDocument()
    doc.load(GraphFile(graph=seed2_graph(), output="y", gradient=np.ones(3)), None)
    view = shown_canvas(doc, (500, 300))
    centre = view.canvas.nodes_rect().center()
    view.look_at((centre.x(), centre.y()), FAR_LOD * 0.8)
    return view
