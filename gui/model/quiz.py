"""Quiz mode (predict, then reveal): the questions of one timeline and the student's score.

Pure Python, no Qt: the player's quiz widget, presentation mode and the PDF
worksheet all read the same questions. The teacher chooses what is hidden
(:class:`Hidden`: vjps, accumulated gradients, local Jacobians, forward values);
:func:`questions` turns a timeline and that choice into an ordered list, each
asked at one timeline position. While a question at the shown position is open
(neither answered right nor revealed), :meth:`Quiz.mask` hides its number in the
frame (node boxes, the chain-rule write-up) and :meth:`Quiz.edge_label` in the
edge label, so nothing on screen gives the answer away.

An answer is right when every element is within ``RTOL`` of the engine's value
relative, or ``ATOL`` absolute (students type rounded numbers).
"""

from __future__ import annotations

import ast
import dataclasses
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

import numpy as np

from engine.forward_mode import ForwardStep
from engine.graph import Graph
from engine.trace import Step

from . import labels
from .formatting import count, fmt_shape, format_tensor
from .timeline import Frame, Timeline

#: Relative tolerance of a right answer (a value rounded to 3 significant digits passes).
RTOL = 5e-3
#: Absolute tolerance of a right answer (for answers at or near 0).
ATOL = 1e-6
TOLERANCE_TEXT = f"right within {RTOL:.1%} relative or {ATOL:g} absolute, element by element"


class Hidden(Enum):
    """A quantity the teacher can hide; the value is its key in settings and files."""

    JACOBIAN = "jacobian"
    VJP = "vjp"
    ACCUMULATED = "accumulated"
    FORWARD = "forward"

    @property
    def words(self) -> str:
        return {
            Hidden.JACOBIAN: "local Jacobians",
            Hidden.VJP: "vjps",
            Hidden.ACCUMULATED: "accumulated gradients",
            Hidden.FORWARD: "forward values",
        }[self]


#: What a quiz hides unless the teacher chooses otherwise: the vjp, then the sum.
DEFAULT_HIDDEN: frozenset[Hidden] = frozenset({Hidden.VJP, Hidden.ACCUMULATED})


@dataclass(frozen=True)
class Question:
    """One number (or small tensor) the student predicts before it is shown."""

    position: int  # the timeline position that shows it
    kind: Hidden
    prompt: str
    answer: np.ndarray
    step: int = 0  # backward step k (1-based); 0 for a forward value
    node: str = ""  # the node whose value (forward) or gradient (accumulated) it is


def questions(graph: Graph, timeline: Timeline, hidden: Iterable[Hidden]) -> list[Question]:
    """Every question of ``timeline`` for the hidden quantities, in playback order.

    Forward values: one per computed op node (leaves are given). Per backward
    step, in this order: its local Jacobian (when small enough to type), its vjp,
    then the operand's accumulated gradient.
    """
    hide = set(hidden)
    out: list[Question] = []
    graph_values = timeline.results.forward.values
    if Hidden.FORWARD in hide:
        for i, nid in enumerate(timeline.forward_order):
            if not graph.nodes[nid].is_leaf:
                value = np.asarray(graph_values[nid])
                out.append(Question(i + 1, Hidden.FORWARD, f"the value of {nid}", value, node=nid))
    for k, s in enumerate(timeline.steps, 1):
        if isinstance(s, Step | ForwardStep):  # not a collapsed group: no members' numbers shown
            out.extend(_edge_questions(s, k, timeline.position_of_step(k), hide, graph))
    return out


