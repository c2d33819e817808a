"""Start the desktop app: ``python main.py [FILE]``.

Kept small and import-light so the first paint comes quickly: heavy panels
(pyqtgraph) are imported only when their tab is first opened.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    from .main_window import MainWindow

APP_NAME = "Backprop Studio"


class _Probe(QObject):
    ping = Signal()


def _leaks_true(call: Any) -> int:
    """How many references to ``True`` eight calls of ``call`` lose."""
    before = sys.getrefcount(True)
    for _ in range(8):
        call()
    return max(0, before - sys.getrefcount(True))


def patch_signal_emit_refcount() -> list[str]:
    """Work around PySide6 6.12's ``SignalInstance.emit`` and ``.disconnect`` returning
    ``True`` without a new reference: each call from Python drops ``True``'s refcount
    by one, and after a few thousand edits the interpreter aborts (``bool_dealloc``).
    Each method is measured first, so a fixed PySide6 is left alone. Returns the
    names of the methods patched (now or earlier)."""
    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None
    probe = _Probe()
    calls = {
        "emit": probe.ping.emit,
        "disconnect": lambda: (probe.ping.connect(print), probe.ping.disconnect(print)),
    }
    patched = []
    for name, call in calls.items():
        original = getattr(SignalInstance, name)
        if getattr(original, "_bp_patched", False):
            patched.append(name)
            continue
        lost = _leaks_true(call)
        if not lost:
            continue
        for _ in range(lost):
            incref(True)  # repay what the probe took
        setattr(SignalInstance, name, _repaying(original, incref))
        patched.append(name)
    return patched


def _repaying(original: Any, incref: Any) -> Any:
    def method(self: SignalInstance, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        if result is True or result is False:
            incref(result)  # the reference PySide forgot to give us
        return result

    method._bp_patched = True  # type: ignore[attr-defined]
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


def ensure_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (created once), named so QSettings and AppDataLocation are ours."""
    patch_signal_emit_refcount()
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else APP_NAME, *(argv or [])])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    return app  # type: ignore[return-value]


def create_window(path: str | Path | None = None) -> MainWindow:
    """A main window holding ``path``, or seed example 2 when there is none.

    A broken ``path`` shows its one-line error and the window opens with the example,
    so the app is never left without a window.
    """
    ensure_app()
    from .main_window import MainWindow

    window = MainWindow()
    window.restore_layout()
    if path is None or not window.files.load_path(path):
        window.open_default_example()
    return window


def parse_args(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="main.py", description="Backprop Studio: reverse-mode autodiff, made visible."
    )
    parser.add_argument("file", nargs="?", help="a .bpgraph file to open")
    return parser.parse_args(args)


def main(args: list[str]) -> int:
    """Run the app until its window closes; the exit status."""
    options = parse_args(args)
    app = ensure_app()
    window = create_window(options.file)
    window.show()
    # After the first paint: offer any autosave a crashed session left behind.
    QTimer.singleShot(0, window.files.offer_recovery)
    return int(app.exec())
