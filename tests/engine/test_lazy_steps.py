"""Steps that add to an earlier gradient are recorded lazily while backward sums into
one buffer in place: what they show when asked must be the very bits an eager
``held = held + vjp`` walk over the steps gives, in any order of asking, and the
buffer must never be one a step (or an earlier ``.grad``) still shows."""

from __future__ import annotations

import numpy as np

from engine import autodiff
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


def test_a_sum_goes_only_into_buffers_no_one_else_holds(monkeypatch) -> None:
    # t's gradient arrives first as r's upstream passed on as it is (q's, r's and m's
    # gradients and their steps' upstream are that very array), then as a product the
    # mul just made (a buffer nothing else holds: the sum goes there), then as n's
    # negation (summed in place into that buffer).
    fresh = []
    real = autodiff._fresh
    monkeypatch.setattr(autodiff, "_fresh", lambda *a: fresh.append(real(*a)) or fresh[-1])
    g = Graph()
    g.add_node("x", "input", value=np.array([0.5, -1.5, 2.0]))
    g.add_node("t", "tanh", ["x"])
    g.add_node("n", "neg", ["t"])
    g.add_node("m", "mul", ["t", "x"])
    g.add_node("r", "add", ["m", "t"])
    g.add_node("q", "add", ["r", "n"])
    g.add_node("out", "sum", ["q"])
    fwd = forward(g)
    values = {k: v.copy() for k, v in fwd.values.items()}
    trace = backward(g, fwd, "out")
    assert fresh == [True, True]  # m's product took t's sum; tanh's gradient took x's
    ones = np.ones(3)
    for n in ("q", "r", "m"):
        same_bits(trace.grads[n], ones)
    same_bits(trace.grads["t"], (ones + ones * values["x"]) + -ones)
    for s in trace.steps:
        same_bits(s.upstream, trace.grads[s.consumer])
        same_bits(s.vjp, np.asarray(s.context.pullback(s.operand_index, s.upstream)))
        _ = s.accumulated
    for k, v in values.items():
        same_bits(fwd.values[k], v)
