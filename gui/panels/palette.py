"""The op palette: every op of the table, grouped as the course introduces them.

Read straight from ``engine.ops`` (CATEGORIES / ops_in), so a new op appears here
without touching this file. Ops are dragged onto the canvas (mime
``application/x-backprop-op``) or double-clicked to land at the view centre.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, Qt, Signal
from PySide6.QtGui import QDrag
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.ops import OPS, ops_in
from engine.ops.record import CATEGORIES

from ..layouts import fill
from ..model.formatting import count
from ..model.names import MIME_OP
from ..qt_override import reported, reported_or
from ..tensor_editor import claims_navigation_key

_OP_ROLE = Qt.ItemDataRole.UserRole


def op_mime(op: str) -> QMimeData:
    """What a palette drag carries: the op name, as the canvas's drop expects it."""
    mime = QMimeData()
    mime.setData(MIME_OP, op.encode("utf-8"))
    mime.setText(op)
    return mime


def op_formula(op: str) -> str:
    """How the op reads in PyTorch, from the op table's own title (``a ** b``, ``sum(a)``)."""
    spec = OPS[op]
    if spec.is_leaf:
        return spec.title([], {})
    if spec.arity is None:
        return f"{op}([a, …])"
    try:
        text = spec.title(["a", "b", "c"][: spec.arity], spec.defaults)
    except Exception:  # a title that needs more than defaults: the name will do
        return op
    return text if len(text) <= 12 else text[: text.find("(") + 1] + "…)"


def op_tooltip(op: str) -> str:
    """The one-line description a student sees when hovering an op."""
    spec = OPS[op]
    if spec.is_leaf:
        return spec.doc
    arity = "n operands" if spec.arity is None else count(spec.arity, "operand")
    return f"{spec.doc} ({arity})"


class OpTree(QTreeWidget):
    """The tree itself; starts a QDrag carrying the op name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setColumnCount(2)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setRootIsDecorated(True)
        self.setIndentation(14)
        # Every row is one line of the same font size (the bold category rows too):
        # the view measures one row, not each of them at every layout (start-up).
        self.setUniformRowHeights(True)

    @reported_or(bool)
    def event(self, event: QEvent) -> bool:
        if claims_navigation_key(event):  # arrows browse the tree, not the player
            return True
        return super().event(event)

    @reported
    def startDrag(self, actions: Qt.DropAction) -> None:  # noqa: N802 - Qt API
        item = self.currentItem()
        op = item.data(0, _OP_ROLE) if item else None
        if not op:
            return
        drag = QDrag(self)
        drag.setMimeData(op_mime(op))
        drag.exec(Qt.DropAction.CopyAction)


class Palette(QWidget):
    """A filter box over the grouped op tree; emits ``opActivated(op)`` on double-click
    or Enter, which the window turns into a node at the canvas centre."""

    opActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.filter = QLineEdit(placeholderText="Filter ops…", clearButtonEnabled=True)
        self.tree = OpTree()
        fill(QVBoxLayout(self), self.filter, self.tree, margins=(4, 4, 4, 4)).setSpacing(4)
        self._items: dict[str, QTreeWidgetItem] = {}
        flag = Qt.ItemFlag
        for category in CATEGORIES:
            group = QTreeWidgetItem(self.tree, [category])
            group.setFlags(flag.ItemIsEnabled)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            group.setFirstColumnSpanned(True)
            for op in ops_in(category):
                item = QTreeWidgetItem(group, [op, op_formula(op)])
                for column in (0, 1):
                    item.setToolTip(column, op_tooltip(op))
                item.setData(0, _OP_ROLE, op)
                item.setFlags(flag.ItemIsEnabled | flag.ItemIsSelectable | flag.ItemIsDragEnabled)
                self._items[op] = item
        self.tree.expandAll()
        self._tint_formulas()
        self.tree.resizeColumnToContents(0)
        self.tree.itemActivated.connect(self._activated)
        self.filter.textChanged.connect(self._apply_filter)
        self.filter.returnPressed.connect(self._activate_first)

    def _tint_formulas(self) -> None:
        """The formulas in the palette's muted ink (again when View > Theme changes it)."""
        ink = self.palette().placeholderText()
        for item in self._items.values():
            item.setForeground(1, ink)

    @reported
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.PaletteChange:
            self._tint_formulas()
        super().changeEvent(event)

    def item(self, op: str) -> QTreeWidgetItem:
        """The tree item of one op (tests double-click it the way a user would)."""
        return self._items[op]

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        op = item.data(0, _OP_ROLE)
        if op:
            self.opActivated.emit(op)

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            any_shown = False
            for j in range(group.childCount()):  # type: ignore[union-attr]
                child = group.child(j)  # type: ignore[union-attr]
                assert child is not None  # j < childCount()
                shown = not needle or needle in child.text(0).lower() or needle in (
                    child.toolTip(0).lower()
                )
                child.setHidden(not shown)
                any_shown |= shown
            group.setHidden(not any_shown)  # type: ignore[union-attr]

    def _activate_first(self) -> None:
        for op, item in self._items.items():
            if not item.isHidden() and not item.parent().isHidden():  # type: ignore[union-attr]
                self.opActivated.emit(op)
                return
