"""Train mode without Qt: a training run's state as a value, and the update written out.

The GUI's steps are undoable, so the optimizer's state (step count, momentum
buffer, Adam's moments), the accumulated ``.grad``, the loss history and each
parameter's trajectory are one immutable :class:`TrainState` the document holds;
a step command keeps the state before and after. The texts here are what the
Train panel and the parameter boxes show: the rule, then the rule with numbers,
from the engine's :class:`~engine.train.Update` (the very numbers that moved the
value, so the drawing and the change cannot differ).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from engine.graph import Graph
from engine.train import StepResult, Trainer, TrainSpec, Update

from . import labels, semantic_zoom

#: Elements of a tensor parameter written out in an update; the rest is "…".
SHOWN = 3


@dataclass(frozen=True)
class TrainState:
    """Everything a run has accumulated; ``initial`` holds the values Reset restores."""

    initial: dict[str, np.ndarray]
    t: int = 0
    optimizer: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    grads: dict[str, np.ndarray] = field(default_factory=dict)
    losses: tuple[float, ...] = ()
    trajectories: dict[str, tuple[float, ...]] = field(default_factory=dict)
    last: StepResult | None = None


def _value(graph: Graph, nid: str) -> np.ndarray:
    """A parameter's value (a parameter is a leaf: it always holds one)."""
    value = graph.nodes[nid].value
    assert value is not None, nid
    return value


def start(graph: Graph, spec: TrainSpec) -> TrainState:
    """A fresh run from the graph's current values (checks the spec: may raise)."""
    trainer = Trainer(graph, spec)
    return TrainState(initial={p: _value(graph, p).copy() for p in trainer.params})


def propose(graph: Graph, spec: TrainSpec, state: TrainState) -> TrainState:
    """The state after one more step; the new values are in ``last.updates``."""
    trainer = Trainer(graph, spec)
    trainer.optimizer.restore((state.t, state.optimizer))
    trainer.grads = dict(state.grads)
    result = trainer.propose()
    t, opt = trainer.optimizer.snapshot()
    trajectories = dict(state.trajectories)
    for p in trainer.params:
        up = result.updates.get(p)
        value = up.new if up is not None else _value(graph, p)
        trajectories[p] = (*trajectories.get(p, ()), trajectory_value(value))
    return TrainState(state.initial, t, opt, trainer.grads, (*state.losses, result.loss),
                      trajectories, result)


def trajectory_value(value: np.ndarray) -> float:
    """A scalar parameter's value, or a tensor's norm: one line per parameter."""
    return float(value.reshape(())) if value.size == 1 else float(np.linalg.norm(value))


def trajectory_label(name: str, graph: Graph) -> str:
    node = graph.nodes.get(name)
    return name if node is None or node.value is None or node.value.size == 1 else f"‖{name}‖"


@dataclass(frozen=True)
class Rehearsal:
    """A run on a copy of the graph, for an export: the first step in full, every loss,
    and the parameters reached."""

    first: StepResult
    losses: tuple[float, ...]
    final: dict[str, np.ndarray]


def rehearse(graph: Graph, spec: TrainSpec, steps: int) -> Rehearsal:
    """``steps`` (at least one) training steps on a copy: the document is not touched."""
    trainer = Trainer(graph.copy(), spec)
    first = trainer.step()
    losses = (first.loss, *trainer.run(max(0, steps - 1)))
    final = {p: _value(trainer.graph, p) for p in trainer.params}
    return Rehearsal(first, losses, final)


# --------------------------------------------------------------------------- texts


def number(x: float) -> str:
    """Four significant digits, a real minus sign: what a class reads off a box."""
    if not math.isfinite(x):
        return str(x)
    text = f"{x:.4g}"
    return text.replace("-", "−")


def short(a: np.ndarray | None, most: int = SHOWN) -> str:
    """A value in an update: a number, or its first ``most`` entries in brackets (``…``
    when there are more)."""
    if a is None:
        return "—"
    flat = np.asarray(a).ravel()
    if flat.size == 1:
        return number(float(flat[0]))
    shown = ", ".join(number(float(v)) for v in flat[:most])
    return f"[{shown}{', …' if flat.size > most else ''}]"


