"""The QApplication, created once and named so QSettings and AppDataLocation are ours.

A module of its own so that the window, the exporter and the launcher all reach
it without importing each other (no import circle). Importing it also makes
PySide6's import hook cheap (see :func:`answer_feature_checks_cheaply`): it is
imported before the app's modules.
"""

from __future__ import annotations

import sys
from types import ModuleType

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from engine import APP_NAME

from .desktop import APP_ID, ICON_FILE


def answer_feature_checks_cheaply() -> None:
    """PySide6's import hook asks, of every module imported after PySide6, whether its
    source mentions ``PySide6`` (to know which modules ``from __feature__ import`` may
    switch), and reads it with ``inspect.getsource``, which parses it into ``linecache``
    and keeps it: a third of start-up (about 200 modules) and ~10 MB of source lines
    in an idle app. Give the same answer from the file's bytes, read and let go; a
    module without a ``.py`` file goes to PySide6's own check (which answers False).
    A PySide6 without that hook is left alone.
    """
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if check is None or getattr(check, "reads_bytes", False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return bool(check(module))
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:
            return False  # as PySide6's check answers a source it cannot read

    uses_pyside.reads_bytes = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside  # type: ignore[union-attr]


answer_feature_checks_cheaply()


def ensure_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (created once), named so QSettings and AppDataLocation are ours.

    Named and given its icon once: setting the icon again sends every widget of every
    window a ``WindowIconChange``, which drops each widget's kept painting
    (``gui.paint_cache``), and this is called wherever the app may be needed (each
    exported document, each helper that paints)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else APP_NAME, *(argv or [])])
    assert isinstance(app, QApplication)  # a widgets app: this module makes the only one
    if app.applicationName() == APP_NAME and not app.windowIcon().isNull():
        return app
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName(APP_ID)  # Wayland: the window belongs to the installed entry
    app.setWindowIcon(QIcon(str(ICON_FILE)))  # every window's, and the task bar's
    return app
