"""The gradient-check panel: the engine's gradient beside central finite differences.

The numbers come from :mod:`engine.gradcheck`; this widget only lays them out as a
table, one row per input element, coloured by verdict (agrees, close, mismatch,
not differentiable, not finite), with the step and tolerance stated above it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.gradcheck import GradCheck, Status

from ..layouts import fill
from ..model.formatting import fmt_num
from ..theme import THEME, muted_sheet, style

COLUMNS = ("element", "engine", "finite difference", "relative error", "verdict")


def status_color(status: Status) -> QColor:
    """The row colour for a verdict (in :mod:`gui.theme`)."""
    return {
        Status.OK: THEME.check_ok,
        Status.CLOSE: THEME.check_close,
        Status.MISMATCH: THEME.check_bad,
        Status.KINK: THEME.check_kink,
        Status.UNDEFINED: THEME.check_undefined,
        Status.UNRESOLVED: THEME.check_undefined,  # "cannot tell": neither pass nor fail
        Status.CANCELLED: THEME.check_undefined,
        Status.CURVATURE: THEME.check_kink,
    }[status]


class GradCheckPanel(QWidget):
    """Shows one :class:`~engine.gradcheck.GradCheck` (or a one-line refusal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GradCheckPanel")
        self.result: GradCheck | None = None
        self.heading = QLabel("Right-click a node or use Teach > Check Gradients.",
                              textFormat=Qt.TextFormat.PlainText, wordWrap=True)  # ids: user text
        self.heading.setObjectName("GradCheckSummary")
        self.method = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        style(self.method, muted_sheet)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("GradCheckTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        fill(QVBoxLayout(self), self.heading, self.method, (self.table, 1), margins=(8, 6, 8, 6))
        self.apply_theme()

    def apply_theme(self) -> None:
        self.heading.setFont(THEME.font(11, bold=True))
        self.method.setFont(THEME.font(9))
        self.table.setFont(THEME.font(10, mono=True))

    def show_error(self, text: str) -> None:
        self.result = None
        self.heading.setText(text)
        self.method.clear()
        self.table.setRowCount(0)

    def show_result(self, result: GradCheck) -> None:
        self.result = result
        what = "Whole graph" if result.target == "graph" else f"Node {result.target!r}"
        self.heading.setText(f"{what}: {result.description}. {result.summary()}")
        self.method.setText(result.step)
        self.table.setRowCount(len(result.elements))
        for row, e in enumerate(result.elements):
            rel = "—" if e.status is Status.UNDEFINED else f"{e.rel_error:.1e}"
            verdict = e.status.value + (f" ({e.note})" if e.note else "")
            cells = (e.label, fmt_num(e.analytic), f"{e.numeric:.8g}", rel, verdict)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setBackground(status_color(e.status))
                item.setToolTip(verdict)
                self.table.setItem(row, col, item)

    def row_colors(self) -> list[str]:
        """Each row's background colour name (tests and screenshots)."""
        return [
            self.table.item(r, 0).background().color().name() for r in range(self.table.rowCount())  # type: ignore[union-attr]
        ]
