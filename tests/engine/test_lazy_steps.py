"""Steps that add to an earlier gradient are recorded lazily while backward sums into
one buffer in place: what they show when asked must be the very bits an eager
``held = held + vjp`` walk over the steps gives, in any order of asking, and the
buffer must never be one a step (or an earlier ``.grad``) still shows."""

from __future__ import annotations

import numpy as np

from engine.autodiff import backward, forward
from engine.graph import Graph


def fan_out_graph() -> tuple[Graph, str]:
    """3x3 matrices in layers ``h' = tanh(W @ h + skip)``: weights and hidden nodes
    are used several times, so most of them sum three or more contributions."""
    rng = np.random.default_rng(5)
    g = Graph()
    for k in range(3):
        g.add_node(f"w{k}", "input", value=rng.normal(size=(3, 3)))
    hidden = ["w2"]
    for k in range(8):
        skip = hidden[int(rng.integers(len(hidden)))]
        g.add_node(f"m{k}", "matmul", [f"w{k % 3}", hidden[-1]])
        g.add_node(f"a{k}", "add", [f"m{k}", skip])
        g.add_node(f"h{k}", "tanh", [f"a{k}"])
        hidden.append(f"h{k}")
    g.add_node("out", "sum", [hidden[-1]])
    return g, "out"


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> None:
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_array_equal(np.asarray(a).view(np.int64), np.asarray(b).view(np.int64))


def test_lazy_steps_show_the_eager_walks_bits_in_any_order() -> None:
    g, out = fan_out_graph()
    fwd = forward(g)
    prior = {"w0": np.full((3, 3), 0.25)}
    trace = backward(g, fwd, out, prior=prior)
    assert max(trace.fan_ins().values()) >= 3
    for s in reversed(trace.steps):  # the latest first: each recomputes its chain
        _ = s.accumulated
    held: dict[str, np.ndarray] = dict(prior)
    for s in trace.steps:
        vjp = np.asarray(s.context.pullback(s.operand_index, s.upstream), dtype=np.float64)
        same_bits(s.vjp, vjp)
        same_bits(s.before, held.get(s.operand))
        held[s.operand] = vjp if s.operand not in held else held[s.operand] + vjp
        same_bits(s.accumulated, held[s.operand])
    for node, grad in held.items():
        same_bits(trace.grads[node], grad)
    same_bits(prior["w0"], np.full((3, 3), 0.25))  # an earlier .grad is never summed into


def test_a_long_fan_in_is_recomputed_without_recursion() -> None:
    g = Graph(max_nodes=None)
    g.add_node("x", "input", value=np.array([0.5, -1.5]))
    g.add_node("s0", "add", ["x", "x"])
    for k in range(1, 1500):
        g.add_node(f"s{k}", "add", [f"s{k - 1}", "x"])
    g.add_node("out", "sum", ["s1499"])
    trace = backward(g, forward(g), "out")
    into_x = [s for s in trace.steps if s.operand == "x"]
    assert len(into_x) == 1501
    np.testing.assert_array_equal(into_x[-1].before, [1500.0, 1500.0])
    np.testing.assert_array_equal(into_x[-1].accumulated, trace.grads["x"])
