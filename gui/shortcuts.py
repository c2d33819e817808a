"""Help > Keyboard shortcuts: a sheet generated from the window's real QActions.

Generated rather than written by hand so it can never drift from the menus: if an
action gets a shortcut, it appears here. Canvas gestures that are not actions
(Tab search, dragging ports) are listed after them.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMenuBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .layouts import fill

#: Gestures handled inside widgets rather than by actions.
GESTURES: list[tuple[str, str, str]] = [
    ("Canvas", "Quick search: add a node by typing its op", "Tab"),
    ("Canvas", "Connect: drag from an output port to an operand port", "Drag"),
    ("Canvas", "Pan / zoom", "Middle-drag / Wheel"),
    ("Inspector", "Scrub a scalar value (one undo step per drag)", "Drag ⇔ / Wheel"),
    ("Presentation", "Step the backward pass", "←/→  PgUp/PgDn"),
    ("Presentation", "Leave presentation mode", "Esc / F5"),
]


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")


def _shortcut_text(action: QAction) -> str:
    keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
    return ",  ".join(k for k in keys if k)


def collect_actions(menubar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu path, action, shortcut) for every action in the menus, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            sub = action.menu()
            if isinstance(sub, QMenu):
                if sub.objectName() != "recentMenu":  # file names are not commands
                    sub.aboutToShow.emit()  # a menu filled as it opens (Open Example)
                    walk(sub, f"{path} › {_clean(sub.title())}")
                continue
            rows.append((path, _clean(action.text()), _shortcut_text(action)))

    for action in menubar.actions():
        menu = action.menu()
        if isinstance(menu, QMenu):
            walk(menu, _clean(menu.title()))
    return rows


class ShortcutsDialog(QDialog):
    """A read-only table: actions with shortcuts first, then the rest, then gestures."""

    def __init__(self, menubar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = collect_actions(menubar)
        rows.sort(key=lambda r: r[2] == "")  # stable: menu order within each group
        rows += GESTURES
        self.rows = rows
        table = QTableWidget(len(rows), 3)
        table.setHorizontalHeaderLabels(["Where", "Action", "Shortcut"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        for r, (where, what, keys) in enumerate(rows):
            for c, text in enumerate((where, what, keys)):
                item = QTableWidgetItem(text)
                if c == 2:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                table.setItem(r, c, item)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        fill(QVBoxLayout(self), table, buttons)
        self.resize(640, 560)
