"""A small editor for scalars, vectors and matrices: what leaves and ``v`` are made of.

Students type tensors far more often than they build graphs, so one widget serves
both the inspector's leaf values and the backward ``v``: a shape row (scalar /
vector / matrix with size spin boxes), a cell table, and for scalars a spin box
that can be scrubbed by dragging the handle beside it. It never touches the
document: it emits ``valueEdited(value, scrubbing)`` and the caller pushes the
command, so every change is an undoable edit.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .layouts import fill
from .model.formatting import fmt_num
from .qt_override import reported, reported_or


class Rank(StrEnum):
    """The editor's kinds of tensor, by number of dimensions (its index)."""

    SCALAR = "scalar"
    VECTOR = "vector"
    MATRIX = "matrix"


#: The kind box's items, in rank order.
KINDS = tuple(k.value for k in Rank)
MAX_SIZE = 64  # a teaching tool: larger tensors belong in a file
_CELL_ROLE = Qt.ItemDataRole.UserRole


def kind_of(value: np.ndarray) -> Rank | None:
    """The editor kind for a value's shape, or None when it is beyond 2-D."""
    return Rank(KINDS[value.ndim]) if value.ndim <= 2 else None


def resized(value: np.ndarray, kind: Rank, rows: int, cols: int) -> np.ndarray:
    """``value`` moved into a new shape, keeping the entries that still fit.

    Turning a scalar into a vector keeps the number in slot 0, a vector becomes the
    first row of a matrix, and so on: a shape change never throws typed numbers away
    where they still have a place.
    """
    flat2d = np.atleast_2d(np.asarray(value, dtype=np.float64))
    if value.ndim > 2:
        flat2d = np.asarray(value).reshape(1, -1)
    shape = {Rank.SCALAR: (1, 1), Rank.VECTOR: (1, cols), Rank.MATRIX: (rows, cols)}[kind]
    out = np.zeros(shape)
    r, c = min(shape[0], flat2d.shape[0]), min(shape[1], flat2d.shape[1])
    out[:r, :c] = flat2d[:r, :c]
    if kind is Rank.SCALAR:
        return np.array(out[0, 0])
    if kind is Rank.VECTOR:
        return out[0].copy()
    return out


#: Keys a focused table or tree uses itself, though the player binds them window-wide.
NAVIGATION_KEYS = frozenset({
    Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home,
    Qt.Key.Key_End, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Space,
})


def claims_navigation_key(event: QEvent) -> bool:
    """Accept a ShortcutOverride for a plain navigation key, so the focused widget gets it."""
    if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
        plain = not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        if plain and Qt.Key(event.key()) in NAVIGATION_KEYS:
            event.accept()
            return True
    return False


class CellTable(QTableWidget):
    """A QTableWidget whose arrow keys move between cells even while the player binds them."""

    @reported_or(bool)
    def event(self, event: QEvent) -> bool:
        if claims_navigation_key(event):
            return True
        return super().event(event)


def _refused() -> object:
    """What :meth:`ScrubSpinBox.validate` answers for a bug in it: the keystroke refused."""
    return QValidator.State.Invalid


