"""The forward-mode panel: set the tangent u on the inputs that forward mode pushes through.

The player plays forward mode (the player bar's direction switch, reverse / forward):
the canvas shows each edge's ``J·t`` and the chain-rule panel writes the step. This
panel only edits the tangents, hands them to the player (``Run forward mode`` also
switches the direction) and says how many passes of each mode the full Jacobian
costs. While the panel is hidden, new results only mark it out of date: it rebuilds
when shown.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.errors import GraphError
from engine.forward_mode import one_hot, ones, pass_counts, tangent_inputs

from ..layouts import fill
from ..model import forward_view
from ..model.forward_view import CAPTURED_NO_JVP
from ..model.quiz import parse_answer
from ..model.timeline import Direction
from ..player import Player
from ..theme import THEME, error_sheet, style
from .follow import WhenVisible


class ForwardModePanel(QWidget):
    """Tangent editor, the one-hot / ones shortcuts, Run, and the pass counts."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ForwardModePanel")
        self.player = player
        self.doc = player.doc
        self.editors: dict[str, QLineEdit] = {}

        self.form = QFormLayout()
        self.onehot_index = QSpinBox(prefix="k = ")
        onehot = QPushButton("one-hot eₖ")
        onehot.clicked.connect(lambda: self.set_one_hot(self.onehot_index.value()))
        all_ones = QPushButton("ones")
        all_ones.clicked.connect(self.set_ones)
        run = QPushButton("Run forward mode")
        run.setToolTip("Play these tangents in the player (direction: forward)")
        run.clicked.connect(self.run)
        shortcuts = fill(QHBoxLayout(), self.onehot_index, onehot, all_ones, run, 1)

        self.comparison = QLabel(wordWrap=True)
        self.comparison.setObjectName("ForwardModeComparison")
        self.message = QLabel()
        style(self.message, error_sheet)

        fill(QVBoxLayout(self), QLabel("Tangent u on each input (torch.func.jvp's tangents):"),
             self.form, shortcuts, self.message, self.comparison, 1, margins=(8, 6, 8, 6))
        # A tab behind another one catches up when shown, not on every edit.
        self.follow = WhenVisible(self, self.rebuild)
        self.doc.resultsChanged.connect(self.follow.request)

    def rebuild(self) -> None:
        """New results: one editor per input (kept values where the shape still fits)."""
        doc = self.doc
        fwd = doc.results.forward
        old = {name: e.text() for name, e in self.editors.items()}
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        inputs = [] if doc.read_only else tangent_inputs(doc.graph, fwd)
        start = one_hot(doc.graph, fwd, 0) if inputs else {}
        for name in inputs:
            editor = QLineEdit(old.get(name) or forward_view.tangent_text(start[name]))
            editor.setObjectName(f"tangent_{name}")
            editor.returnPressed.connect(self.run)
            self.editors[name] = editor
            self.form.addRow(name, editor)
        total = sum(int(fwd.values[x].size) for x in inputs)
        self.onehot_index.setRange(0, max(0, total - 1))
        self.comparison.clear()
        if doc.output is not None and doc.output in fwd.values and not doc.read_only:
            self.comparison.setText(
                forward_view.comparison_text(pass_counts(doc.graph, fwd, doc.output))
            )
        self.apply(switch=False)

    def set_one_hot(self, k: int) -> None:
        self._fill(one_hot(self.doc.graph, self.doc.results.forward, k))

    def set_ones(self) -> None:
        self._fill(ones(self.doc.graph, self.doc.results.forward))

    def _fill(self, tangents: dict) -> None:
        for name, u in tangents.items():
            self.editors[name].setText(forward_view.tangent_text(u))
        self.run()

    def run(self) -> None:
        """Play the typed tangents: the player switches to forward mode, at its start."""
        self.apply(switch=True)

    def apply(self, switch: bool) -> None:
        """Hand the typed tangents to the player (``switch``: and play forward mode); a
        bad one is a one-line message."""
        self.message.clear()
        try:
            if self.doc.read_only:
                raise GraphError(CAPTURED_NO_JVP)
            typed = {}
            for name, editor in self.editors.items():
                try:
                    typed[name] = parse_answer(editor.text())
                except ValueError as exc:
                    raise GraphError(f"tangent: {exc}", name) from None
            self.player.set_tangents(typed)
            if switch:
                self.player.set_direction(Direction.FORWARD)
                self.player.to_start()
        except GraphError as exc:
            self.message.setText(str(exc))

    def apply_theme(self) -> None:
        self.comparison.setFont(THEME.font(10, bold=True))