def _edge_questions(
    s: Step | ForwardStep, k: int, position: int, hide: set[Hidden], graph: Graph
) -> list[Question]:
    """One edge's questions in the order it plays them: its local Jacobian (when small
    enough to type), what it sends (a backward step's vjp, forward mode's jvp: hidden
    with the vjps), then the sum receiving it (the operand's gradient, the consumer's
    tangent: hidden with the accumulated gradients)."""
    if isinstance(s, ForwardStep):
        edge = f"forward step {k}, {s.operand} → {s.consumer}"
        jac = s.jacobian(limit=labels.LABEL_MAX_ENTRIES) if Hidden.JACOBIAN in hide else None
        sends, sent = f"the jvp J · {labels.inline_tensor(s.tangent)}", s.jvp
        into, total, added = s.consumer, f"tan {s.consumer}", "jvp"
    else:
        edge = f"step {k}, {s.consumer} → {s.operand}"
        jac = labels.small_jacobian(s) if Hidden.JACOBIAN in hide else None
        sends, sent = f"the vjp {labels.flat_row(s.upstream)} · J", s.vjp
        into, added = s.operand, "vjp"
        total = labels.grad_name(into, graph.nodes[into].is_leaf)
    out = []
    if jac is not None:
        prompt = f"{edge}: the local Jacobian ∂{s.consumer}/∂{s.operand}"
        out.append(Question(position, Hidden.JACOBIAN, prompt, jac, step=k))
    if Hidden.VJP in hide:
        out.append(Question(position, Hidden.VJP, f"{edge}: {sends}", sent, step=k))
    if Hidden.ACCUMULATED in hide:
        before = "nothing yet" if s.before is None else format_tensor(s.before)
        prompt = f"{edge}: {total} after += {added} (before: {before})"
        out.append(Question(position, Hidden.ACCUMULATED, prompt, s.accumulated, step=k,
                            node=into))
    return out


# --------------------------------------------------------------------------- answers

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _number(node: ast.AST) -> float | list:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        if isinstance(node.value, int | float):
            return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _number(node.operand)
        if isinstance(value, float):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        a, b = _number(node.left), _number(node.right)
        if isinstance(a, float) and isinstance(b, float):
            return float(_BINARY[type(node.op)](a, b))
    if isinstance(node, ast.List | ast.Tuple):
        return [_number(e) for e in node.elts]
    raise ValueError("type a number (1.5, -2, 1/3) or a list of numbers ([0.1, 0.2])")


def parse_answer(text: str) -> np.ndarray:
    """What a student typed, as an array: ``1.1``, ``1/3``, ``[1, 2]``, ``1, 2``, ``1 2``,
    ``[[1, 0], [0, 1]]``. Never evaluates anything but arithmetic on numbers."""
    text = text.strip()
    if not text:
        raise ValueError("type an answer first")
    if "," not in text and "[" not in text and len(text.split()) > 1:
        text = ", ".join(text.split())
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ValueError(f"cannot read {text!r} as a number or a list of numbers") from None
    try:
        value = np.array(_number(tree), dtype=np.float64)
    except ZeroDivisionError:
        raise ValueError("division by zero in the answer") from None
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise ValueError("the rows of the answer have different lengths") from None
        raise
    return value


@dataclass(frozen=True)
class Verdict:
    """What Check says: right or not, and in words."""

    correct: bool
    message: str


@dataclass
class Attempt:
    """The state of one question: tries, right answer given, revealed."""

    tries: int = 0
    correct: bool = False
    revealed: bool = False

    @property
    def settled(self) -> bool:
        return self.correct or self.revealed

    @property
    def first_try(self) -> bool:
        """Right at the first attempt: the only answer that scores (a class that guesses
        until it is right has not predicted anything)."""
        return self.correct and self.tries == 1


def grade(typed: np.ndarray, answer: np.ndarray) -> Verdict:
    """Compare a typed answer with the engine's (same number of elements, within tolerance)."""
    answer = np.asarray(answer, dtype=np.float64)
    if typed.size != answer.size:
        want = count(answer.size, "number")
        shape = fmt_shape(answer.shape)
        return Verdict(False, f"wrong shape: expected {want} (shape {shape}), got {typed.size}")
    typed = typed.reshape(answer.shape)
    ok = np.isclose(typed, answer, rtol=RTOL, atol=ATOL, equal_nan=True)
    if ok.all():
        return Verdict(True, "right")
    if answer.size == 1:
        return Verdict(False, "not quite")
    return Verdict(False, f"not quite: {int(ok.size - ok.sum())} of {ok.size} entries are off")


