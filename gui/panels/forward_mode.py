"""The forward-mode panel: set a tangent u on the inputs and step through J·u edge by edge.

The engine (:mod:`engine.forward_mode`) records the pass; the write-up comes from
:mod:`gui.model.forward_view`. Stepping highlights the edge on the canvas (through
``highlight``) and shows its local Jacobian, ``J·u`` and every node's tangent; the
comparison line says how many passes of each mode the full Jacobian costs. While
the panel is hidden, new results only mark it out of date: it rebuilds when shown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engine.errors import GraphError
from engine.forward_mode import ForwardTrace, jvp, one_hot, ones, pass_counts, tangent_inputs

from ..document import GraphDocument
from ..model import forward_view
from ..model.quiz import parse_answer
from ..theme import THEME, style
from .follow import WhenVisible

EdgeKey = tuple[str, str, int]


#: Why a captured trace has no forward mode here.
CAPTURED_NO_JVP = (
    "forward mode needs the engine's own ops: a captured trace holds PyTorch's backward "
    "steps only"
)


class ForwardModePanel(QWidget):
    """Tangent editor, step controls, the step's write-up, tangents and the pass counts."""

    def __init__(
        self,
        doc: GraphDocument,
        highlight: Callable[[EdgeKey | None], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ForwardModePanel")
        self.doc = doc
        self.highlight = highlight
        self.trace: ForwardTrace | None = None
        self.k = 0
        self._highlighted = False  # an edge of ours is selected on the canvas
        self.editors: dict[str, QLineEdit] = {}

        self.form = QFormLayout()
        self.onehot_index = QSpinBox()
        self.onehot_index.setPrefix("k = ")
        onehot = QPushButton("one-hot eₖ")
        onehot.clicked.connect(lambda: self.set_one_hot(self.onehot_index.value()))
        all_ones = QPushButton("ones")
        all_ones.clicked.connect(self.set_ones)
        run = QPushButton("Run forward mode")
        run.clicked.connect(self.run)
        shortcuts = QHBoxLayout()
        for w in (self.onehot_index, onehot, all_ones, run):
            shortcuts.addWidget(w)
        shortcuts.addStretch(1)

        self.back = QPushButton("◀")
        self.back.clicked.connect(lambda: self.seek(self.k - 1))
        self.next = QPushButton("▶")
        self.next.clicked.connect(lambda: self.seek(self.k + 1))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.valueChanged.connect(self.seek)
        self.position = QLabel()
        steps = QHBoxLayout()
        for w in (self.back, self.next, self.slider, self.position):
            steps.addWidget(w)

        self.text = QTextBrowser()
        self.text.setObjectName("ForwardModeText")
        self.comparison = QLabel()
        self.comparison.setObjectName("ForwardModeComparison")
        self.comparison.setWordWrap(True)
        self.message = QLabel()
        style(self.message, lambda: f"color: {THEME.error_text.name()};")

        left = QVBoxLayout()
        left.addWidget(QLabel("Tangent u on each input (torch.func.jvp's tangents):"))
        left.addLayout(self.form)
        left.addLayout(shortcuts)
        left.addWidget(self.message)
        left.addWidget(self.comparison)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addLayout(steps)
        right.addWidget(self.text, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(left, 2)
        layout.addLayout(right, 3)
        # A tab behind another one catches up when shown, not on every edit.
        self.follow = WhenVisible(self, self.rebuild)
        doc.resultsChanged.connect(self._results_changed)

    def _results_changed(self) -> None:
        if self._highlighted:  # the edge shown belongs to the old pass
            self._show_edge(None)
        self.follow.request()

    # ------------------------------------------------------------------ tangents

    def rebuild(self) -> None:
        """New results: one editor per input (kept values where the shape still fits)."""
        fwd = self.doc.results.forward
        old = {name: e.text() for name, e in self.editors.items()}
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        inputs = tangent_inputs(self.doc.graph, fwd)
        start = one_hot(self.doc.graph, fwd, 0) if inputs else {}
        for name in inputs:
            editor = QLineEdit(old.get(name) or forward_view.tangent_text(start[name]))
            editor.setObjectName(f"tangent_{name}")
            editor.returnPressed.connect(self.run)
            self.editors[name] = editor
            self.form.addRow(name, editor)
        total = sum(int(fwd.values[x].size) for x in inputs)
        self.onehot_index.setRange(0, max(0, total - 1))
        self.run()

    def set_one_hot(self, k: int) -> None:
        self._fill(one_hot(self.doc.graph, self.doc.results.forward, k))

    def set_ones(self) -> None:
        self._fill(ones(self.doc.graph, self.doc.results.forward))

    def _fill(self, tangents: dict) -> None:
        for name, u in tangents.items():
            self.editors[name].setText(forward_view.tangent_text(u))
        self.run()

    def tangents_typed(self) -> dict:
        out = {}
        for name, editor in self.editors.items():
            try:
                out[name] = parse_answer(editor.text())
            except ValueError as exc:
                raise GraphError(f"tangent: {exc}", name) from None
        return out

    # ------------------------------------------------------------------ running

    def run(self) -> None:
        """Run forward mode with the typed tangents; a bad one is a one-line message."""
        doc = self.doc
        fwd = doc.results.forward
        self.message.clear()
        try:
            if doc.read_only:
                raise GraphError(CAPTURED_NO_JVP)
            self.trace = jvp(doc.graph, fwd, self.tangents_typed())
        except GraphError as exc:
            self.trace = None
            self.message.setText(str(exc))
        self.comparison.clear()
        if doc.output is not None and doc.output in fwd.values and not doc.read_only:
            self.comparison.setText(
                forward_view.comparison_text(pass_counts(doc.graph, fwd, doc.output))
            )
        n = len(self.trace.steps) if self.trace is not None else 0
        self.slider.blockSignals(True)
        self.slider.setRange(0, n)
        self.slider.blockSignals(False)
        self.seek(0, force=True)

    def seek(self, k: int, force: bool = False) -> None:
        """Show the pass after ``k`` edges (0: only the inputs' tangents)."""
        n = len(self.trace.steps) if self.trace is not None else 0
        k = max(0, min(int(k), n))
        if k == self.k and not force:
            return
        self.k = k
        self.slider.blockSignals(True)
        self.slider.setValue(k)
        self.slider.blockSignals(False)
        self.back.setEnabled(k > 0)
        self.next.setEnabled(k < n)
        self.position.setText(f"edge {k} of {n}")
        if self.trace is None:
            self.text.clear()
            self._show_edge(None)
            return
        order = self.doc.results.forward.order
        self.text.setHtml(forward_view.forward_step_html(self.trace, k, order, 12.0 * THEME.scale))
        s = self.trace.steps[k - 1] if k else None
        self._show_edge(None if s is None else (s.operand, s.consumer, s.operand_index))

    def _show_edge(self, key: EdgeKey | None) -> None:
        """Highlight the step's edge; clear only a highlight of our own (not the user's)."""
        if key is not None or self._highlighted:
            self.highlight(key)
        self._highlighted = key is not None

    def apply_theme(self) -> None:
        self.comparison.setFont(THEME.font(10, bold=True))
        if not self.follow.dirty:  # else it is rebuilt, at the new size, when shown
            self.seek(self.k, force=True)
