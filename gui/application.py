"""The QApplication, created once and named so QSettings and AppDataLocation are ours.

A module of its own so that the window, the exporter and the launcher all reach
it without importing each other (no import circle). Importing it also stops
PySide6 from keeping the source of every module imported after it in memory
(see :func:`keep_no_module_sources`): it is imported before the app's modules.
"""

from __future__ import annotations

import linecache
import sys
from types import ModuleType

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from engine import APP_NAME

from .desktop import APP_ID, ICON_FILE


def keep_no_module_sources() -> None:
    """PySide6's import hook reads the source of every module imported after PySide6
    (``inspect.getsource``, looking for ``from __feature__ import``), and ``linecache``
    keeps all of it: ~10 MB of source lines in an idle app, a tenth of its memory.
    Wrap the hook so that it forgets the sources it read once it has answered
    (a traceback reads a source again when it needs one). A PySide6 without that
    hook is left alone.
    """
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if check is None or getattr(check, "keeps_no_source", False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        before = set(linecache.cache)
        try:
            return check(module)
        finally:
            for name in linecache.cache.keys() - before:
                del linecache.cache[name]

    uses_pyside.keeps_no_source = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside  # type: ignore[union-attr]


keep_no_module_sources()


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
