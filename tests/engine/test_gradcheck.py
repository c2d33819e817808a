"""Gradient check: engine gradients against central finite differences."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine import gradcheck
from engine.errors import GraphError
from engine.examples import list_examples
from engine.fileformat import load
from engine.gradcheck import Status, check_graph, check_node, step_for
from engine.graph import Graph
from engine.ops import OPS
from support import seed2_graph


@pytest.mark.parametrize("path", [p for p, _ in list_examples()], ids=lambda p: p.stem)
def test_every_example_agrees_to_1e6(path):
    gf = load(path)
    result = check_graph(gf.graph, gf.output, gf.gradient)
    assert result.elements and result.passed, result.summary()
    assert max(e.rel_error for e in result.elements) <= 1e-6
    assert not result.kinks


def test_seed2_numbers_are_the_seeds():
    result = check_graph(seed2_graph(), "y", [0.1, 0.2, 0.3])
    got = {e.node: (e.analytic, e.numeric) for e in result.elements}
    for leaf, want in (("x1", 1.1), ("x2", 1.4), ("x3", 1.0)):
        assert got[leaf][0] == pytest.approx(want, abs=1e-12)
        assert got[leaf][1] == pytest.approx(want, rel=1e-8)


def relu_graph(values):
    g = Graph()
    g.add_node("x", "input", value=values)
    g.add_node("r", "relu", ["x"])
    g.add_node("s", "sum", ["r"])
    return g


def test_relu_at_zero_is_flagged_not_failed_silently():
    result = check_graph(relu_graph([0.0, 1.0, -2.0]), "s")
    statuses = [e.status for e in result.elements]
    assert statuses == [Status.KINK, Status.OK, Status.OK]
    assert "left" in result.elements[0].note
    assert [k.node for k in result.kinks] == ["r"]
    assert "relu at 0" in result.summary()
    assert not result.passed


def test_relu_away_from_zero_passes():
    result = check_graph(relu_graph([0.5, 1.0, -2.0]), "s")
    assert result.passed and not result.kinks


def test_a_kink_within_the_step_is_caught_by_the_one_sided_slopes():
    # not exactly 0, so the op table's kink list says nothing; the slopes still differ
    result = check_graph(relu_graph([1e-9]), "s")
    assert not result.kinks
    assert result.elements[0].status is Status.KINK


def test_a_wrong_backward_rule_is_a_mismatch(monkeypatch):
    wrong = dataclasses.replace(OPS["sin"], vjp=lambda i, g, xs, out, attrs: g * np.sin(xs[0]))
    monkeypatch.setitem(OPS, "sin", wrong)
    g = Graph()
    g.add_node("x", "input", value=[0.3, 1.2])
    g.add_node("y", "sin", ["x"])
    g.add_node("s", "sum", ["y"])
    assert {e.status for e in check_graph(g, "s").elements} == {Status.MISMATCH}
    assert {e.status for e in check_node(g, "y").elements} == {Status.MISMATCH}


def test_node_check_uses_the_upstream_gradient():
    g = seed2_graph()
    result = check_node(g, "y1", upstream=np.array(0.1))
    assert [e.node for e in result.elements] == ["a", "x3"]
    assert [e.analytic for e in result.elements] == pytest.approx([0.3, 0.2])
    assert result.passed
    square = Graph()
    square.add_node("x", "input", value=3.0)
    square.add_node("z", "mul", ["x", "x"])
    names = [e.node for e in check_node(square, "z").elements]
    assert names == ["x (operand 0)", "x (operand 1)"]


def test_leaf_and_bad_requests_name_the_node():
    g = seed2_graph()
    with pytest.raises(GraphError, match="'x1'.*leaf"):
        check_node(g, "x1")
    with pytest.raises(GraphError, match="'y'"):
        check_graph(g, "y")  # non-scalar output without v
    with pytest.raises(GraphError, match="'a'"):
        check_graph(g, "y", [1, 1, 1], wrt=["a"])


def test_step_is_per_dtype_and_stated():
    assert step_for(np.float64) == pytest.approx(6.06e-6, rel=1e-2)
    assert step_for(np.float32) == pytest.approx(4.92e-3, rel=1e-2)
    assert "6.1e-06" in check_graph(seed2_graph(), "y", [1, 1, 1]).step


def test_element_budget_is_reported(monkeypatch):
    monkeypatch.setattr(gradcheck, "MAX_ELEMENTS", 2)
    g = Graph()
    g.add_node("x", "input", value=np.arange(5.0))
    g.add_node("s", "sum", ["x"])
    result = check_graph(g, "s")
    assert len(result.elements) == 2 and result.skipped == 3
    assert "3 more not checked" in result.summary()
