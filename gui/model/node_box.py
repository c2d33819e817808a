"""Node box content: what each box on the canvas says at one frame, already as text (no Qt).

The scene hands each box a :class:`NodeContent`; the box only lays the strings out.
Numbers become text here, through a cache, so a frame change formats only what it
has not formatted before.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from engine.graph import Graph
from engine.ops import OPS
from engine.trace import Trace

from .formatting import fmt_shape, format_tensor
from .results import Results
from .timeline import Frame

HIDDEN = "…"  # value not computed yet at this point of the playback
BLOCKED = "—"  # no value: blocked by an error upstream (or here)


class BoxStyle(StrEnum):
    """Which look a node box takes: its title band's colour, and a tint when compact."""

    OP = "op"
    INPUT = "input"  # a leaf that requires grad
    CONST = "const"  # constants, and inputs that need no grad


class ValueState(StrEnum):
    """Whether the box's value line shows a value, or why not."""

    VALUE = "value"
    BLOCKED = "blocked"  # an error upstream (or here)
    HIDDEN = "hidden"  # not computed yet at this point of the playback


@dataclass(frozen=True, slots=True)
class NodeContent:
    """Everything a node box shows, already as text (the box computes nothing).

    Slotted: no instance dict, one object fewer per box for the collector."""

    title: str
    style: BoxStyle = BoxStyle.OP
    marker: str = ""  # pill in the title band: "input", "const", "no grad"
    is_output: bool = False
    value: str = BLOCKED
    value_state: ValueState = ValueState.BLOCKED
    shape: str = ""
    grad: str | None = None  # None: no gradient shown in this frame
    grad_title: str = "grad"  # "tan" in the forward direction: the row holds a tangent
    grad_active: bool = False  # receiving the active step's vjp: grad += vjp
    fan_in: int = 0  # shown as "fan-in ×N" while active, when above one
    error: str | None = None
    reserve_grad: tuple[str, ...] = ()  # every grad text this node may show
    reserve_fan_in: int = 0  # the fan-in marker it may show (boxes keep one size)
    tooltip: str = ""


def side_by_side(left: str, sep: str, right: str, max_chars: int = 44) -> str:
    """``left sep right`` with multi-line blocks next to each other (mono font);
    stacked (``right`` under ``left``) when that would be too wide for a box."""
    a, b = left.split("\n"), right.split("\n")
    wa = max(len(x) for x in a)
    if wa + len(sep) + max(len(x) for x in b) > max_chars:
        pad = " " * len(sep.lstrip())
        return "\n".join(a + [sep.lstrip() + b[0]] + [pad + x for x in b[1:]])
    rows = max(len(a), len(b))
    mid = (rows - 1) // 2
    out = []
    for r in range(rows):
        la = a[r] if r < len(a) else ""
        lb = b[r] if r < len(b) else ""
        out.append(la.ljust(wa) + (sep if r == mid else " " * len(sep)) + lb)
    return "\n".join(line.rstrip() for line in out)


def _widest_and_tallest(texts: list[str]) -> tuple[str, ...]:
    """The two texts that decide a box's size (its widest line, its most lines)."""
    if len(texts) == 1:
        return (texts[0],)
    wide = max(texts, key=lambda t: max(len(x) for x in t.split("\n")))
    tall = max(texts, key=lambda t: t.count("\n"))
    return (wide,) if wide is tall else (wide, tall)


