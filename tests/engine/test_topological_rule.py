"""The engine's one topological order (engine.links.Links.generations): its tie rule, pinned
on a small graph, and every walker in order reading it: the forward, the backward steps, the
file loader and the PyTorch export."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from test_random_graphs import random_graph

from engine.autodiff import backward, forward
from engine.fileformat import loads
from engine.graph import Graph
from engine.links import topological_sort
from engine.pytorch_export import export_order, export_script
from engine.pytorch_import import import_code

#: a, b leaves; c = a + b, d = -b, e = c * d, f = -a (created in this order).
OPERANDS: dict[str, list[str | None]] = {
    "a": [],
    "b": [],
    "c": ["a", "b"],
    "d": ["b"],
    "e": ["c", "d"],
    "f": ["a"],
}
OPS = {"a": "input", "b": "input", "c": "add", "d": "neg", "e": "mul", "f": "neg"}


def _graph(order: list[str]) -> Graph:
    g = Graph()
    for nid in order:
        value = np.array([1.0, 2.0]) if OPS[nid] == "input" else None
        g.add_node(nid, OPS[nid], OPERANDS[nid], value=value)
    return g


def test_the_tie_rule_is_the_order_nodes_become_ready() -> None:
    """Generations of Kahn's algorithm: a and b (no operands, in creation order); then, a's
    consumers scanned first, f (ready once a is done) before c and d (ready once b is);
    then e. Not creation order (a b c d e f): f's generation comes first."""
    g = _graph(list(OPERANDS))
    assert g.topological_order() == ["a", "b", "f", "c", "d", "e"]
    assert topological_sort(OPERANDS) == g.topological_order()
    fwd = forward(g)
    steps = [(s.consumer, s.operand) for s in backward(g, fwd, "e", np.ones(2)).steps]
    assert steps == [("e", "c"), ("e", "d"), ("d", "b"), ("c", "a"), ("c", "b")]


def test_a_file_in_any_node_order_loads_in_the_rules_order() -> None:
    """The loader adds nodes in the rule's order over the file's order (operands first),
    so the steps are the rule's; the file's node order is kept for saving."""
    order = ["e", "d", "c", "b", "a", "f"]
    doc = {
        "format": "backprop-studio-graph",
        "version": 1,
        "nodes": [
            {"id": n, "op": OPS[n], "inputs": OPERANDS[n]}
            | ({"value": [1.0, 2.0], "requires_grad": True} if OPS[n] == "input" else {})
            for n in order
        ],
    }
    gf = loads(json.dumps(doc))
    assert list(gf.graph.nodes) == order
    expected = ["b", "a", "d", "c", "f", "e"]
    assert topological_sort({n: OPERANDS[n] for n in order}) == expected
    assert gf.graph.topological_order() == expected
    # the export cannot write e before its operands: it writes the rule's order
    assert export_order(gf.graph) == expected


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=random_graph(max_ops=10))
def test_a_graph_rebuilt_in_its_own_order_keeps_its_order_and_steps(case) -> None:
    """The rule is a fixed point: nodes added in the topological order give the same
    order, so a saved and reloaded (or exported and imported) graph takes the same steps."""
    graph, _specs, output, v = case
    again = import_code(export_script(graph, output, v)).graph
    rebuilt = Graph()
    for nid in graph.topological_order():
        n = graph.nodes[nid]
        rebuilt.add_node(nid, n.op, n.inputs, n.attrs, n.value, n.requires_grad)
    for other in (again, rebuilt):
        assert other.topological_order() == graph.topological_order()
        steps = backward(other, forward(other), output, v).steps
        theirs = backward(graph, forward(graph), output, v).steps
        assert [(s.consumer, s.operand_index) for s in steps] == [
            (s.consumer, s.operand_index) for s in theirs
        ]
