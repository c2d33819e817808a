"""The Train tab: optimizer and hyper-parameters, Step / Play N / Stop / Reset, the
update rule with the numbers of the last step, the loss curve and the trajectories.

Every change goes through a command (:mod:`gui.train_commands`): a setting is one
undo step, a training step is one, Reset is one. Play is a timer pushing one step
command per tick at the slider's rate; Stop keeps the state reached. The texts come
from :mod:`gui.model.train_view`; node ids in them are user text, so every label
here is plain text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.train import MAX_STEPS, OPTIMIZERS, TrainSpec

from ..commands import push
from ..document import GraphDocument
from ..layouts import fill
from ..model.train_view import rule, step_lines, trajectory_label
from ..player import Player
from ..theme import THEME
from ..train_commands import ResetTraining, SetTrain, TrainStep

#: Steps per second the Play slider offers.
MAX_RATE = 60


class _StepPlot(pg.PlotWidget):
    """A plot over the training steps, on the theme's paper."""

    def __init__(self, name: str, left: str) -> None:
        super().__init__(background=THEME.paper)
        self.setObjectName(name)
        self.setLabel("bottom", "step")
        self.setLabel("left", left)
        self.showGrid(x=True, y=True, alpha=0.2)

    def line(self, k: int, name: str | None = None) -> pg.PlotDataItem:
        """An empty line in the ``k``-th series colour; its data is replaced, never added
        to point by point (one item per line, whatever the number of steps)."""
        series = THEME.series
        pen = QPen(series[k % len(series)], 2)
        pen.setCosmetic(True)  # pixels wide whatever the axes' scale (pyqtgraph's fast path)
        item = self.plot([], [], pen=pen, name=name)
        item.setDownsampling(auto=True, method="peak")
        return item


def _steps_data(item: pg.PlotDataItem, values: Sequence[float]) -> None:
    y = np.asarray(values, dtype=np.float64)
    item.setData(np.arange(1, len(y) + 1, dtype=np.float64), y)


class LossCurve(_StepPlot):
    """The loss per step."""

    def __init__(self) -> None:
        super().__init__("LossCurve", "loss")
        self.getPlotItem().setClipToView(True)
        self.curve = self.line(0)

    def set_losses(self, losses: Sequence[float]) -> None:
        _steps_data(self.curve, losses)


class Trajectories(_StepPlot):
    """One line per parameter (a tensor's norm), over the steps."""

    def __init__(self) -> None:
        super().__init__("Trajectories", "parameter")
        self.legend = self.addLegend(offset=(5, 5))
        self.lines: dict[str, pg.PlotDataItem] = {}

    def set_lines(self, lines: dict[str, tuple[str, Sequence[float]]]) -> None:
        if set(lines) != set(self.lines):
            self.clear()
            self.legend.clear()
            self.lines = {name: self.line(k + 1, label)
                          for k, (name, (label, _)) in enumerate(lines.items())}
        for name, (_, values) in lines.items():
            _steps_data(self.lines[name], values)


