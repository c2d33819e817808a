"""Start the desktop app: ``python main.py [FILE]``.

Kept small and import-light so the first paint comes quickly: heavy panels
(pyqtgraph) are imported only when their tab is first opened.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from engine import APP_NAME

from .application import ensure_app

if TYPE_CHECKING:
    from .main_window import MainWindow

def create_window(path: str | Path | None = None) -> MainWindow:
    """A main window holding ``path``, or seed example 2 when there is none.

    A broken ``path`` shows its one-line error and the window opens with the example,
    so the app is never left without a window.
    """
    ensure_app()
    # Lazy: a missing display never loads the editor.
    from .main_window import MainWindow

    window = MainWindow()
    window.restore_layout()
    if path is None or not window.files.load_path(path):
        window.open_default_example()
    return window


def parse_args(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="main.py", description=f"{APP_NAME}: reverse-mode autodiff, made visible."
    )
    parser.add_argument("file", nargs="?", help="a .bpgraph, or a captured .bptrace (read-only)")
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


def main(args: list[str]) -> int:
    """Run the app until its window closes; the exit status (2: no display)."""
    options = parse_args(args)
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    app = ensure_app()
    window = create_window(options.file)
    window.show()
    # After the first paint: offer any autosave a crashed session left behind.
    QTimer.singleShot(0, window.files.offer_recovery)
    return int(app.exec())
