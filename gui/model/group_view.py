"""A collapsed group's one backward step, written up (no Qt): its local Jacobian, the
gradient arriving at its outputs times that Jacobian, and what its inputs hold after."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from engine.autodiff import Forward
from engine.graph import Graph
from engine.groups import GroupStep, no_grad_inputs, step_jacobian

from . import colours, labels
from .formatting import count


def group_title(step: GroupStep) -> str:
    """How a step heading names the group (escaped): its title as the user wrote it
    (``layer 1``); untitled, its id, said to be a group unless the id says so already
    (``group g2``, but ``group`` rather than ``group group``)."""
    g = step.group
    if g.title:
        return labels.esc(g.title)
    said = g.id.lower().startswith("group")
    return labels.esc(g.id) if said else f"group {labels.esc(g.id)}"


def group_vectors(step: GroupStep) -> tuple[np.ndarray, np.ndarray]:
    """The step as one edge's: the gradient at the group's outputs as one row (each
    output flattened, in order) and the vjps at its inputs as one vector."""
    return _joined(step.upstream, step.outputs), _joined(step.vjps, step.inputs)


def group_shape(step: GroupStep) -> tuple[int, int]:
    """The shape of the group step's Jacobian: the sizes of :func:`group_vectors`, counted
    without joining them."""
    return _size(step.upstream, step.outputs), _size(step.vjps, step.inputs)


def _size(parts: Mapping[str, np.ndarray], order: Sequence[str]) -> int:
    return sum(int(np.size(parts[x])) for x in order if x in parts)


def _joined(parts: Mapping[str, np.ndarray], order: Sequence[str]) -> np.ndarray:
    flat = [np.ravel(parts[x]) for x in order if x in parts]
    return np.concatenate(flat) if flat else np.zeros(0)


def group_jacobian_text(
    graph: Graph, fwd: Forward, step: GroupStep, interactive: bool = True, elide: bool = False
) -> str:
    """``J = ∂(outputs)/∂(inputs) = [[...]]`` of a collapsed group (plain text). Too
    large to print, it says where the window shows it or (not ``interactive``: a
    picture or a page has no tabs) its shape; ``elide`` (a shortened write-up, as
    :func:`labels.step_html`'s): its shape, however small."""
    outs, ins = ", ".join(step.outputs), ", ".join(step.inputs)
    rows, columns = group_shape(step)
    if elide:
        return f"J = ∂({outs})/∂({ins}): {rows}×{columns}"
    jac = step_jacobian(graph, fwd, step, labels.LABEL_MAX_ENTRIES * 4)
    where = "see the Jacobian heatmap tab" if interactive else f"{rows}×{columns}"
    jtext = labels.matrix_text(jac) if jac is not None else f"(too large to print: {where})"
    return f"J = ∂({outs})/∂({ins}) = {jtext}"


def group_step_html(
    graph: Graph,
    fwd: Forward,
    step: GroupStep,
    k: int,
    n: int,
    interactive: bool = True,
    elide: bool = False,
) -> str:
    """``upstream · J_group = vjps`` for step ``k`` of ``n`` (HTML paragraphs);
    ``interactive``: the window's, which says how to play the group's edges (an export
    cannot expand it, and says only how many there are); ``elide``: J as its shape and
    a vector of more than :data:`labels.ELIDED_MAX_VECTOR` numbers summarised (a captured
    module's J of a few dozen columns ran presentation mode's write-up past the bottom
    of the screen)."""
    how = "; expand it to play them" if interactive else ""
    body = [labels.h_heading(
        f"Step {k} of {n}: {group_title(step)} as one step"
        f" ({count(step.edges, 'edge')} inside{how})"
    )]
    jtext = group_jacobian_text(graph, fwd, step, interactive, elide)
    body.append(labels.h_para(labels.esc(jtext), colours.JACOBIAN))
    if frozen := no_grad_inputs(graph, fwd, step.group):
        note = f"columns of {', '.join(frozen)}: true partials, but no gradient flows there"
        body.append(labels.h_para(labels.esc(note), colours.JACOBIAN))
    row, out = group_vectors(step)
    shown = labels.ELIDED_MAX_VECTOR if elide else labels.LABEL_MAX_ENTRIES
    body.append(
        labels.h_para(
            labels.esc(f"{labels.flat_row(row, shown)} · J = {labels.inline_tensor(out, shown)}"),
            colours.GRAD_TEXT,
            bold=True,
        )
    )
    lines = []
    for x in step.inputs:
        if x in step.accumulated:
            before = step.before.get(x)
            was = "0" if before is None else labels.inline_tensor(before, shown)
            lines.append(
                f"{labels.grad_name(x, graph.nodes[x].is_leaf)}: {was} → "
                f"{labels.inline_tensor(step.accumulated[x], shown)}"
            )
    body.append(labels.h_para("<br/>".join(labels.esc(t) for t in lines), colours.GRAD_TEXT))
    return "".join(body)
