"""Start the desktop app: ``python main.py [FILE ...]``, each file in a window of its own.

Kept small and import-light so the first paint comes quickly: heavy panels
(pyqtgraph) are imported only when their tab is first opened. Throughout ``gui/``,
a module needed only on a cold path (a trace file, a later launch, a panel not yet
shown, an export) is imported inside the function that needs it, not at the top.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer

from engine import APP_NAME
from engine.collector import collector_paused

from .application import ensure_app

if TYPE_CHECKING:
    import argparse

    from .main_window import MainWindow


def create_window(path: str | Path | None = None) -> MainWindow:
    """A main window holding ``path``, or seed example 2 when there is none.

    A broken ``path`` shows its one-line error and the window opens with the example,
    so the app is never left without a window.
    """
    # Building a window allocates much and frees almost nothing: no collector passes.
    with collector_paused():
        return _build_window(path)


def _build_window(path: str | Path | None) -> MainWindow:
    ensure_app()
    # Lazy: a missing display never loads the editor.
    from .main_window import MainWindow

    window = MainWindow()
    window.restore_layout()
    if gc.get_freeze_count() == 0:
        # The first window: the editor's modules and the window's widgets (~50k objects)
        # live as long as the app. Frozen, the collector never scans them again, instead
        # of all of them at its first pass (~5 % of start-up) and at every full pass.
        # The document comes after: a file closed later is collected as usual.
        gc.freeze()
    if path is not None and window.files.load_path(path):
        return window
    if path is None and window.resume_session():  # a later launch: where the user left
        return window
    window.open_default_example()  # at step 0
    if path is None:
        QTimer.singleShot(0, window, window.tour.start_if_first)  # once shown; first launch only
    return window


def parse_args(args: list[str]) -> argparse.Namespace:
    import argparse

    parser = argparse.ArgumentParser(
        prog="main.py", description=f"{APP_NAME}: reverse-mode autodiff, made visible."
    )
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="a .bpgraph, or a captured .bptrace (read-only)"
    )
    return parser.parse_args(args)


NO_DISPLAY = (
    "error: no display to open the window on; headless, use `main.py run FILE` or "
    "`main.py export FILE --step K --out frame.png`, or set QT_QPA_PLATFORM=offscreen"
)


def has_display(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt can open a window: always on Windows and macOS; on Linux and other
    X11/Wayland systems only with DISPLAY or WAYLAND_DISPLAY, or a chosen Qt platform
    (QT_QPA_PLATFORM, e.g. offscreen). Without this check Qt aborts with a core dump."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith(("win", "darwin")) or env.get("QT_QPA_PLATFORM"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


class Windows:
    """The process's top-level windows: each file opened (at launch, from a later launch,
    from the Finder) gets a new one; the others are never touched."""

    def __init__(self) -> None:
        self.open: list[MainWindow] = []

    def open_files(self, paths: list[str]) -> list[str]:
        """A window per path (none: one with the example); the one-line errors of the
        traces that could not be read (a graph's error shows in its window)."""
        errors = []
        from .files import is_trace_path

        for path in paths or [None]:  # type: ignore[list-item]  # None: the example
            if path is not None and is_trace_path(path):
                # Read here, so a broken trace is reported to the launch that sent it
                # (a graph's error shows in its window, which opens with the example).
                from engine import tracefile
                from engine.fileformat import FileFormatError

                try:
                    trace = tracefile.load(path)
                except FileFormatError as exc:
                    errors.append(f"error: {path}: {exc}")
                    continue
                window = create_window()
                window.files.open_loaded(trace, path)
            else:
                window = create_window(path)
            self._keep(window)
        return errors

    def _keep(self, window: MainWindow) -> None:
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.open.append(window)
        window.destroyed.connect(lambda _o=None, w=window: self.open.remove(w))
        window.show()
        window.raise_()
        window.activateWindow()


def main(args: list[str]) -> int:
    """Run the app until its last window closes; the exit status (2: no display, or
    nothing could be opened). While it runs, later launches open their files here."""
    options = parse_args(args)
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    app = ensure_app()
    from .single_instance import FileOpenFilter, InstanceServer, hand_over  # QtNetwork

    errors = hand_over(options.files)
    if errors is None:  # no app running: this one is it
        windows = Windows()
        server = InstanceServer(windows.open_files)
        server.listen()
        file_open = FileOpenFilter(windows.open_files)
        app.installEventFilter(file_open)
        errors = windows.open_files(options.files)
        if windows.open:
            # After the first paint: offer any autosave a crashed session left behind.
            QTimer.singleShot(0, windows.open[0], windows.open[0].files.offer_recovery)
            status = int(app.exec())
        else:
            status = 2
        app.removeEventFilter(file_open)
        server.close()
    else:
        status = 0
    for line in errors:
        print(line, file=sys.stderr)
    return 2 if errors else status
