"""Leaf and step order follow creation (file) order, never names: renaming a leaf
must not move its Jacobian column or reorder the backward steps (issue 9)."""

from __future__ import annotations

import numpy as np

from engine.autodiff import backward, forward
from support import seed2_graph

V = np.array([0.1, 0.2, 0.3])


def _pass(graph):  # noqa: ANN001, ANN202
    fwd = forward(graph)
    trace = backward(graph, fwd, "y", V)
    steps = [(s.consumer, s.operand, s.operand_index) for s in trace.steps]
    return fwd.order, steps, list(trace.leaf_grads)


def test_renaming_a_leaf_keeps_every_order() -> None:
    graph = seed2_graph()
    order, steps, leaves = _pass(graph)
    graph.rename("x1", "z1")  # z sorts after x2, x3: a name-based order would move it
    new = {"x1": "z1"}
    order2, steps2, leaves2 = _pass(graph)
    assert order2 == [new.get(n, n) for n in order]
    assert steps2 == [(new.get(c, c), new.get(o, o), i) for c, o, i in steps]
    assert leaves2 == [new.get(n, n) for n in leaves] == ["z1", "x2", "x3"]