class ScrubSpinBox(QDoubleSpinBox):
    """A spin box that shows numbers the way the canvas does (1.1, not 1.100000)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(12)
        self.setRange(-1e12, 1e12)
        self.setSingleStep(0.1)
        self.setKeyboardTracking(False)  # typing commits on Enter, not per keystroke
        self.setAccelerated(True)

    @reported_or(str)
    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt API
        return fmt_num(value)

    @reported_or(float)
    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt API
        try:
            return float(text)
        except ValueError:
            return self.value()

    @reported_or(_refused)
    def validate(self, text: str, pos: int) -> object:  # type: ignore[override]  # noqa: D401
        stripped = text.strip()
        try:
            float(stripped)
            return QValidator.State.Acceptable, text, pos
        except ValueError:
            ok = stripped in ("", "-", "+", ".", "-.", "+.") or stripped.lower().endswith(
                ("e", "e-", "e+")
            )
            state = QValidator.State.Intermediate if ok else QValidator.State.Invalid
            return state, text, pos


class ScrubHandle(QLabel):
    """Drag left/right to change a number continuously (one gesture = one undo step).

    Emits ``delta(steps)`` while dragging (one step per few pixels, Shift for fine
    steps) and ``finished`` on release, so the caller can merge the whole drag into
    one command.
    """

    delta = Signal(float)
    started = Signal()
    finished = Signal()

    PIXELS_PER_STEP = 4.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("⇔", parent)
        self.setCursor(Qt.CursorShape.SizeHorCursor)
        self.setToolTip("Drag left or right to scrub the value (Shift: fine steps)")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumWidth(22)
        self._last_x: float | None = None

    @reported
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() == Qt.MouseButton.LeftButton:
            self._last_x = event.position().x()
            self.started.emit()
        event.accept()

    @reported
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._last_x is None:
            return
        x = event.position().x()
        steps = (x - self._last_x) / self.PIXELS_PER_STEP
        if abs(steps) >= 1:
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                steps /= 10.0
            self._last_x = x
            self.delta.emit(float(int(steps)) if abs(steps) >= 1 else steps)
        event.accept()

    @reported
    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if self._last_x is not None:
            self._last_x = None
            self.finished.emit()
        event.accept()


class TensorEditor(QWidget):
    """Edit a 0-, 1- or 2-D tensor; emits ``valueEdited(np.ndarray, scrubbing: bool)``.

    ``scrubbing`` is True for the continuous edits of a scalar (drag, wheel, arrow
    keys), which the caller merges into one undo step per gesture; ``gestureEnded``
    marks the end of such a gesture.
    """

    valueEdited = Signal(object, bool)
    gestureEnded = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._value = np.array(0.0)

        self.kind = QComboBox()
        self.kind.addItems(KINDS)
        self.kind.setToolTip("The tensor's rank: a number, a list, or a table")
        self.rows = QSpinBox(minimum=1, maximum=MAX_SIZE, prefix="rows ")
        self.cols = QSpinBox(minimum=1, maximum=MAX_SIZE, prefix="cols ")

        self.shape_box = QWidget()
        fill(QHBoxLayout(self.shape_box), self.kind, self.rows, self.cols, 1, margins=(0, 0, 0, 0))

        self.spin = ScrubSpinBox()
        self.spin.setToolTip("Type a number, use the wheel or arrow keys, or drag ⇔")
        self.handle = ScrubHandle()
        self.scalar_box = QWidget()
        fill(QHBoxLayout(self.scalar_box), (self.spin, 1), self.handle, margins=(0, 0, 0, 0))

        self.table = CellTable(1, 1)
        # A table's own triggers (double click, F2, typing) and a click on the selected cell.
        self.table.setEditTriggers(
            self.table.editTriggers() | QAbstractItemView.EditTrigger.SelectedClicked)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setMinimumSectionSize(36)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(24)

        self.note = QLabel()
        self._entry_note = False  # the note says a typed entry was refused
        self.note.setWordWrap(True)
        self.note.hide()

        layout = fill(QVBoxLayout(self), self.shape_box, self.scalar_box, self.table, self.note,
                      margins=(0, 0, 0, 0))
        layout.setSpacing(4)

        self.kind.currentTextChanged.connect(self._shape_edited)
        self.rows.valueChanged.connect(self._shape_edited)
        self.cols.valueChanged.connect(self._shape_edited)
        self.table.itemChanged.connect(self._cell_edited)
        self.spin.valueChanged.connect(self._spin_edited)
        self.spin.editingFinished.connect(self.gestureEnded)
        self.handle.delta.connect(self._scrub)
        self.handle.finished.connect(self.gestureEnded)
        self._show(self._value)

    # ------------------------------------------------------------------ public

    def value(self) -> np.ndarray:
        """The tensor as shown (a copy)."""
        return self._value.copy()

    def set_value(self, value: np.ndarray | float | list) -> None:
        """Show ``value`` without emitting anything (the document changed, not the user).

        An earlier "'abc' is not a number" note goes: it was about the entry replaced."""
        if self._entry_note:
            self._entry_note = False
            self.note.hide()
        value = np.asarray(value, dtype=np.float64)
        if value.shape == self._value.shape and np.array_equal(value, self._value, equal_nan=True):
            return
        self._value = value.copy()
        self._show(self._value)

    def cell(self, row: int, col: int) -> QTableWidgetItem | None:
        """The table cell at (row, col): for tests and keyboard users alike."""
        return self.table.item(row, col)

    # ------------------------------------------------------------------ display

    def _show(self, value: np.ndarray) -> None:
        kind = kind_of(value)
        blockers = [QSignalBlocker(w) for w in (self.kind, self.rows, self.cols, self.table,
                                                self.spin)]
        try:
            self.note.setVisible(kind is None)
            for size in (self.rows, self.cols):
                size.setEnabled(kind is not None)
            if kind is None:
                self.note.setText(
                    f"A {value.ndim}-D tensor of shape {value.shape}: edit it in the file, "
                    "or switch to a vector or matrix here."
                )
                self.kind.setCurrentIndex(-1)
                self.scalar_box.hide()
                self.table.hide()
                return
            self.kind.setCurrentText(kind)
            rows = value.shape[0] if value.ndim == 2 else 1
            cols = value.shape[-1] if value.ndim >= 1 else 1
            self.rows.setValue(rows)
            self.cols.setValue(cols)
            self.rows.setVisible(kind is Rank.MATRIX)
            self.cols.setVisible(kind is not Rank.SCALAR)
            self.cols.setPrefix("cols " if kind is Rank.MATRIX else "length ")
            self.scalar_box.setVisible(kind is Rank.SCALAR)
            self.table.setVisible(kind is not Rank.SCALAR)
            if kind is Rank.SCALAR:
                self.spin.setValue(float(value))
                return
            grid = np.atleast_2d(value)
            self.table.setRowCount(grid.shape[0])
            self.table.setColumnCount(grid.shape[1])
            self.table.setHorizontalHeaderLabels([str(c) for c in range(grid.shape[1])])
            self.table.setVerticalHeaderLabels([str(r) for r in range(grid.shape[0])])
            self.table.verticalHeader().setVisible(value.ndim == 2)
            for r in range(grid.shape[0]):
                for c in range(grid.shape[1]):
                    item = self.table.item(r, c)
                    if item is None:
                        item = QTableWidgetItem()
                        item.setTextAlignment(
                            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                        )
                        self.table.setItem(r, c, item)
                    item.setText(fmt_num(grid[r, c]))
                    item.setData(_CELL_ROLE, float(grid[r, c]))
            self._fit_table_height(grid.shape[0])
        finally:
            del blockers

    def _fit_table_height(self, rows: int) -> None:
        header = self.table.horizontalHeader().height() or 24
        shown = min(rows, 8)
        height = header + shown * self.table.verticalHeader().defaultSectionSize() + 4
        self.table.setFixedHeight(height)

    # ------------------------------------------------------------------ user edits

    def _emit(self, value: np.ndarray, scrubbing: bool = False) -> None:
        self._value = value
        self.valueEdited.emit(value.copy(), scrubbing)

    def _shape_edited(self, *_args: object) -> None:
        text = self.kind.currentText()
        if text not in KINDS:
            return
        new = resized(self._value, Rank(text), self.rows.value(), self.cols.value())
        if new.shape == self._value.shape:
            return
        self._show(new)
        self._emit(new)

    def _cell_edited(self, item: QTableWidgetItem) -> None:
        text = item.text().strip()
        try:
            number = float(text)
        except ValueError:
            # Not a number: put the old entry back rather than guess.
            with QSignalBlocker(self.table):
                item.setText(fmt_num(item.data(_CELL_ROLE) or 0.0))
            self.note.setText(f"{text!r} is not a number; the entry was left unchanged")
            self.note.show()
            self._entry_note = True
            return
        self._entry_note = False
        self.note.hide()
        new = self._value.copy()
        index = (item.row(), item.column()) if new.ndim == 2 else (item.column(),)
        if new[index] == number:
            return
        new[index] = number
        with QSignalBlocker(self.table):
            item.setData(_CELL_ROLE, number)
            item.setText(fmt_num(number))
        self._emit(new)

    def _spin_edited(self, number: float) -> None:
        if self._value.ndim != 0 or float(self._value) == number:
            return
        self._emit(np.array(number), scrubbing=True)

    def _scrub(self, steps: float) -> None:
        self.spin.setValue(self.spin.value() + steps * self.spin.singleStep())
