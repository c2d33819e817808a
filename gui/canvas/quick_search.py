"""Tab on the canvas: type a few letters of an op, press Enter, the node appears
under the cursor. Faster than the palette once you know the names, and it keeps
the hands on the keyboard while building a graph in front of a class."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

from engine.ops import OP_NAMES, OPS

from ..layouts import fill
from ..qt_override import reported_or
from ..theme import THEME, muted_sheet, style


def op_info(name: str) -> tuple[str, str]:
    """(category, one-line doc) of an op or leaf kind, from the op table."""
    op = OPS[name]
    return op.category, op.doc


def matching_ops(text: str) -> list[str]:
    """Op names for a query: names starting with it, then names containing it, then
    ops whose category or doc mentions it (``"reduc"`` finds ``sum`` and ``mean``)."""
    q = text.strip().lower()
    if not q:
        return list(OP_NAMES)
    first, second, third = [], [], []
    for name in OP_NAMES:
        category, doc = op_info(name)
        if name.startswith(q):
            first.append(name)
        elif q in name:
            second.append(name)
        elif q in category.lower() or q in doc.lower():
            third.append(name)
    return first + second + third


class QuickSearch(QFrame):
    """A popup: a line edit over a filtered list of ops; ``opChosen(name)`` on Enter."""

    opChosen = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)  # type: ignore[arg-type]  # a QWidget or None
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("QuickSearch")
        style(self, lambda: (
            f"#QuickSearch {{ background: {THEME.paper.name()};"
            f" border: 1px solid {THEME.node_border.name()}; border-radius: 6px; }}"
        ))
        self.edit = QLineEdit(self, placeholderText="Add node: type an op name…")
        self.edit.setFont(THEME.font(10.5))
        self.list = QListWidget(self)
        self.list.setFont(THEME.font(10.5, mono=True))
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.info = QLabel(self, wordWrap=True)
        self.info.setFont(THEME.font(9.0))
        style(self.info, muted_sheet)
        fill(QVBoxLayout(self), self.edit, self.list, self.info, margins=(6, 6, 6, 6)).setSpacing(4)
        self.resize(int(340 * THEME.scale), int(300 * THEME.scale))
        self.edit.textChanged.connect(self._refilter)
        self.list.currentItemChanged.connect(self._show_info)
        self.list.itemActivated.connect(lambda item: self._choose(item))
        self.list.itemClicked.connect(lambda item: self._choose(item))
        self.edit.installEventFilter(self)
        self._refilter("")

    def popup_at(self, global_pos: QPoint) -> None:
        """Show at ``global_pos`` (the cursor), cleared and ready for typing."""
        self.edit.clear()
        self._refilter("")
        self.move(global_pos)
        self.show()
        self.raise_()
        self.activateWindow()
        self.edit.setFocus()

    def current_op(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    def _refilter(self, text: str) -> None:
        self.list.clear()
        for name in matching_ops(text):
            category, doc = op_info(name)
            item = QListWidgetItem(f"{name:<10} {category}")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setToolTip(doc)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        else:
            self.info.setText("no op matches")

    def _show_info(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            name = item.data(Qt.ItemDataRole.UserRole)
            category, doc = op_info(name)
            self.info.setText(f"<b>{name}</b> ({category}): {doc}")

    def _choose(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        self.hide()
        self.opChosen.emit(item.data(Qt.ItemDataRole.UserRole))

    @reported_or(bool)
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if obj is self.edit and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                row = self.list.currentRow() + (-1 if key in (Qt.Key.Key_Up,
                                                              Qt.Key.Key_PageUp) else 1)
                if 0 <= row < self.list.count():
                    self.list.setCurrentRow(row)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._choose(self.list.currentItem())
                return True
            if key == Qt.Key.Key_Escape:
                self.hide()
                return True
        return super().eventFilter(obj, event)