class NodeBoxes:
    """Builds :class:`NodeContent` for one document's results, caching number text."""

    def __init__(self) -> None:
        self._text: dict[object, tuple[np.ndarray, str]] = {}
        #: ``before → after`` by the two texts: every edit rebuilds each step's (the
        #: same steps, mostly), and laying the blocks side by side cost more than the rest
        self._changes: dict[tuple[str, str], str] = {}
        self._reserve: dict[str, tuple[str, ...]] = {}
        self._fan_in: dict[str, int] = {}
        self._results: Results | None = None  # what the two above were worked out for

    def _fmt(self, a: np.ndarray) -> str:
        """format_tensor with a cache (by value for small arrays, by identity for big)."""
        key: object = (a.shape, a.tobytes()) if a.size <= 256 else id(a)
        hit = self._text.get(key)
        if hit is not None and (a.size <= 256 or hit[0] is a):
            return hit[1]
        text = format_tensor(a)
        self._text[key] = (a, text)
        return text

    def _change_text(self, before: np.ndarray | None, after: np.ndarray) -> str:
        """``before → after`` of ``grad += vjp`` (no gradient yet reads as 0)."""
        texts = ("0" if before is None else self._fmt(before), self._fmt(after))
        text = self._changes.get(texts)
        if text is None:
            text = self._changes[texts] = side_by_side(texts[0], " → ", texts[1])
        return text

    def set_results(self, results: Results) -> None:
        """New results: work out every gradient text each node may show during playback,
        so its box keeps one size from the first frame to the last."""
        if len(self._text) > 20_000 or len(self._changes) > 20_000:
            self._text.clear()
            self._changes.clear()
        same_backward = results.changed_since(self._results) is not None
        self._results = results
        if same_backward:  # an edit backward never reached: the same texts to reserve
            return
        self._reserve = self._grad_reserve(results.trace)
        self._fan_in = results.trace.fan_ins() if results.trace is not None else {}

    def _grad_reserve(self, trace: Trace | None) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        if trace is None:
            return {}
        for nid, g in trace.grads.items():
            if g is not None:
                out.setdefault(nid, []).append(self._fmt(g))
        for step in trace.steps:
            text = self._change_text(step.before, step.accumulated)
            out.setdefault(step.operand, []).append(text)
        return {k: _widest_and_tallest(v) for k, v in out.items()}

    def content(
        self, graph: Graph, results: Results, output: str | None, nid: str, frame: Frame | None
    ) -> NodeContent:
        """What node ``nid``'s box shows at ``frame`` (None: live, all values and final grads)."""
        node = graph.nodes[nid]
        fwd = results.forward
        if node.is_leaf:
            title, tooltip = nid, f"{node.op}: {OPS[node.op].doc}"
            if node.op == "input" and node.requires_grad:
                style, marker = BoxStyle.INPUT, "input"
            else:
                style, marker = BoxStyle.CONST, "const" if node.op == "const" else "no grad"
        else:
            title = f"{nid} = {node.computes()}"
            doc = OPS[node.op].doc if node.op in OPS else "computed by PyTorch (captured)"
            style, marker, tooltip = BoxStyle.OP, "", f"{node.op}: {doc}"
        if frame is None or nid in frame.shown_values:
            v = fwd.values.get(nid)
            if v is None:
                value, state, shape = BLOCKED, ValueState.BLOCKED, ""
            else:
                value, state = self._fmt(v), ValueState.VALUE
                shape = "scalar" if not v.shape else f"shape {fmt_shape(v.shape)}"
        else:
            value, state, shape = HIDDEN, ValueState.HIDDEN, ""
        active = frame.active if frame is not None else None
        tangent = frame.tangent_step if frame is not None else None
        grad_active, fan_in = False, 0
        grad: str | None
        # What arrives here now: forward mode's J·t, else the backward step's vjp.
        arriving = tangent if tangent is not None and tangent.consumer == nid else (
            active if active is not None and active.operand == nid else None)
        if arriving is not None:
            if frame is not None and frame.hidden & {"vjp", "accumulated"}:  # a quiz asks it
                before = "0" if arriving.before is None else self._fmt(arriving.before)
                grad = side_by_side(before, " → ", "?")
            else:
                grad = self._change_text(arriving.before, arriving.accumulated)
            grad_active = True
            if arriving is active:
                fan_in = frame.fan_in.get(nid, 0) if frame else 0
        else:
            if frame is None:
                trace = results.trace
                g = trace.grads.get(nid) if trace is not None else None
            else:
                g = frame.grads.get(nid)
            grad = self._fmt(g) if g is not None else None
        error: object = fwd.errors.get(nid)
        if error is None and output == nid and results.backward_error is not None:
            error = results.backward_error  # a wrong-shaped v: the badge goes where v applies
        forward_mode = frame is not None and frame.timeline is not None and (
            frame.timeline.tangents is not None
        )
        return NodeContent(
            title=title,
            style=style,
            marker=marker,
            is_output=output == nid,
            value=value,
            value_state=state,
            shape=shape,
            grad=grad,
            grad_title="tan" if forward_mode else "grad",
            grad_active=grad_active,
            fan_in=fan_in,
            error=str(error) if error is not None else None,
            reserve_grad=self._reserve.get(nid, ()),
            reserve_fan_in=self._fan_in.get(nid, 0),
            tooltip=tooltip,
        )
