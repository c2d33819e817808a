"""The gradient check never lies (issue 31, items 5-7): it says "cannot tell" where
rounding hides the difference, names cancellation, and follows a sharp curvature
with smaller steps before any verdict; a property test perturbs a VJP by a known
factor and expects every perturbation above the stated resolution flagged."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from test_random_graphs import _settings, random_graph

from engine.autodiff import backward, forward
from engine.gradcheck import Status, check_graph
from engine.graph import Graph
from engine.ops import OPS

FLAGGED = (Status.CLOSE, Status.MISMATCH)


def _chain(x: float, *ops: tuple[str, float | None]) -> Graph:
    """x, then each (op, constant) in turn; a constant operand comes second."""
    g = Graph()
    g.add_node("x", "input", value=np.array([x]), requires_grad=True)
    last = "x"
    for k, (op, c) in enumerate(ops):
        inputs = [last]
        if c is not None:
            g.add_node(f"c{k}", "const", value=np.array(c))
            inputs.append(f"c{k}")
        g.add_node(f"n{k}", op, inputs)
        last = f"n{k}"
    g.add_node("s", "sum", [last])
    return g


def test_a_gradient_below_the_rounding_floor_is_never_agreed(monkeypatch):
    scaled = OPS["mul"].vjp
    wrong = dataclasses.replace(OPS["mul"], vjp=lambda *a: 1e6 * scaled(*a))
    monkeypatch.setitem(OPS, "mul", wrong)
    g = _chain(0.7, ("mul", 1e-9), ("add", 1e8))  # L = 1e8 + 1e-9·x, the VJP 1e6 too big
    [e] = check_graph(g, "s").elements
    assert e.status is Status.UNRESOLVED and e.resolution > abs(e.analytic - 1e-9)
    assert "cannot tell at this scale" in check_graph(g, "s").summary()
    assert f"{e.resolution:.1g}" in e.note


def test_cancellation_in_the_forward_is_named_not_a_mismatch():
    g = _chain(1.0, ("add", 1e10), ("sub", 1e10), ("square", None))  # ((x + 1e10) - 1e10)²
    [e] = check_graph(g, "s").elements
    assert e.analytic == 2.0
    assert e.status is Status.CANCELLED and "round" in e.note


def test_sharp_curvature_is_retried_at_smaller_steps():
    for g in (
        _chain(0.3, ("mul", 1e5), ("sin", None)),
        _chain(0.3, ("mul", 1e6), ("sin", None)),
        _chain(1e-5, ("pow", -1.0)),
    ):
        [e] = check_graph(g, "s").elements
        assert e.status is Status.OK, e
        assert "step too large for this curvature" in e.note


def test_a_subnormal_v_is_never_a_mismatch():
    """v = 5e-324 makes L subnormal: the exact 2·v cannot be resolved, never "wrong"."""
    g = Graph()
    g.add_node("x", "input", value=np.zeros((2, 3)), requires_grad=True)
    g.add_node("y", "add", ["x", "x"])
    v = np.full((2, 3), 5e-324)
    result = check_graph(g, "y", v)
    assert result.elements and all(e.status not in FLAGGED for e in result.elements)
    assert {e.status for e in result.elements} == {Status.UNRESOLVED}


def test_a_true_kink_stays_a_kink():
    g = _chain(0.0, ("relu", None))
    assert check_graph(g, "s").elements[0].status is Status.KINK


@_settings(40)
@given(case=random_graph(max_ops=6), factor=st.sampled_from([1.0, 1 + 1e-4, 1.01, 2.0, -1.0, 1e6]))
def test_a_perturbed_vjp_is_flagged_above_the_resolution(case, factor):
    graph, _, output, v = case
    fwd = forward(graph)
    exact = backward(graph, fwd, output, v).leaf_grads
    ops = {graph.nodes[n].op for n in graph.ancestors(output) | {output}} - {"input", "const"}
    op = sorted(ops)[0]
    real = OPS[op]
    OPS[op] = dataclasses.replace(real, vjp=lambda *a: factor * np.asarray(real.vjp(*a)))
    try:
        result = check_graph(graph, output, v)
        wrong = backward(graph, forward(graph), output, v).leaf_grads
    finally:
        OPS[op] = real
    for e in result.elements:
        if e.status in (Status.KINK, Status.UNDEFINED, Status.CURVATURE):
            continue
        shape = graph.nodes[e.node].value.shape
        truth, got = (_dense(grads.get(e.node), shape)[e.index] for grads in (exact, wrong))
        off = abs(got - truth)
        if off == 0.0 and not result.kinks:  # a named kink (a tie for max) may read off
            assert e.status not in FLAGGED, e  # an exact gradient is never flagged
        elif off > 2 * e.resolution:
            assert e.status in FLAGGED, (e, off)  # a perturbation it can see is flagged


def _dense(grad: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(np.asarray(0.0 if grad is None else grad, dtype=np.float64), shape)
