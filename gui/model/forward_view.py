"""Forward mode, written up (no Qt): one edge of a forward-mode pass and the cost comparison.

The player plays a forward-mode pass in the forward direction (see
:mod:`gui.model.timeline`); the chain-rule write-up of such a frame is
:func:`forward_mode_body` and the active edge's label :func:`edge_label`, so the
window and every exporter say the same. ``k`` (0..n) edges have run.
"""

from __future__ import annotations

import json

import numpy as np

from engine.forward_mode import ForwardStep, ForwardTrace, PassCounts

from . import colours, labels
from .formatting import fmt_shape
from .timeline import Frame

#: Why a captured trace has no forward mode here.
CAPTURED_NO_JVP = (
    "forward mode needs the engine's own ops: a captured trace holds PyTorch's backward "
    "steps only"
)


def tangent_lines(frame: Frame, order: list[str]) -> list[str]:
    """``tan name = value`` for each node with a tangent so far, in forward order."""
    tans = frame.grads
    return [f"tan {n} = {labels.inline_tensor(tans[n])}" for n in order if n in tans]


#: A shortened write-up names the nodes with a tangent so far instead of listing them.
TANGENTS_SO_FAR = "tangents so far (each on its box): {}"


def forward_mode_body(
    trace: ForwardTrace, frame: Frame, order: list[str], elide: bool = False
) -> list[str]:
    """A forward-direction frame as ``∂c/∂x = J``, ``J · tan x = share``,
    ``tan c: before → after`` (at 0: the inputs' tangents and what happens), then every
    node's tangent so far. While a quiz asks about the step, only its heading (the
    question follows). ``elide`` (as :func:`labels.step_html`'s): its matrices as their
    shapes and the tangents so far by their nodes' names, one line (xor_mlp's list of
    five 4×4 tangents ran past the bottom of presentation mode's panel)."""
    body = _step_body(trace, frame.tangent_step, frame.k, bool(frame.hidden), elide)
    if elide:
        names = ", ".join(n for n in order if n in frame.grads)
        lines = labels.esc(TANGENTS_SO_FAR.format(names or "none"))
    else:
        lines = "<br/>".join(labels.esc(t) for t in tangent_lines(frame, order))
    body.append(labels.h_para(lines, colours.TANGENT))
    return body


def edge_label(
    s: ForwardStep, hidden: frozenset[str] = frozenset(), short: bool = False
) -> str:
    """The label on a forward-mode step's edge: its local Jacobian, then ``J · t = share``;
    what a quiz hides (``hidden``: :class:`gui.model.quiz.Hidden` values) is ``?``;
    ``short``: tensors as :func:`gui.model.labels.short_tensor` writes them."""
    jac = s.jacobian(limit=labels.LABEL_MAX_ENTRIES)
    head = f"∂{s.consumer}/∂{s.operand}"
    t, out = labels.label_tensor(s.tangent, short), labels.label_tensor(s.jvp, short)
    if hidden & {"vjp", "accumulated"}:
        out = "?"
    if "jacobian" in hidden and jac is not None:
        return f"{head} = ?\nJ · {t} = {out}"
    if jac is None:
        return f"{head} ({fmt_shape(s.tangent.shape)} → {fmt_shape(s.jvp.shape)})\nJ · {t} = {out}"
    return f"{labels.equals_matrix(head, labels.label_matrix(jac, short))}\nJ · {t} = {out}"


def _step_body(
    trace: ForwardTrace, s: ForwardStep | None, k: int, asked: bool = False,
    elide: bool = False,
) -> list[str]:
    n = len(trace.steps)
    if s is None:
        tangents = trace.inputs.items()
        inputs = ", ".join(f"{x} = {labels.label_tensor(u, elide)}" for x, u in tangents)
        return [
            labels.h_heading(f"Forward mode: {n} edge steps"),
            labels.h_para("tangents u on the inputs: " + labels.esc(inputs or "none"),
                          colours.TANGENT),
            labels.h_para("Each edge multiplies its operand's tangent by the local Jacobian "
                          "(J·u); a node sums what its operands send.", colours.TEXT_MUTED),
        ]
    head = labels.h_heading(labels.esc(f"Forward step {k} of {n}: {s.operand} → {s.consumer}"))
    if asked:
        return [head]
    jac = s.jacobian(limit=labels.LABEL_MAX_ENTRIES)
    jtext = labels.label_matrix(jac, elide) if jac is not None else "(too large to print)"
    t, jvp = labels.label_tensor(s.tangent, elide), labels.label_tensor(s.jvp, elide)
    before = "0" if s.before is None else labels.label_tensor(s.before, elide)
    after = labels.label_tensor(s.accumulated, elide)
    return [
        head,
        labels.h_para(labels.esc(f"∂{s.consumer}/∂{s.operand} = {jtext}"), colours.JACOBIAN),
        labels.h_para(labels.esc(f"J · tan {s.operand} = J · {t} = {jvp}"), colours.TANGENT,
                      bold=True),
        labels.h_para(labels.esc(f"tan {s.consumer}: {before} → {after}"), colours.TANGENT),
    ]


def comparison_text(counts: PassCounts) -> str:
    """The cost argument in one paragraph, with both counts."""
    return (
        f"Forward passes: {counts.forward_passes}   ·   reverse passes: "
        f"{counts.reverse_passes}\n{counts.words()}"
    )


def tangent_text(a: np.ndarray) -> str:
    """A tangent as the editor shows it (a number or a nested list)."""
    return json.dumps(np.asarray(a).tolist())
