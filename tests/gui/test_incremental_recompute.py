"""An edit recomputes only what it reaches (``forward(graph, earlier, changed)`` and
``trace_after_edit``); random edit sequences must leave results equal, bit for bit,
to a fresh forward and backward of the same graph: values, errors, requires-grad
flags, the order, every gradient and every step's numbers.

Edits go through the commands and the undo stack, as the window's do, so the sets of
touched nodes the document passes on are the ones the product computes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fileformat import GraphFile
from engine.graph import Graph
from gui.commands import (
    AddNode,
    Connect,
    SetRequiresGrad,
    SetValue,
    delete_selection,
    push,
    set_output,
)
from gui.document import GraphDocument
from support import assert_results_fresh

OPS = ["add", "mul", "sub", "tanh", "exp", "sum", "neg", "relu", "stack", "mean"]
VALUES = st.one_of(
    st.floats(-3, 3, allow_nan=False, width=32),
    st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=2, max_size=2),
    st.just(float("inf")),
)


def start_graph() -> Graph:
    """Two branches into the output and one beside it: an edit may land in the
    output's cone or outside it."""
    g = Graph()
    g.add_node("x", "input", value=[0.5, -0.25])
    g.add_node("w", "input", value=[2.0, 3.0])
    g.add_node("c", "const", value=1.5)
    g.add_node("m", "mul", ["x", "w"])
    g.add_node("t", "tanh", ["m"])
    g.add_node("a", "add", ["t", "c"])
    g.add_node("y", "sum", ["a"])
    g.add_node("side", "exp", ["w"])
    return g


def edit(doc: GraphDocument, data: st.DataObject, kind: str, step: int) -> None:
    """One random edit of ``kind``; refused edits (a cycle, a taken port) change
    nothing, which is fine too."""
    ids = list(doc.graph.nodes)
    pick = st.sampled_from(ids) if ids else st.none()
    if kind == "add":
        op = data.draw(st.sampled_from(["input", "const", *OPS]))
        leaf = op in ("input", "const")
        nid = f"n{step}"
        push(doc, AddNode(doc, op, (0.0, 0.0), id=nid,
                          value=data.draw(VALUES) if leaf else None))
        if not leaf and ids:
            push(doc, Connect(doc, data.draw(pick), nid, 0))
    elif kind == "connect" and ids:
        push(doc, Connect(doc, data.draw(pick), data.draw(pick),
                          data.draw(st.integers(0, 1))))
    elif kind == "delete" and ids:
        edges = [(s, d, i) for d, n in doc.graph.nodes.items()
                 for i, s in enumerate(n.inputs) if s is not None]
        nodes = data.draw(st.lists(pick, max_size=2, unique=True))
        cut = data.draw(st.lists(st.sampled_from(edges), max_size=1)) if edges else []
        cmd = delete_selection(doc, nodes, cut)
        if cmd is not None:
            push(doc, cmd)
    elif kind == "value":
        leaves = [n for n, node in doc.graph.nodes.items() if node.is_leaf]
        if leaves:
            push(doc, SetValue(doc, data.draw(st.sampled_from(leaves)), data.draw(VALUES)))
    elif kind == "requires_grad":
        inputs = [n for n, node in doc.graph.nodes.items() if node.op == "input"]
        if inputs:
            nid = data.draw(st.sampled_from(inputs))
            push(doc, SetRequiresGrad(doc, nid, not doc.graph.nodes[nid].requires_grad))
    elif kind == "output" and ids:
        push(doc, set_output(doc, data.draw(pick)))
    elif kind == "backward_again":
        doc.backward_again()
    elif kind == "undo":
        doc.undo_stack.undo()
    elif kind == "redo":
        doc.undo_stack.redo()


KINDS = ["add", "connect", "delete", "value", "requires_grad", "output", "backward_again",
         "undo", "redo"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True, database=None)
@given(data=st.data(), kinds=st.lists(st.sampled_from(KINDS), min_size=5, max_size=25))
def test_random_edits_recompute_incrementally_to_the_bits_of_a_full_recompute(
        qapp: Any, data: st.DataObject, kinds: list[str]) -> None:  # noqa: ANN401
    doc = GraphDocument()
    doc.load(GraphFile(graph=start_graph(), output="y"), None)
    assert_results_fresh(doc)
    for step, kind in enumerate(kinds):
        edit(doc, data, kind, step)
        assert_results_fresh(doc)
    doc.undo_stack.setIndex(0)  # every edit undone, one by one
    assert_results_fresh(doc)
