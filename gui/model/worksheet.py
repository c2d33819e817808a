"""The worksheet variant of the handout: each step as a question, the answers at the back.

A question gives what a student needs (the upstream gradient arriving at the
consumer, the local Jacobian, what the operand held before) and leaves the
step's two results blank: the vector-Jacobian product and the operand's
accumulated gradient. The answer key states exactly those two, in the same
words (``vjp = ...``, ``x3.grad = ...``), so a reader and a test can match them.
No Qt: the boxes are bordered table cells of Qt's rich text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.autodiff import Forward
from engine.groups import GroupStep, PlayStep
from engine.trace import Step

from . import colours, labels
from .group_view import group_jacobian_text, group_title, group_vectors

#: Points on paper: a worksheet's text, and its sub- and superscripts (at least 10 pt).
WORKSHEET_PT, WORKSHEET_SUB_PT = 12.0, 10.0

#: An empty box to write an answer in.
BLANK = (
    '<table border="1" cellspacing="0" cellpadding="10" style="border-style:solid;'
    f' border-color:{colours.TEXT}"><tr><td width="260">&nbsp;</td></tr></table>'
)


def operand_grad_name(graph: Any, node: str) -> str:
    """``x3.grad`` for a leaf, ``grad y1`` otherwise (as the chain-rule panel says)."""
    return labels.grad_name(node, labels.node_is_leaf(graph, node))


def answer_lines(step: PlayStep, k: int, graph: Any) -> list[str]:
    """The answer to step ``k``: ``Step 3 (y2 → x3): vjp = 0.2``, then the operand's gradient
    (a collapsed group's step: its inputs' vjp, then each input's gradient)."""
    if isinstance(step, GroupStep):
        _row, out = group_vectors(step)
        lines = [
            f"Step {k} ({step.group.title or step.group.id}): vjp = {labels.inline_tensor(out)}"
        ]
        lines += [
            f"{operand_grad_name(graph, x)} = {labels.inline_tensor(step.accumulated[x])}"
            for x in step.inputs
            if x in step.accumulated
        ]
        return lines
    name = operand_grad_name(graph, step.operand)
    return [
        f"Step {k} ({step.consumer} → {step.operand}): vjp = {labels.inline_tensor(step.vjp)}",
        f"{name} = {labels.inline_tensor(step.accumulated)}",
    ]


def answer_key_html(answers: Sequence[Sequence[str]], base_pt: float) -> str:
    """A page of the answer key at ``base_pt``: its heading, then each step's
    :func:`answer_lines` on one paragraph (wrapped where it must be)."""
    rows = "".join(labels.h_para("; ".join(labels.esc(t) for t in lines)) for lines in answers)
    heading = labels.h_heading("Answer key", f"{base_pt * 1.5:.0f}pt")
    return labels.h_document(heading + rows, base_pt)


def question_html(
    step: Step, k: int, n: int, graph: Any, base_pt: float, narrow: labels.Narrow = labels.Narrow.NO
) -> str:
    """Step ``k`` of ``n`` as a question: the givens, then ``vjp =`` and ``grad =`` blank.

    ``narrow`` (a page too narrow for the givens on one line: xor_mlp's 16-number rows,
    attention's words on its Jacobian) gives the upstream row and the Jacobian a line
    each, the words on a large Jacobian a paragraph; :attr:`~labels.Narrow.WRAPPED` also
    wraps a longer row onto lines of :data:`labels.WRAP_NUMBERS`, and
    :attr:`~labels.Narrow.SPLIT` then puts each given's numbers under its name. Every
    number is kept (a student needs them all)."""
    c, o = step.consumer, step.operand
    name = operand_grad_name(graph, o)
    before = "0 (nothing yet)" if step.before is None else labels.inline_tensor(step.before)
    jac = labels.small_jacobian(step, labels.PANEL_MAX_ENTRIES)
    wrap = labels.WRAP_NUMBERS if narrow in (labels.Narrow.WRAPPED, labels.Narrow.SPLIT) else 0
    upstream = [
        f"upstream ∂A/∂{labels.h_name(c)} =",
        labels.h_numbers(step.upstream, colours.GRAD_TEXT, as_row=True, wrap=wrap),
    ]
    j_head = f"J = ∂{labels.h_name(c)}/∂{labels.h_name(o)} ="
    if jac is not None:
        jacobian = [j_head, labels.h_jacobian(jac, wrap)]
    else:
        jacobian = [j_head, labels.h_color(labels.esc(step.structure()), colours.JACOBIAN)]
    if jac is None and narrow:  # the words on a large Jacobian wrap
        j_line = [labels.h_para(f"{jacobian[0]} {jacobian[1]}")]
    elif narrow is labels.Narrow.SPLIT:
        j_line = _under_name(jacobian)
    else:
        j_line = [labels.h_equation(jacobian)]
    if narrow is labels.Narrow.SPLIT:
        givens = [*_under_name(upstream), *j_line]
    elif narrow:
        givens = [labels.h_equation(upstream), *j_line]
    else:
        givens = [labels.h_equation([*upstream, f"&nbsp;&nbsp;{j_head}", jacobian[1]])]
    parts = [
        labels.h_heading(f"Step {k} of {n}: from {labels.h_name(c)} back to {labels.h_name(o)}"),
        *givens,
        labels.h_para(f"{labels.esc(name)} before this step: {labels.esc(before)}"),
        labels.h_equation(["vjp = upstream · J =", BLANK]),
        labels.h_equation([f"{labels.esc(name)} = before + vjp =", BLANK]),
    ]
    return labels.h_document("".join(parts), base_pt, WORKSHEET_SUB_PT)


def _under_name(cells: list[str]) -> list[str]:
    """A given's name, then its numbers a line below, indented."""
    return [labels.h_para(cells[0]), labels.h_equation(["&nbsp;" * 4, cells[1]])]


def step_question_html(
    step: PlayStep, k: int, n: int, graph: Any, fwd: Forward, base_pt: float,
    narrow: labels.Narrow = labels.Narrow.NO,
) -> str:
    """Step ``k`` as a question, an edge's step or a collapsed group's (whose paragraphs
    wrap: ``narrow`` changes nothing there)."""
    if isinstance(step, GroupStep):
        return group_question_html(step, k, n, graph, fwd, base_pt)
    return question_html(step, k, n, graph, base_pt, narrow)


def group_question_html(
    step: GroupStep, k: int, n: int, graph: Any, fwd: Forward, base_pt: float
) -> str:
    """A collapsed group's step as a question: the gradient at its outputs and its
    Jacobian given, its inputs' vjp and gradients blank."""
    row, _out = group_vectors(step)
    parts = [
        labels.h_heading(f"Step {k} of {n}: {group_title(step)} as one step"),
        labels.h_para(
            labels.esc(f"upstream at {', '.join(step.outputs)} = {labels.flat_row(row)}")
        ),
        labels.h_para(  # on paper: no tab to look in
            labels.esc(group_jacobian_text(graph, fwd, step, interactive=False)), colours.JACOBIAN
        ),
        labels.h_equation(["vjp = upstream · J =", BLANK]),
    ]
    for x in step.inputs:
        if x in step.accumulated:
            name = labels.esc(operand_grad_name(graph, x))
            parts.append(labels.h_equation([f"{name} = before + vjp =", BLANK]))
    return labels.h_document("".join(parts), base_pt, WORKSHEET_SUB_PT)
