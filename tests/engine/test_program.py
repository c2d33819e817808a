"""The compiled program: made once per structural edit (never per run), following
every kind of edit, and giving what a walk over the graph itself gives."""

from __future__ import annotations

import numpy as np
import pytest

from engine import program as program_module
from engine.autodiff import backward, forward
from engine.errors import ArityError
from engine.graph import Graph
from engine.program import program_of


def small_graph() -> Graph:
    g = Graph()
    g.add_node("x", "input", value=np.array([0.5, -1.0]))
    g.add_node("w", "input", value=np.array([2.0, 3.0]))
    g.add_node("m", "mul", ["x", "w"])
    g.add_node("t", "tanh", ["m"])
    g.add_node("y", "sum", ["t"])
    return g


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[Graph]:
    """Every graph compiled from here on, once per compile."""
    seen: list[Graph] = []
    real = program_module.compile_graph

    def counting(graph: Graph) -> program_module.Program:
        seen.append(graph)
        return real(graph)

    monkeypatch.setattr(program_module, "compile_graph", counting)
    return seen


def test_runs_reuse_one_program_until_the_structure_changes(compiles: list[Graph]) -> None:
    g = small_graph()
    for _ in range(3):
        backward(g, forward(g), "y")
    assert len(compiles) == 1
    g.set_value("x", [1.0, 2.0])  # values, attributes and requires_grad are read per run
    g.set_requires_grad("w", False)
    g.add_node("s", "sum", ["x"], attrs={"keepdim": True})
    g.set_attrs("s", {"keepdim": False})
    assert len(compiles) == 1
    fwd = forward(g)
    assert len(compiles) == 2
    assert fwd.values["y"] == pytest.approx(np.tanh([2.0, 6.0]).sum())
    assert fwd.values["s"].shape == ()  # the attribute set after the last compile
    assert backward(g, fwd, "y").grads["w"] is None
    assert len(compiles) == 2


def edits() -> dict[str, object]:
    def add(g: Graph) -> None:
        g.add_node("z", "neg", ["t"])

    def remove(g: Graph) -> None:
        g.remove_node("t")

    def restore(g: Graph) -> None:
        g.restore(g.remove_node("t"))

    def disconnect(g: Graph) -> None:
        g.disconnect("m", 1)

    def rename(g: Graph) -> None:
        g.rename("m", "product")

    return {f.__name__: f for f in (add, remove, restore, disconnect, rename)}


@pytest.mark.parametrize("edit", list(edits()))
def test_every_structural_edit_recompiles(edit: str) -> None:
    g = small_graph()
    before = program_of(g)
    forward(g)
    edits()[edit](g)
    after = program_of(g)
    assert after is not before and after is program_of(g)
    assert after.order == tuple(g.topological_order())
    fwd = forward(g)
    for s, node, _op, operands, count, problem in after.instructions:
        assert node is g.nodes[after.order[s]]
        if problem is None:
            assert [after.order[i] for i in operands] == node.inputs and count == len(operands)
    if edit == "disconnect":
        assert isinstance(fwd.errors["m"], ArityError)
        assert "y" not in fwd.values and "y" not in fwd.errors  # blocked, reported at m


def test_emptying_one_of_two_ports_an_operand_fills_recompiles() -> None:
    g = small_graph()
    g.disconnect("m", 1)
    g.connect("x", "m", 1)  # x * x
    assert forward(g).values["y"] == pytest.approx(np.tanh([0.25, 1.0]).sum())
    g.disconnect("m", 1)  # x still feeds port 0: no link goes, only the ports change
    assert isinstance(forward(g).errors["m"], ArityError)


def test_a_forward_from_before_an_edit_still_runs_backward() -> None:
    g = small_graph()
    stale = forward(g)
    g.add_node("z", "neg", ["x"])  # another program; the forward's values still hold
    trace = backward(g, stale, "y")
    fresh = backward(g, forward(g), "y")
    for n in ("x", "w", "m", "t", "y"):
        np.testing.assert_array_equal(trace.grads[n], fresh.grads[n])
    assert [(s.consumer, s.operand) for s in trace.steps] == [
        (s.consumer, s.operand) for s in fresh.steps
    ]


def test_steps_are_made_once_when_first_read() -> None:
    g = small_graph()
    trace = backward(g, forward(g), "y")
    assert trace.record is not None and len(trace) == 4  # counted without making them
    steps = trace.steps
    assert trace.record is None and trace.steps is steps
    assert [(s.consumer, s.operand, s.operand_index) for s in steps] == [
        ("y", "t", 0),
        ("t", "m", 0),
        ("m", "x", 0),
        ("m", "w", 1),
    ]
    assert steps[2].context is steps[3].context  # one context per consumer
