"""The one message box for text a user or a file controls: shown as plain text.

File names and node ids are user text. ``QMessageBox``'s static helpers
(``question``, ``warning``) guess the text format, so a file named
``<img src=x>.png`` would render as markup; every box that shows such text is
built here instead.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def plain_box(parent: QWidget, icon: QMessageBox.Icon, title: str, text: str,
              buttons: QMessageBox.StandardButton, default: QMessageBox.StandardButton,
              info: str = "") -> QMessageBox.StandardButton:
    """Ask with ``text`` (and ``info`` under it) as plain text; the button pressed."""
    box = QMessageBox(icon, title, text, buttons, parent, textFormat=Qt.TextFormat.PlainText)
    box.setInformativeText(info)
    box.setDefaultButton(default)
    return QMessageBox.StandardButton(box.exec())
