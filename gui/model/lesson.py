"""A lesson as a list of shots: the title card, the frames of playback, the end card.

Pure Python (no Qt): every exporter (animation, PNG sequence, PDF, HTML) walks
the same :func:`plan`, so the formats cannot disagree about which frames exist,
how long each stays and what the cards say. The card texts are Qt rich-text
HTML built from :mod:`gui.model.labels`, the same pieces the panels show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from . import colours, labels, update_act
from .formatting import bracketed, fmt_num


@dataclass(frozen=True)
class Timing:
    """How long things stay on screen, in seconds, and the frame rate of transitions.

    ``transition`` is the travelling pulse between two steps (0: cut straight to
    the next step); it is drawn with ``round(transition * fps)`` in-between frames.
    """

    hold: float = 1.5
    fps: float = 10.0
    transition: float = 0.5
    title: float = 3.0
    end: float = 4.0

    @property
    def transition_frames(self) -> int:
        return max(0, int(round(self.transition * self.fps)))


#: Where the pulse rests while a step is held: arrived at the operand, as in the app.
HOLD_PULSE = 1.0


class ShotKind(StrEnum):
    """A lesson's pictures: the title card, a frame of the timeline, the end card; with
    ``--train N`` then the update act: the first training step drawn on the graph, and
    the loss curve over the N steps."""

    TITLE = "title"
    FRAME = "frame"
    END = "end"
    UPDATE = "update"
    LOSS = "loss"


@dataclass(frozen=True)
class Shot:
    """One picture of the lesson and how long it stays (milliseconds).

    A :class:`ShotKind`; a frame has a timeline
    ``position`` and the pulse's progress along the active edge (an update picture on
    the way: the parameter's place in the step and the pulse's progress to it).
    ``held`` is False for the in-between pictures of a transition.
    """

    kind: ShotKind
    duration_ms: int
    position: int = 0
    pulse: float = HOLD_PULSE
    held: bool = True


def plan(
    forward_length: int, end: int, timing: Timing, forward: bool, train: int = 0
) -> list[Shot]:
    """The shots of a lesson over a timeline with ``forward_length`` forward positions
    and its last position ``end`` (see :class:`gui.model.timeline.Timeline`).

    Title card; with ``forward`` the forward pass node by node; the start of backward;
    each backward step as its transition (the pulse travelling along the edge, at
    ``timing.fps``) then its held frame; the end card; with ``train`` (the number of
    parameters the first step updates) the update act: the pulse on its way to each
    parameter in turn (``position`` the parameter's place, ``pulse`` how far, as
    :func:`gui.model.update_act.frames`; a transition's pictures each), then the
    update held and the loss curve, each held as long as a card.
    """
    hold = _ms(timing.hold)
    shots = [Shot(ShotKind.TITLE, _ms(timing.title))]
    start = forward_length
    if forward:
        shots += [Shot(ShotKind.FRAME, hold, p) for p in range(1, forward_length)]
    shots.append(Shot(ShotKind.FRAME, hold, start))
    between = timing.transition_frames
    tick = _ms(1.0 / timing.fps)
    for p in range(start + 1, end + 1):
        shots += [
            Shot(ShotKind.FRAME, tick, p, i / (between + 1), held=False)
            for i in range(1, between + 1)
        ]
        shots.append(Shot(ShotKind.FRAME, hold, p))
    shots.append(Shot(ShotKind.END, _ms(timing.end)))
    if train:
        *on_the_way, _done = update_act.frames(train, between)
        shots += [Shot(ShotKind.UPDATE, tick, f.index, f.pulse, held=False) for f in on_the_way]
        shots += [Shot(ShotKind.UPDATE, _ms(timing.end)), Shot(ShotKind.LOSS, _ms(timing.end))]
    return shots


def _ms(seconds: float) -> int:
    return max(10, int(round(seconds * 1000)))


# --------------------------------------------------------------------------- card text


def python_literal(a: np.ndarray) -> str:
    """An array as the nested list one types into ``torch.tensor``: ``[0.1, 0.2, 0.3]``."""
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt_num(a)
    return bracketed(map(python_literal, a))


def backward_call(output: str, gradient: np.ndarray) -> str:
    """The PyTorch call the lesson plays: ``y.backward(gradient=tensor([0.1, 0.2, 0.3]))``,
    or ``z.backward()`` for a scalar output seeded with 1."""
    g = np.asarray(gradient)
    if g.ndim == 0 and float(g) == 1.0:
        return f"{output}.backward()"
    return f"{output}.backward(gradient=tensor({python_literal(g)}))"


def input_lines(graph: Any, values: Mapping[str, np.ndarray]) -> list[str]:
    """``x1 = 1   (requires_grad)`` for each input node, in the graph's order."""
    lines = []
    for nid, node in graph.nodes.items():
        if node.op != "input":
            continue
        value = values.get(nid, node.value)
        shown = "—" if value is None else labels.inline_tensor(np.asarray(value), 64)
        lines.append(f"{nid} = {shown}" + ("   (requires_grad)" if node.is_leaf else ""))
    return lines


def title_html(
    title: str, description: str, call: str | None, inputs: Sequence[str], base_pt: float
) -> str:
    """The title card: the graph's title, its inputs and the backward call with its v."""
    parts = [labels.h_heading(labels.esc(title), _pt(base_pt, 1.7))]
    if description:
        parts.append(labels.h_para(labels.esc(description), colours.TEXT_MUTED))
    parts.append(labels.h_heading("Inputs", _pt(base_pt, 1.2)))
    parts.append(_mono("<br/>".join(labels.esc(t) for t in inputs) or "none"))
    parts.append(labels.h_heading("The backward call", _pt(base_pt, 1.2)))
    if call is None:
        no_call = "No backward pass: the graph has no output to start from."
        parts.append(labels.h_para(no_call, colours.GRAD_TEXT))
    else:
        parts.append(_mono(labels.h_color(labels.esc(call), colours.GRAD_TEXT)))
    return labels.h_document("".join(parts), base_pt)


def end_html(
    e2e: Any, leaf_grads: Mapping[str, np.ndarray | None] | None, base_pt: float,
    elide: bool = False,
) -> str:
    """The end card: the whole call as ``vᵀ J`` and the leaves' ``.grad``.

    ``e2e`` is the player's :class:`~gui.player.EndToEnd` (None: no backward pass);
    ``elide``: ``J`` and ``vᵀJ`` said by their shape (:func:`labels.end_to_end_html`; the
    leaves' ``.grad`` follow anyway).
    """
    parts = [labels.h_heading("Backward done", _pt(base_pt, 1.7))]
    if e2e is None or leaf_grads is None:
        parts.append(labels.h_para("There was no backward pass to play."))
        return labels.h_document("".join(parts), base_pt)
    parts.append(e2e.html(elide=elide))
    parts.append(labels.h_heading("Leaf gradients", _pt(base_pt, 1.2)))
    lines = labels.leaf_grad_lines(leaf_grads)
    parts.append(_mono(labels.h_lines(lines, colours.GRAD_TEXT)))
    return labels.h_document("".join(parts), base_pt)


def forward_end_html(tangents: Sequence[str], base_pt: float) -> str:
    """The end card of forward mode: every node's tangent, ``tan name = value`` lines
    (:func:`gui.model.forward_view.tangent_lines`; the outputs' are J · u)."""
    parts = [labels.h_heading("Forward mode done", _pt(base_pt, 1.7))]
    parts.append(labels.h_heading("Tangents (J · u)", _pt(base_pt, 1.2)))
    parts.append(_mono(labels.h_lines(tangents, colours.TANGENT)))
    return labels.h_document("".join(parts), base_pt)


def _pt(base_pt: float, factor: float) -> str:
    """A font size relative to the card's base (Qt's rich text ignores percentages on
    paragraphs)."""
    return f"{base_pt * factor:.1f}pt"


def _mono(body: str) -> str:
    return f"<p style=\"margin:6px 0px; font-family:'DejaVu Sans Mono'; \">{body}</p>"
