"""The whole backward call as one product, ``vᵀ J``: what the end-to-end panel shows (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.autodiff import backward, end_to_end_jacobian
from engine.errors import GraphError
from engine.graph import Graph

from . import labels
from .results import Results

#: Below this estimate of :func:`work` the product is computed at once (a seed takes
#: microseconds, and a flash of "computing…" would only distract); above it, the GUI
#: computes it off the UI thread (a 4096-element output is 4096 backward passes).
INLINE_WORK = 200_000


class Computing:
    """What a panel gets while the product is computed off the UI thread."""


COMPUTING = Computing()


@dataclass(frozen=True)
class EndToEnd:
    """The whole backward call as one product: ``vᵀ J`` with ``J = ∂output/∂leaves``.

    ``jacobian`` (None when too large or unavailable) has the leaves' elements as
    columns, grouped leaf by leaf; ``vjp`` is what this single call contributes to
    each leaf (``.grad`` minus earlier calls), zeros where no gradient flows.
    """

    output: str
    objective: str
    gradient: np.ndarray
    leaves: tuple[str, ...]
    sizes: tuple[int, ...]
    jacobian: np.ndarray | None
    vjp: tuple[np.ndarray, ...]
    leaf_grads: dict[str, np.ndarray | None]
    accumulated: bool  # .grad includes earlier backward calls

    def html(self, heading: bool = True, elide: bool = False) -> str:
        """The product written out, as :func:`labels.end_to_end_html` writes it."""
        return labels.end_to_end_html(self.output, self.objective, self.leaves, self.jacobian,
                                      self.gradient, self.vjp, heading, elide)


def end_to_end(graph: Graph, results: Results, accumulated: bool) -> EndToEnd | None:
    """``vᵀ J`` for the results' backward call (None without one).

    ``accumulated``: the leaves' ``.grad`` includes earlier backward calls, so this
    call's share is computed again without them.
    """
    trace = results.trace
    if trace is None:
        return None
    fwd = results.forward
    leaves = tuple(trace.leaves)
    if trace.replayed:  # PyTorch ran it: only its steps replay
        from engine import captured  # loaded already: it made the trace

        assert isinstance(trace, captured.CapturedTrace)
        shapes = [captured.leaf_shape(trace, x) for x in leaves]
        jac = captured.end_to_end_jacobian(trace)
        grads: dict[str, np.ndarray | None] = {}
        for s in trace.steps:  # this call's share: the sum of what its steps delivered
            if s.operand in leaves:
                held = grads.get(s.operand)
                grads[s.operand] = s.vjp if held is None else held + s.vjp
    else:
        shapes = [fwd.values[x].shape for x in leaves]
        # seeded with ones and nothing accumulated: the trace's own pass is a row of J
        ones = not accumulated and bool(np.all(np.asarray(trace.gradient) == 1.0))
        try:
            jac = end_to_end_jacobian(graph, fwd, trace.output, list(leaves),
                                      seeded=trace.grads if ones else None)
        except GraphError:
            jac = None
        grads = trace.leaf_grads
        if accumulated:
            grads = backward(graph, fwd, trace.output, trace.gradient).leaf_grads
    sizes = tuple(int(np.prod(shape)) for shape in shapes)
    vjp = tuple(
        np.zeros(shape) if grads.get(x) is None else np.asarray(grads[x])
        for x, shape in zip(leaves, shapes, strict=True)
    )
    return EndToEnd(
        output=trace.output,
        objective=labels.objective_name(trace.output, trace.gradient),
        gradient=trace.gradient,
        leaves=leaves,
        sizes=sizes,
        jacobian=jac,
        vjp=vjp,
        leaf_grads=dict(trace.leaf_grads),
        accumulated=accumulated,
    )


def work(results: Results) -> int:
    """A cheap estimate of :func:`end_to_end`'s cost: one backward pass per output
    element, each touching every value of the forward pass (a replayed PyTorch trace
    only sums its recorded steps: no work)."""
    trace = results.trace
    if trace is None or trace.replayed:
        return 0
    values = results.forward.values
    rows = int(np.size(values[trace.output])) if trace.output in values else 0
    return rows * sum(int(np.size(v)) for v in values.values())