def _paren(a: np.ndarray) -> str:
    text = short(a)
    return f"({text})" if text.startswith("−") else text


def rule(spec: TrainSpec) -> list[str]:
    """The update rule in symbols, as the optimizer defines it."""
    if spec.optimizer == "adam":
        b1, b2 = spec.betas
        return [
            f"m ← {number(b1)}·m + {number(1 - b1)}·g,   v ← {number(b2)}·v + {number(1 - b2)}·g²",
            f"m̂ = m / (1 − {number(b1)}ᵗ),   v̂ = v / (1 − {number(b2)}ᵗ)",
            f"w ← w − lr · m̂ / (√v̂ + ε),   lr = {number(spec.lr)}, ε = {spec.eps:g}",
        ]
    if spec.optimizer == "momentum":
        return [f"b ← {number(spec.momentum)}·b + g   (b = g at the first step)",
                f"w ← w − lr · b,   lr = {number(spec.lr)}"]
    return [f"w ← w − lr · g,   lr = {number(spec.lr)}"]


def update_lines(up: Update, spec: TrainSpec) -> list[str]:
    """One parameter's update with the numbers plugged in."""
    w, g, new = up.name, up.grad, up.new
    lr = number(spec.lr)
    if spec.optimizer == "adam":
        assert up.m is not None and up.v is not None and up.m_hat is not None
        assert up.v_hat is not None
        return [
            f"{w}: g = {short(g)},  t = {up.t}",
            f"m = {short(up.m)},  v = {short(up.v)}",
            f"m̂ = {short(up.m_hat)},  v̂ = {short(up.v_hat)},  step = {short(up.delta)}",
            f"{w} ← {short(up.old)} − {_paren(up.delta)} = {short(new)}",
        ]
    if spec.optimizer == "momentum" and up.buf is not None:
        return [f"{w}: g = {short(g)},  b = {short(up.buf)}",
                f"{w} ← {short(up.old)} − {lr} · {_paren(up.buf)} = {short(new)}"]
    return [f"{w} ← {short(up.old)} − {lr} · {_paren(g)} = {short(new)}"]


def step_lines(result: StepResult, spec: TrainSpec) -> list[str]:
    """Every parameter's update in one step, numbers plugged in (:func:`update_lines`)."""
    return [line for up in result.updates.values() for line in update_lines(up, spec)]


def update_html(spec: TrainSpec, state: TrainState) -> str:
    """The last step's update for the chain-rule panel, at the end of the backward:
    every parameter's result line first (``w ← old − step = new``: what its box then
    shows, and what the presentation panel must show without scrolling), then the rule
    and the optimizer's working (ids escaped here)."""
    if state.last is None:
        return ""
    head = labels.h_heading(labels.esc(f"Then the update, step {state.t} ({spec.optimizer})"))
    worked = [update_lines(up, spec) for up in state.last.updates.values()]
    rest = [w[-1] for w in worked] + rule(spec) + [x for w in worked for x in w[:-1]]
    return head + mono_lines(rest)


def mono_lines(lines: Iterable[str]) -> str:
    """Plain-text lines (rules, updates: they hold ids) as monospaced paragraphs, escaped."""
    return "".join(
        f"<p style=\"margin:2px 0px; font-family:'DejaVu Sans Mono';\">{labels.esc(x)}</p>"
        for x in lines
    )


def box_line(up: Update, spec: TrainSpec) -> str:
    """The short form drawn on the parameter's box: the last line of its update."""
    return update_lines(up, spec)[-1]


def box_summary(up: Update) -> str:
    """What a box's update says zoomed out (semantic zoom, as a box's compact form): the
    value it reaches, its first entry for a tensor, in a compact line's length."""
    return semantic_zoom.cut(f"{up.name} ← {short(up.new, 1)}", semantic_zoom.MAX_COMPACT_CHARS)
