"""The quiz widget beside the player: the question, an answer field, Check, Reveal, score.

All state lives in :class:`gui.model.quiz.Quiz` (no Qt); this widget turns quiz
mode on and off, lets the teacher choose what is hidden, and installs the quiz's
mask as the player's frame filter so every view hides the same numbers. Playing
stops at each open question; stepping on skips it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.trace import Step

from ..layouts import fill
from ..model import labels
from ..model.quiz import DEFAULT_HIDDEN, TOLERANCE_TEXT, Hidden, Quiz
from ..model.timeline import Frame
from ..player import Player
from ..theme import THEME, muted_sheet, style


class QuizPanel(QWidget):
    """Quiz mode for one player; ``modeChanged(bool)`` when it is switched on or off."""

    modeChanged = Signal(bool)

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("QuizPanel")
        self.player = player
        self.quiz: Quiz | None = None

        self.enabled_box = QCheckBox("Quiz mode: predict each number before it is shown")
        self.enabled_box.setObjectName("QuizEnabled")
        self.enabled_box.toggled.connect(self.set_active)
        self.hide_boxes: dict[Hidden, QCheckBox] = {}
        for kind in Hidden:
            box = QCheckBox(kind.words)
            box.setChecked(kind in DEFAULT_HIDDEN)
            box.toggled.connect(self._hidden_changed)
            self.hide_boxes[kind] = box
        hide_row = fill(QHBoxLayout(), QLabel("Hide:"), *self.hide_boxes.values(), 1)

        self.question = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)  # ids: user text
        self.question.setObjectName("QuizQuestion")
        self.answer = QLineEdit(placeholderText="a number (1.1, 1/3) or a list ([0.1, 0.2])")
        self.answer.setObjectName("QuizAnswer")
        self.answer.returnPressed.connect(self.check)
        self.check_button = QPushButton("Check")
        self.check_button.clicked.connect(self.check)
        self.reveal_button = QPushButton("Reveal (R)")
        self.reveal_button.clicked.connect(self.reveal)
        self.verdict = QLabel(textFormat=Qt.TextFormat.PlainText)
        self.verdict.setObjectName("QuizVerdict")
        self.score = QLabel()
        self.score.setObjectName("QuizScore")
        tolerance = QLabel(TOLERANCE_TEXT)
        style(tolerance, muted_sheet)

        answer_row = fill(QHBoxLayout(), (self.answer, 1), self.check_button, self.reveal_button)
        fill(QVBoxLayout(self), self.enabled_box, hide_row, self.question, answer_row, self.verdict,
             self.score, tolerance, 1, margins=(8, 6, 8, 6))

        player.timelineChanged.connect(self._timeline_changed)
        player.frameChanged.connect(self._frame_changed)
        self.apply_theme()
        self._refresh()

    # ------------------------------------------------------------------ state

    @property
    def active(self) -> bool:
        return self.quiz is not None

    def hidden(self) -> frozenset[Hidden]:
        """What the teacher chose to hide (also what a worksheet export should hide)."""
        return frozenset(k for k, box in self.hide_boxes.items() if box.isChecked())

    def set_active(self, on: bool) -> None:
        """Switch quiz mode on (from the first question) or off (everything shown)."""
        if self.enabled_box.isChecked() != on:
            self.enabled_box.setChecked(on)  # comes back here through toggled
            return
        if on == self.active:
            return
        player = self.player
        if on:
            self._build()
            player.frame_filter = self._mask
            first = self.quiz.questions[0].position if self.quiz.questions else None  # type: ignore[union-attr]
            player.pause()
            if first is not None:
                player.seek(first)
        else:
            self.quiz = None
            player.frame_filter = None
        player.refresh_frame()
        self.modeChanged.emit(on)
        self._refresh()

    def _build(self) -> None:
        doc = self.player.doc
        self.quiz = Quiz(doc.graph, self.player.timeline, self.hidden())
        self.verdict.clear()

    def _mask(self, frame: Frame) -> Frame:
        quiz = self.quiz
        if quiz is None or quiz.timeline is not self.player.timeline:
            return frame
        return quiz.mask(frame)

    def edge_label(self, step: Step, short: bool = False) -> str:
        """The canvas's edge label: the quiz's, with hidden parts as ``?``."""
        if self.quiz is None:
            return labels.edge_label(step, short)
        return self.quiz.edge_label(step, self.player.frame.hidden, short)

    # ------------------------------------------------------------------ answering

    def open_question(self) -> int | None:
        if self.quiz is None or self.quiz.timeline is not self.player.timeline:
            return None
        return self.quiz.open_at(self.player.position)

    def check(self) -> None:
        index = self.open_question()
        if index is None:
            return
        verdict = self.quiz.check(index, self.answer.text())  # type: ignore[union-attr]
        self._say(verdict.message, "right" if verdict.correct else "wrong")
        if verdict.correct:
            self.answer.clear()
            self.player.refresh_frame()
        self._refresh()

    def reveal(self) -> None:
        index = self.open_question()
        if index is None:
            return
        text = self.quiz.reveal(index)  # type: ignore[union-attr]  # an open question has a quiz
        self._say(f"the engine says {text}", "wrong" if self.answer.text() else "text")
        self.answer.clear()
        self.player.refresh_frame()
        self._refresh()

    def _say(self, text: str, role: str) -> None:
        """Show ``text`` in the THEME colour ``role`` (read again at a theme change)."""
        self.verdict.setText(text)
        style(self.verdict, lambda: f"color: {getattr(THEME, role).name()}; font-weight: bold;")

    # ------------------------------------------------------------------ refresh

    def apply_theme(self) -> None:
        self.question.setFont(THEME.font(12, bold=True))
        self.answer.setFont(THEME.font(12, mono=True))
        self.score.setFont(THEME.font(11))

    def _hidden_changed(self, *_args: object) -> None:
        self._timeline_changed()
        self._refresh()

    def _timeline_changed(self) -> None:
        if self.active:
            self._build()  # new results or what is hidden: new questions, a fresh score
            self.player.refresh_frame()

    def _frame_changed(self, frame: Frame) -> None:
        if frame.question and self.player.playing:
            self.player.pause()  # stop at each question: predict first
        self._refresh()

    def _refresh(self) -> None:
        quiz = self.quiz
        index = self.open_question()
        asking = index is not None
        self.answer.setEnabled(asking)
        self.check_button.setEnabled(asking)
        self.reveal_button.setEnabled(asking)
        if quiz is None:
            self.question.setText("Quiz mode is off.")
            self.score.clear()
            return
        if asking:
            self.question.setText(self.player.frame.question + "?")
        elif not quiz.questions:
            self.question.setText("Nothing to ask: no backward pass (or nothing hidden).")
        else:
            self.question.setText("No open question here: step on (→).")
        self.score.setText(quiz.score_text())
