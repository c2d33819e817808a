"""The worked examples of the two source tutorials (see shared/seeds/README.md),
built with :class:`engine.graph.Graph` directly; the numbers users check first."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, end_to_end_jacobian, forward
from engine.graph import Graph
from support import close, seed2_graph, seed3_graph


def _close(actual, expected) -> None:
    close(actual, expected, rtol=1e-12, atol=1e-12)


def example1() -> Graph:
    """x=[1,2,3], y=x**2+2, z=sum(y)."""
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0, 3.0])
    g.add_node("two", "const", value=2.0)
    g.add_node("x2", "pow", ["x", "two"])
    g.add_node("y", "add", ["x2", "two"])
    g.add_node("z", "sum", ["y"])
    return g


def example4() -> Graph:
    """y = [x1²+2x2+x3, x1+x2³+x3², 2x1+x2²+x3³] at x = (1, 2, 3)."""
    g = Graph()
    for name, v in (("x1", 1.0), ("x2", 2.0), ("x3", 3.0)):
        g.add_node(name, "input", value=v)
    for k in (2.0, 3.0):
        g.add_node(f"c{int(k)}", "const", value=k)
    g.add_node("x1^2", "pow", ["x1", "c2"])
    g.add_node("2x2", "mul", ["c2", "x2"])
    g.add_node("a", "add", ["x1^2", "2x2"])
    g.add_node("y0", "add", ["a", "x3"])
    g.add_node("x2^3", "pow", ["x2", "c3"])
    g.add_node("x3^2", "pow", ["x3", "c2"])
    g.add_node("b", "add", ["x1", "x2^3"])
    g.add_node("y1", "add", ["b", "x3^2"])
    g.add_node("2x1", "mul", ["c2", "x1"])
    g.add_node("x2^2", "pow", ["x2", "c2"])
    g.add_node("x3^3", "pow", ["x3", "c3"])
    g.add_node("c", "add", ["2x1", "x2^2"])
    g.add_node("y2", "add", ["c", "x3^3"])
    g.add_node("y", "stack", ["y0", "y1", "y2"])
    return g


def _leaf_grads(graph: Graph, output: str, gradient=None) -> dict[str, np.ndarray]:
    fwd = forward(graph)
    assert not fwd.errors
    trace = backward(graph, fwd, output, gradient)
    return {k: v for k, v in trace.leaf_grads.items()}


def test_example1_square_plus_two_summed():
    g = example1()
    fwd = forward(g)
    _close(fwd.values["y"], [3.0, 6.0, 11.0])
    _close(fwd.values["z"], 20.0)
    grads = _leaf_grads(g, "z")
    assert set(grads) == {"x"}  # the constant 2 is no leaf with a .grad
    _close(grads["x"], [2.0, 4.0, 6.0])


def test_example2_stacked_vector_with_v():
    g = seed2_graph()
    fwd = forward(g)
    _close(fwd.values["y"], [6.0, 6.0, 7.0])
    grads = _leaf_grads(g, "y", [0.1, 0.2, 0.3])
    _close([grads["x1"], grads["x2"], grads["x3"]], [1.1, 1.4, 1.0])


def test_example2_end_to_end_jacobian_is_the_seed_matrix():
    g = seed2_graph()
    fwd = forward(g)
    jac = end_to_end_jacobian(g, fwd, "y", ["x1", "x2", "x3"])
    _close(jac, [[6.0, 3.0, 2.0], [1.0, 1.0, 1.0], [1.0, 3.0, 2.0]])
    _close(np.array([0.1, 0.2, 0.3]) @ jac, [1.1, 1.4, 1.0])
    assert end_to_end_jacobian(g, fwd, "y", ["x1", "x2", "x3"], limit=8) is None


def test_example2_without_v_is_refused():
    from engine.errors import GradientError

    g = seed2_graph()
    with pytest.raises(GradientError, match="implicitly created only for scalar outputs"):
        backward(g, forward(g), "y")


def test_example3_mean_of_square():
    g = seed3_graph()
    fwd = forward(g)
    _close(fwd.values["out"], 9.0)
    grads = _leaf_grads(g, "out")
    _close(grads["x"], np.full((2, 2), 1.5))


@pytest.mark.parametrize(
    "v,expected",
    [([3.0, 2.0, 1.0], [10.0, 34.0, 42.0]), ([1.0, 1.0, 1.0], [5.0, 18.0, 34.0])],
    ids=["prose-weights-3-2-1", "code-ones"],
)
def test_example4_both_vs(v, expected):
    g = example4()
    fwd = forward(g)
    _close(fwd.values["y"], [8.0, 18.0, 33.0])
    grads = _leaf_grads(g, "y", v)
    _close([grads["x1"], grads["x2"], grads["x3"]], expected)


def test_example4_jacobian():
    g = example4()
    jac = end_to_end_jacobian(g, forward(g), "y", ["x1", "x2", "x3"])
    # [[2x1, 2, 1], [1, 3x2², 2x3], [2, 2x2, 3x3²]] at (1, 2, 3)
    _close(jac, [[2.0, 2.0, 1.0], [1.0, 12.0, 6.0], [2.0, 4.0, 27.0]])


def test_seed_examples_match_torch(tref):
    torch = tref.torch
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (x**2 + 2).sum().backward()
    _close(_leaf_grads(example1(), "z")["x"], x.grad.numpy())

    x1, x2, x3 = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (1.0, 2, 3))
    y = torch.stack([x1**2 + 2 * x2 + x3, x1 + x2**3 + x3**2, 2 * x1 + x2**2 + x3**3])
    y.backward(torch.tensor([3.0, 2.0, 1.0], dtype=torch.float64))
    grads = _leaf_grads(example4(), "y", [3.0, 2.0, 1.0])
    _close([grads[k] for k in ("x1", "x2", "x3")], [x1.grad, x2.grad, x3.grad])


# --------------------------------------------------------------------------- accumulation


def test_two_backward_calls_double_the_leaf_gradients():
    graph = example1()
    fwd = forward(graph)
    first = backward(graph, fwd, "z")
    _close(first.leaf_grads["x"], [2.0, 4.0, 6.0])
    second = backward(graph, fwd, "z", prior=first.held_grads)
    _close(second.leaf_grads["x"], [4.0, 8.0, 12.0])
    # The step into x shows the earlier .grad as "before".
    into_x = [s for s in second.steps if s.operand == "x"]
    _close(into_x[0].before, [2.0, 4.0, 6.0])
    _close(into_x[-1].accumulated, [4.0, 8.0, 12.0])
    # The first trace is a record: the second call did not change it.
    _close(first.leaf_grads["x"], [2.0, 4.0, 6.0])


def test_accumulation_with_v_and_zero_grad():
    graph = example4()
    fwd = forward(graph)
    first = backward(graph, fwd, "y", [3.0, 2.0, 1.0])
    trace = backward(graph, fwd, "y", [1.0, 1.0, 1.0], prior=first.held_grads)
    _close([trace.leaf_grads[k] for k in ("x1", "x2", "x3")], [15.0, 52.0, 76.0])
    trace = backward(graph, fwd, "y", [1.0, 1.0, 1.0], prior={})  # after zero_grad()
    _close([trace.leaf_grads[k] for k in ("x1", "x2", "x3")], [5.0, 18.0, 34.0])


def test_accumulation_matches_torch(tref):
    torch = tref.torch
    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    graph = seed3_graph()
    fwd, grads = forward(graph), {}
    for _ in range(3):
        ((x + 2) * (x + 2)).mean().backward()
        grads = backward(graph, fwd, "out", prior=grads).held_grads
    _close(grads["x"], x.grad.numpy())
    _close(grads["x"], np.full((2, 2), 4.5))
