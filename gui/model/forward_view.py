"""Forward mode, written up (no Qt): one edge of a forward-mode pass and the cost comparison.

The forward-mode panel shows :func:`forward_step_html` for the step it is at and
:func:`tangent_lines` for every node's tangent so far; exporters can render the
same text headless. Position ``k`` (0..n) means the first ``k`` edges have run.
"""

from __future__ import annotations

import json

import numpy as np

from engine.forward_mode import ForwardTrace, PassCounts

from . import colours, labels


def tangents_at(trace: ForwardTrace, k: int) -> dict[str, np.ndarray]:
    """Every node's tangent after the first ``k`` steps (inputs from the start)."""
    out = dict(trace.inputs)
    for s in trace.steps[: max(0, k)]:
        out[s.consumer] = s.accumulated
    return out


def tangent_lines(trace: ForwardTrace, k: int, order: list[str]) -> list[str]:
    """``tan name = value`` for each node with a tangent so far, in forward order."""
    tans = tangents_at(trace, k)
    return [f"tan {n} = {labels.inline_tensor(tans[n])}" for n in order if n in tans]


def forward_step_html(trace: ForwardTrace, k: int, order: list[str], base_pt: float = 12.0) -> str:
    """Step ``k`` (1-based) as ``∂c/∂x = J``, ``J · tan x = share``, ``tan c: before → after``,
    then every node's tangent so far (``k`` 0: the inputs' tangents and what happens)."""
    body = _step_body(trace, k)
    lines = "<br/>".join(labels.esc(t) for t in tangent_lines(trace, k, order))
    body.append(labels.h_para(lines, colours.TANGENT))
    return labels.h_document("".join(body), base_pt)


def _step_body(trace: ForwardTrace, k: int) -> list[str]:
    n = len(trace.steps)
    body = []
    if k <= 0 or not n:
        inputs = ", ".join(f"{x} = {labels.inline_tensor(u)}" for x, u in trace.inputs.items())
        body.append(labels.h_para(f"Forward mode: {n} edge steps", bold=True, size="115%"))
        body.append(
            labels.h_para(
                "tangents u on the inputs: " + labels.esc(inputs or "none"), colours.TANGENT
            )
        )
        body.append(
            labels.h_para(
                "Each edge multiplies its operand's tangent by the local "
                "Jacobian (J·u); a node sums what its operands send.",
                colours.TEXT_MUTED,
            )
        )
        return body
    s = trace.steps[min(k, n) - 1]
    body.append(
        labels.h_para(
            f"Forward step {min(k, n)} of {n}: {s.operand} → {s.consumer}", bold=True, size="115%"
        )
    )
    jac = s.jacobian(limit=labels.LABEL_MAX_ENTRIES)
    jtext = labels.matrix_text(jac) if jac is not None else "(too large to print)"
    body.append(
        labels.h_para(labels.esc(f"∂{s.consumer}/∂{s.operand} = {jtext}"), colours.JACOBIAN)
    )
    body.append(
        labels.h_para(
            labels.esc(
                f"J · tan {s.operand} = J · {labels.inline_tensor(s.tangent)} = "
                f"{labels.inline_tensor(s.jvp)}"
            ),
            colours.TANGENT,
            bold=True,
        )
    )
    before = "0" if s.before is None else labels.inline_tensor(s.before)
    body.append(
        labels.h_para(
            labels.esc(f"tan {s.consumer}: {before} → {labels.inline_tensor(s.accumulated)}"),
            colours.TANGENT,
        )
    )
    return body


def comparison_text(counts: PassCounts) -> str:
    """The cost argument in one paragraph, with both counts."""
    return (
        f"Forward passes: {counts.forward_passes}   ·   reverse passes: "
        f"{counts.reverse_passes}\n{counts.words()}"
    )


def tangent_text(a: np.ndarray) -> str:
    """A tangent as the editor shows it (a number or a nested list)."""
    return json.dumps(np.asarray(a).tolist())
