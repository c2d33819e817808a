"""The player's words: edge labels and chain-rule text, pure functions of engine steps.

No widgets here: these are the strings a student reads on the canvas and in the
panels, checked against the seed tutorials' numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.graph import Graph
from gui.model import labels
from support import seed2_graph, seed3_graph


def trace_of(g: Graph, output: str, gradient=None):  # noqa: ANN001, ANN201 - test helper
    fwd = forward(g)
    return backward(g, fwd, output, gradient)


@pytest.fixture
def seed2():  # noqa: ANN201 - fixture
    return trace_of(seed2_graph(), "y", [0.1, 0.2, 0.3])


def step(trace, consumer: str, operand: str):  # noqa: ANN001, ANN201 - test helper
    return next(s for s in trace.steps if s.consumer == consumer and s.operand == operand)


def test_stack_edge_label_shows_column_jacobian_and_vjp(seed2) -> None:  # noqa: ANN001
    text = labels.edge_label(step(seed2, "y", "y1"))
    first, second = text.split("\n")
    assert first == "∂y/∂y1 = [1, 0, 0]ᵀ"
    assert second == "[0.1, 0.2, 0.3] · J = 0.1"
    assert labels.edge_label(step(seed2, "y", "y3")).startswith("∂y/∂y3 = [0, 0, 1]ᵀ")


def test_scalar_edge_label_substitutes_the_number(seed2) -> None:  # noqa: ANN001
    assert labels.edge_label(step(seed2, "y1", "a")) == "∂y1/∂a = 3\n0.1 · 3 = 0.3"
    assert labels.edge_label(step(seed2, "a", "x1")) == "∂a/∂x1 = 2\n0.3 · 2 = 0.6"


def test_square_matrix_label_is_multiline() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0, 3.0])
    g.add_node("two", "const", value=2.0)
    g.add_node("y", "pow", ["x", "two"])
    g.add_node("z", "sum", ["y"])
    t = trace_of(g, "z")
    assert labels.edge_label(step(t, "z", "y")) == "∂z/∂y = [1, 1, 1]\n1 · J = [1, 1, 1]"
    text = labels.edge_label(step(t, "y", "x"))
    assert text.splitlines() == ["∂y/∂x =", "[[2, 0, 0],", " [0, 4, 0],", " [0, 0, 6]]",
                                 "[1, 1, 1] · J = [2, 4, 6]"]
    assert t.leaf_grads["x"].tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize(
    ("op", "expect"),
    [("sum", "sum over all elements: all ones"), ("mean", "mean over all elements: 1/n = 1/100")],
)
def test_large_reductions_are_described_in_words(op: str, expect: str) -> None:
    g = Graph()
    g.add_node("x", "input", value=np.arange(100.0))
    g.add_node("s", op, ["x"])
    s = trace_of(g, "s").steps[0]
    text = labels.edge_label(s)
    assert expect in text.splitlines()[0]
    assert text.splitlines()[0].startswith("∂s/∂x (scalar → 100)")
    # the product line summarises what is too long to print
    assert text.splitlines()[1].startswith("1 · J = 100  min")


def test_broadcast_edge_says_summed_over_dim_0() -> None:
    g = Graph()
    g.add_node("W", "input", value=np.ones((5, 4)))
    g.add_node("b", "input", value=np.arange(4.0))
    g.add_node("h", "add", ["W", "b"])
    g.add_node("s", "sum", ["h"])
    t = trace_of(g, "s")
    text = labels.edge_label(step(t, "h", "b"))
    assert "broadcast: summed over dim 0" in text
    assert text.endswith("· J = [5, 5, 5, 5]")


def test_leaf_grads_in_pytorch_words(seed2) -> None:  # noqa: ANN001
    assert labels.leaf_grad_lines(seed2.leaf_grads) == [
        "x1.grad = 1.1", "x2.grad = 1.4", "x3.grad = 1"]
    assert labels.leaf_grad_lines({"w": None}) == ["w.grad = None"]


def test_names_get_real_subscripts() -> None:
    assert labels.h_name("x1") == "x<sub>1</sub>"
    assert labels.h_name("y", "j") == "y<sub>j</sub>"
    assert labels.h_name("x1", "i") == "x<sub>1</sub>[i]"
    assert labels.h_name("x1x2") == "x1x2"
    assert labels.h_name("a<b") == "a&lt;b"


def test_objective_is_A_unless_scalar_seeded_with_one() -> None:
    assert labels.objective_name("y", np.array([0.1, 0.2, 0.3])) == "A"
    assert labels.objective_name("z", np.array(1.0)) == "z"


def test_step_html_has_fractions_sum_and_numbers(seed2) -> None:  # noqa: ANN001
    g = seed2_graph()
    html = labels.step_html(step(seed2, "y", "y1"), 1, 15, "A", 1, 1, g, "y")
    assert "Σ" in html and "<sub>j</sub>" in html and "∂A" in html
    assert "border-bottom:1px solid" in html  # a fraction rule
    for number in (">0.1<", ">0.2<", ">0.3<"):
        assert number in html
    fan = labels.step_html(step(seed2, "y1", "x3"), 9, 15, "A", 3, 2, g, "y")
    assert "Fan-out" in fan and "term 2 of 3" in fan and "+=" in fan


def test_compact_step_html_says_the_same_in_two_lines_less(seed2) -> None:  # noqa: ANN001
    g = seed2_graph()
    full = labels.step_html(step(seed2, "y", "y1"), 1, 15, "A", 1, 1, g, "y")
    compact = labels.step_html(step(seed2, "y", "y1"), 1, 15, "A", 1, 1, g, "y", compact=True)
    assert "row vector ∂A/∂y" in full and "Row vector ∂A/∂y" in compact
    assert compact.count("<p ") == full.count("<p ") - 1  # the words join the operation's line
    equations = '<table cellspacing="2"'
    assert compact.count(equations) == full.count(equations) - 1  # symbolic beside numbers
    assert sorted(re.findall(r">([-0-9.]+)<", compact)) == sorted(re.findall(r">([-0-9.]+)<", full))


def test_end_to_end_html_is_the_seed_product() -> None:
    jac = np.array([[6.0, 3, 2], [1, 1, 1], [1, 3, 2]])
    html = labels.end_to_end_html("y", "A", ["x1", "x2", "x3"], jac, np.array([0.1, 0.2, 0.3]),
                                  [np.array(1.1), np.array(1.4), np.array(1.0)])
    for number in ("6", "3", "2", "1.1", "1.4"):
        assert f">{number}<" in html


def test_end_to_end_html_gives_a_wide_vjp_a_line_of_its_own() -> None:
    """classifier_head's summary (vᵀ, 12 columns of J, 12 of vᵀJ on one line) ran past a
    presentation panel's right edge: a row of more than a vector's worth of numbers is split
    before ``= vᵀJ``; the seeds' short rows stay on one line."""
    jac = np.arange(1.0, 13.0).reshape(1, 12)
    grads = [np.array(v) for v in jac[0]]
    wide = labels.end_to_end_html("loss", "loss", [f"x{i}" for i in range(12)], jac,
                                  np.array(1.0), grads)
    assert wide.count('<table cellspacing="2"') == 3  # lhs = vᵀJ; = v · J; = vᵀJ's numbers
    short = labels.end_to_end_html("y", "A", ["x1", "x2", "x3"], np.eye(3), np.ones(3),
                                   [np.array(1.0)] * 3)
    assert short.count('<table cellspacing="2"') == 2