class TrainPanel(QWidget):
    """The Train tab of one window."""

    status = Signal(str)

    def __init__(
        self, doc: GraphDocument, player: Player | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("TrainPanel")
        self.doc = doc
        self.player = player
        self._pending = False  # a step waiting for its backward pass to finish playing
        self.play_backward = QCheckBox("play backward")
        self.play_backward.setToolTip("Each step plays its backward pass before the update")
        self.play_backward.setVisible(player is not None)
        if player is not None:
            player.playingChanged.connect(self._backward_played)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)
        self.remaining = 0
        self._syncing = False

        self.optimizer = QComboBox()
        self.optimizer.addItems(OPTIMIZERS)
        self.lr = self._spin(1e-6, 100.0, 6)
        self.momentum = self._spin(0.0, 0.999, 3)
        self.beta1 = self._spin(0.0, 0.999999, 6)
        self.beta2 = self._spin(0.0, 0.999999, 6)
        self.zero_grad = QCheckBox("zero_grad")
        self.zero_grad.setToolTip("optimizer.zero_grad() before each step; off: .grad accumulates")
        self.steps = QSpinBox(minimum=1, maximum=MAX_STEPS)
        self.rate = QSlider(Qt.Orientation.Horizontal)
        self.rate.setRange(1, MAX_RATE)
        self.rate.setValue(10)
        self.rate_label = QLabel()
        self.rate.valueChanged.connect(self._rate_changed)
        self.log = QCheckBox("log scale")
        self.log.toggled.connect(lambda on: self.curve.setLogMode(y=on))  # type: ignore[has-type]

        for w in (self.lr, self.momentum, self.beta1, self.beta2, self.steps, self.optimizer):
            w.setMaximumWidth(100)
        form = QFormLayout()
        form.addRow("Play steps", self.steps)
        form.addRow(self.rate_label, self.rate)
        form.addRow("optimizer", self.optimizer)
        form.addRow("lr", self.lr)
        form.addRow("momentum", self.momentum)
        form.addRow("β1", self.beta1)
        form.addRow("β2", self.beta2)
        form.addRow(self.zero_grad)
        self.buttons = {name: QPushButton(name) for name in ("Step", "Play", "Stop", "Reset")}
        self.buttons["Step"].clicked.connect(self.step)
        self.buttons["Play"].clicked.connect(lambda: self.play())
        self.buttons["Stop"].clicked.connect(self.stop)
        self.buttons["Reset"].clicked.connect(self.reset)
        box = QWidget()
        button_row = fill(QHBoxLayout(), *self.buttons.values())  # first: never scrolled away
        fill(QVBoxLayout(box), button_row, form, self.play_backward, self.log, 1,
             margins=(0, 0, 0, 0))
        box.setMaximumWidth(250)

        self.rule = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True,
                           alignment=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.rule.setObjectName("TrainRule")
        self.rule.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.curve = LossCurve()
        self.paths = Trajectories()

        self.rule.setMinimumWidth(180)
        self.rule.setMaximumWidth(420)
        for plot in (self.curve, self.paths):
            plot.setMinimumWidth(110)
        content = QWidget()
        fill(QHBoxLayout(content), box, (self.rule, 1), (self.curve, 1), (self.paths, 1))
        # Scrolled, not squeezed: the tab's size must not make the panels dock (shared
        # by every tab) bigger than the other tabs need, in presentation mode above all.
        scroll = QScrollArea(widgetResizable=True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        fill(QVBoxLayout(self), scroll, margins=(0, 0, 0, 0))

        for widget in (self.lr, self.momentum, self.beta1, self.beta2, self.steps):
            widget.editingFinished.connect(self._settings_edited)
        self.optimizer.currentTextChanged.connect(self._settings_edited)
        self.zero_grad.toggled.connect(self._settings_edited)
        doc.trainChanged.connect(self.sync)
        self._rate_changed(self.rate.value())
        self.sync()

    # ------------------------------------------------------------------ building

    @staticmethod
    def _spin(lo: float, hi: float, decimals: int) -> QDoubleSpinBox:
        return QDoubleSpinBox(minimum=lo, maximum=hi, decimals=decimals,
                              singleStep=10 ** -min(decimals, 2))

    def _rate_changed(self, rate: int) -> None:
        self.rate_label.setText(f"{rate} steps/s")
        self.timer.setInterval(max(1, round(1000 / rate)))

    # ------------------------------------------------------------------ showing

    def sync(self) -> None:
        """Show the document's train block and run (after any command, undo included)."""
        spec, state = self.doc.train, self.doc.train_state
        self._syncing = True
        try:
            on = spec is not None
            for w in (self.optimizer, self.lr, self.momentum, self.beta1, self.beta2,
                      self.zero_grad, self.steps, *self.buttons.values()):
                w.setEnabled(on)
            if spec is not None:
                self.optimizer.setCurrentText(spec.optimizer)
                self.lr.setValue(spec.lr)
                self.momentum.setValue(spec.momentum)
                self.beta1.setValue(spec.betas[0])
                self.beta2.setValue(spec.betas[1])
                self.zero_grad.setChecked(spec.zero_grad)
                self.steps.setValue(max(1, spec.steps))
                self.momentum.setEnabled(spec.optimizer == "momentum")
                self.beta1.setEnabled(spec.optimizer == "adam")
                self.beta2.setEnabled(spec.optimizer == "adam")
        finally:
            self._syncing = False
        self.buttons["Stop"].setEnabled(self.timer.isActive())
        self.buttons["Reset"].setEnabled(state is not None)
        self.rule.setText(self.rule_text())
        self.curve.set_losses(state.losses if state else ())
        graph = self.doc.graph
        self.paths.set_lines({p: (trajectory_label(p, graph), v)
                              for p, v in (state.trajectories.items() if state else ())})

    def rule_text(self) -> str:
        spec, state = self.doc.train, self.doc.train_state
        if spec is None:
            return "Teach > Train: pick a scalar loss to train this graph."
        lines = [f"minimise {spec.loss} by {spec.optimizer}:", *rule(spec)]
        if state is not None and state.last is not None:
            lines += ["", f"step {state.t}: loss = {state.last.loss:.6g}"]
            lines += step_lines(state.last, spec)
        elif state is None:
            lines += ["", "Step or Play to run the first update."]
        return "\n".join(lines)

    # ------------------------------------------------------------------ editing

    def _settings_edited(self) -> None:
        spec = self.doc.train
        if self._syncing or spec is None:
            return
        new = dataclasses.replace(
            spec,
            optimizer=self.optimizer.currentText(),
            lr=self.lr.value(),
            momentum=self.momentum.value(),
            betas=(self.beta1.value(), self.beta2.value()),
            zero_grad=self.zero_grad.isChecked(),
            steps=self.steps.value(),
        )
        if new != spec:
            self._push(SetTrain(self.doc, new, "Edit training settings"))

    def _push(self, cmd: object) -> bool:
        error = push(self.doc, cmd)  # type: ignore[arg-type]
        if error is not None:
            self.stop()
            self.status.emit(f"Cannot train: {error}")
            return False
        return True

    def step(self) -> bool:
        """One training step as one undoable command; with "play backward" on, the
        backward pass plays on the canvas first and the update follows when it ends."""
        if self._pending:
            return True
        if self.player is not None and self.play_backward.isChecked():
            if self.doc.train is None or self.doc.results.trace is None:
                return self._push(TrainStep(self.doc))  # refused with its reason
            self._pending = True
            self.player.seek(self.player.forward_done_position)
            self.player.play()
            return True
        return self._push(TrainStep(self.doc))

    def _backward_played(self, playing: bool) -> None:
        if playing or not self._pending or self.player is None:
            return
        self._pending = False
        if self.player.position == self.player.timeline.end:
            self._push(TrainStep(self.doc))
        else:  # paused before the end: no update
            self.stop()

    def play(self, steps: int | None = None) -> None:
        """Run ``steps`` steps (the spin box's count) at the slider's rate."""
        self.remaining = self.steps.value() if steps is None else steps
        if self.remaining > 0 and self.doc.train is not None:
            self.timer.start()
        self.sync()

    def _tick(self) -> None:
        if self._pending:
            return  # its backward is still playing
        if self.remaining <= 0 or not self.step():
            self.stop()
            return
        self.remaining -= 1
        if self.remaining <= 0:
            self.timer.stop()  # the last step may still be playing its backward
            self.sync()

    def step_interval_ms(self) -> float | None:
        """While Play runs, the milliseconds between its steps (the update act on the
        canvas fits in them); else None."""
        return float(self.timer.interval()) if self.timer.isActive() else None

    def stop(self) -> None:
        """Stop Play; the state reached stays (a backward still playing is cut short)."""
        self.timer.stop()
        self.remaining = 0
        if self._pending and self.player is not None:
            self._pending = False
            self.player.pause()
        self.sync()

    def reset(self) -> None:
        self.stop()
        self._push(ResetTraining(self.doc))


def ensure_train(doc: GraphDocument, on_error: Callable[[str], None]) -> bool:
    """Teach > Train on a graph without a train block: one, on the backward output."""
    if doc.train is not None:
        return True
    if doc.output is None:
        on_error("Choose the scalar loss as the output first (right-click > Set as output)")
        return False
    spec = TrainSpec(loss=doc.output, lr=0.01)
    results = doc.results.forward.values.get(doc.output)
    if results is None or results.size != 1:
        on_error(f"Cannot train: the output {doc.output!r} is not a scalar loss")
        return False
    error = push(doc, SetTrain(doc, spec, "Train this graph"))
    if error is not None:
        on_error(str(error))
        return False
    return True
