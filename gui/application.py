"""The QApplication, created once and named so QSettings and AppDataLocation are ours.

A module of its own so that the window, the exporter and the launcher all reach
it without importing each other (no import circle).
"""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from .model.names import APP_NAME


def ensure_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (created once), named so QSettings and AppDataLocation are ours."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else APP_NAME, *(argv or [])])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    return app  # type: ignore[return-value]