def test_composition_lists_paths_and_matches_engine_block(seed2) -> None:  # noqa: ANN001
    jac = np.array([[6.0, 3, 2], [1, 1, 1], [1, 3, 2]])
    html = labels.composition_html(seed2.steps, "y", ["x1", "x2", "x3"], [1, 1, 1], jac)
    assert html.count("∂y/∂y<sub>1</sub>·∂y<sub>1</sub>/∂a·∂a/∂x<sub>1</sub>") == 1
    assert "[1, 0, 0]ᵀ·3·2" in html
    assert "[6, 1, 1]ᵀ" in html


def test_fan_out_words_tell_reuse_from_several_consumers() -> None:
    assert labels.fan_out_words("x3", 3, ["y1", "y2", "c"]) == (
        "x<sub>3</sub> feeds 3 consumers (y<sub>1</sub>, y<sub>2</sub>, c)")
    assert labels.fan_out_words("y", 2, ["z", "z"]) == "y is used 2 times (by z, z)"


def test_composition_of_matrices_shows_the_total_only() -> None:
    t = trace_of(seed3_graph(), "out")
    jac = np.full((1, 4), 1.5)
    html = labels.composition_html(t.steps, "out", ["x"], [4], jac)
    assert "∂out/∂z·∂z/∂y·∂y/∂x + ∂out/∂z·∂z/∂y·∂y/∂x" in html
    assert "[1.5, 1.5, 1.5, 1.5]" in html and "[[3, 0" not in html


def test_end_to_end_html_says_the_size_of_a_jacobian_too_wide_to_print() -> None:
    """A row per leaf, a column per leaf element: more than a vector's worth of either
    would run off the panel (it was clipped at the edge), so the size is said instead."""
    n = labels.PANEL_MAX_VECTOR + 1
    leaves = [f"x{i}" for i in range(1, n + 1)]
    jac = np.arange(1.0, n + 1).reshape(1, n)
    html = labels.end_to_end_html("y", "y", leaves, jac, np.array(1.0), list(jac[0]))
    assert f"is 1×{n}" in html and "<table" not in html
    fits = labels.end_to_end_html("y", "y", leaves[:-1], jac[:, :-1], np.array(1.0),
                                  list(jac[0, :-1]))
    assert "<table" in fits and f">{n - 1}<" in fits