class Quiz:
    """The questions of one timeline, the student's attempts and the score."""

    def __init__(
        self, graph: Graph, timeline: Timeline, hidden: Iterable[Hidden] = DEFAULT_HIDDEN
    ) -> None:
        self.timeline = timeline
        self.hidden = frozenset(hidden)
        self.questions = questions(graph, timeline, self.hidden)
        self.attempts = [Attempt() for _ in self.questions]

    # ------------------------------------------------------------------ asking

    def at(self, position: int) -> list[int]:
        """Indices of the questions asked at ``position``."""
        return [i for i, q in enumerate(self.questions) if q.position == position]

    def open_at(self, position: int) -> int | None:
        """The first question at ``position`` still open (the one to answer now)."""
        return next((i for i in self.at(position) if not self.attempts[i].settled), None)

    @property
    def scorable_steps(self) -> int:
        """How many backward steps ask something."""
        return len({q.step for q in self.questions if q.step})

    # ------------------------------------------------------------------ answering

    def check(self, index: int, text: str) -> Verdict:
        """Grade ``text`` for question ``index``; unreadable text is refused, not counted."""
        attempt = self.attempts[index]
        if attempt.settled:
            said = "answered" if attempt.correct else "revealed"
            return Verdict(attempt.correct, f"already {said}")
        try:
            typed = parse_answer(text)
        except ValueError as exc:
            return Verdict(False, str(exc))
        attempt.tries += 1
        verdict = grade(typed, self.questions[index].answer)
        attempt.correct = verdict.correct
        return verdict

    def reveal(self, index: int) -> str:
        """Show the engine's value (no point scored); the text to show."""
        self.attempts[index].revealed = True
        return self.answer_text(index)

    def answer_text(self, index: int) -> str:
        return format_tensor(self.questions[index].answer)

    @property
    def score(self) -> int:
        """Questions answered right at the first attempt (before any reveal)."""
        return sum(1 for a in self.attempts if a.first_try)

    @property
    def tries(self) -> int:
        """Every graded attempt so far (unreadable text is not one)."""
        return sum(a.tries for a in self.attempts)

    @property
    def settled(self) -> int:
        return sum(1 for a in self.attempts if a.settled)

    def score_text(self) -> str:
        return (f"score {self.score} of {self.settled} answered at the first attempt"
                f" ({count(self.tries, 'attempt')}, {len(self.questions)} questions)")

    # ------------------------------------------------------------------ hiding

    def mask(self, frame: Frame) -> Frame:
        """``frame`` with the open questions' numbers hidden and the question to ask."""
        at = self.at(frame.position)
        hidden = frozenset(self.questions[i].kind for i in at if not self.attempts[i].settled)
        if not hidden:
            return frame
        index = self.open_at(frame.position)
        question = self.questions[index].prompt if index is not None else ""
        shown = frame.shown_values
        grads = dict(frame.grads)
        if Hidden.FORWARD in hidden and index is not None:
            shown = shown - {self.questions[index].node}
        step = frame.edge_step  # a backward step's operand, or forward mode's consumer
        if step is not None and hidden & {Hidden.ACCUMULATED, Hidden.VJP}:
            into = step.consumer if isinstance(step, ForwardStep) else step.operand
            if step.before is None:
                grads.pop(into, None)
            else:
                grads[into] = step.before
        return dataclasses.replace(
            frame,
            shown_values=shown,
            grads=grads,
            hidden=frozenset(h.value for h in hidden),
            question=f"Predict {question}",
        )

    def edge_label(self, step: Step, hidden: frozenset[str], short: bool = False) -> str:
        """The active edge's label with hidden parts as ``?`` (``short``: tensors as
        :func:`gui.model.labels.short_tensor` writes them; hidden ones stay ``?``)."""
        if not hidden:
            return labels.edge_label(step, short)
        head = f"∂{step.consumer}/∂{step.operand}"
        jac = "?" if Hidden.JACOBIAN.value in hidden else labels.jacobian_text(step, short)
        vjp = "?" if Hidden.VJP.value in hidden else labels.label_tensor(step.vjp, short)
        up = labels.label_tensor(step.upstream, short, as_row=True)
        return f"{head} = {jac}\n{up} · J = {vjp}"
