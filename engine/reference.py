"""The backward pass, written to be read: micrograd's loop over the engine's op table.

:func:`engine.autodiff.backward` is the one the app runs; it is fast (slot programs,
steps recorded lazily, sums made in place) and so harder to follow. This is the same
algorithm with nothing but the algorithm, and a test holds both to the same steps, in
the same order, with the same bits (``tests/engine/test_random_graphs.py``):

1. Visit the nodes in reverse topological order (an output comes after its operands,
   so walking back, every consumer of a node is visited before the node itself).
2. A node that holds a gradient ``g`` and requires grad sends ``vᵀJ`` to each operand
   that requires grad: one call of its op's VJP per edge.
3. An operand reached by several edges sums what they send (``grad += vjp``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .autodiff import Forward, seed_gradient
from .graph import Graph
from .ops import LEAF_OPS, OPS
from .trace import accumulate


@dataclass
class Step:
    """One edge: ``consumer`` sent ``vjp`` to its operand ``operand`` (port ``index``)."""

    consumer: str
    operand: str
    index: int
    upstream: np.ndarray  # the consumer's gradient when it sent
    vjp: np.ndarray  # what it sent: upstreamᵀ · (the local Jacobian)
    before: np.ndarray | None  # the operand's gradient before (None: nothing yet)
    after: np.ndarray  # and after grad += vjp


def backward(
    graph: Graph, fwd: Forward, output: str, gradient: Any = None
) -> tuple[list[Step], dict[str, np.ndarray]]:
    """``output.backward(gradient)``: every step in the order it ran, and each gradient."""
    grads = {output: seed_gradient(graph, fwd, output, gradient)}
    steps: list[Step] = []
    with np.errstate(all="ignore"):  # inf and NaN flow on, as in PyTorch
        for nid in reversed(graph.topological_order()):
            node = graph.nodes[nid]
            g = grads.get(nid)
            if g is None or node.op in LEAF_OPS or nid not in fwd.requires_grad:
                continue
            xs = [fwd.values[s] for s in node.inputs if s is not None]  # all: it has a value
            for i, src in enumerate(node.inputs):
                if src is None or src not in fwd.requires_grad:
                    continue  # a const, or computed from consts only: no gradient flows
                vjp = np.asarray(OPS[node.op].vjp(i, g, xs, fwd.values[nid], node.attrs), float)
                before = grads.get(src)
                after = vjp if before is None else accumulate(before, vjp)
                grads[src] = after
                steps.append(Step(nid, src, i, g, vjp, before, after))
    return steps, grads
