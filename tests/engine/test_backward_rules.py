"""The rules of ``tensor.backward(gradient=v)`` and the per-node error reports."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, end_to_end_jacobian, forward
from engine.errors import (
    ArityError,
    AttrError,
    CycleError,
    GradientError,
    GraphError,
    ShapeError,
)
from engine.graph import Graph
from support import close


def _close(actual, expected) -> None:
    close(actual, expected, rtol=1e-12, atol=1e-12)


def _chain(shape=(3,)) -> Graph:
    g = Graph()
    g.add_node("x", "input", value=np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))
    g.add_node("y", "tanh", ["x"])
    return g


# --------------------------------------------------------------------------- the seed v


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_element_output_without_v_uses_ones(shape):
    g = Graph()
    g.add_node("x", "input", value=np.full(shape, 0.5))
    g.add_node("y", "exp", ["x"])
    trace = backward(g, forward(g), "y")
    assert trace.gradient.shape == shape
    _close(trace.gradient, np.ones(shape))
    _close(trace.grads["x"], np.full(shape, np.exp(0.5)))


def test_non_scalar_output_without_v_is_refused():
    g = _chain()
    with pytest.raises(GradientError) as info:
        backward(g, forward(g), "y")
    message = str(info.value)
    assert "grad can be implicitly created only for scalar outputs" in message
    assert "'y'" in message and "(3,)" in message
    assert info.value.node == "y"


@pytest.mark.parametrize("v", [[1.0, 2.0], 1.0, [[1.0, 2.0, 3.0]]])
def test_v_of_the_wrong_shape_is_refused(v):
    g = _chain()
    with pytest.raises(GradientError) as info:
        backward(g, forward(g), "y", v)
    message = str(info.value)
    assert "'y'" in message
    assert "(3,)" in message
    assert str(np.shape(v)).replace(" ", "") in message.replace(" ", "") or "()" in message


def test_v_that_is_not_numbers_is_refused():
    g = _chain()
    with pytest.raises(GradientError, match="node 'y'"):
        backward(g, forward(g), "y", "abc")
    with pytest.raises(GradientError, match="node 'y'"):
        backward(g, forward(g), "y", [[1.0], [1.0, 2.0]])


def test_v_is_the_output_gradient():
    g = _chain((2, 2))
    v = [[1.0, -2.0], [0.5, 3.0]]
    trace = backward(g, forward(g), "y", v)
    _close(trace.grads["y"], v)
    _close(trace.gradient, v)
    _close(trace.grads["x"], np.array(v) * (1 - np.tanh(np.arange(1.0, 5.0).reshape(2, 2)) ** 2))


def test_output_that_needs_no_grad_is_refused():
    g = Graph()
    g.add_node("c", "const", value=[1.0, 2.0])
    g.add_node("x", "input", value=[1.0, 2.0], requires_grad=False)
    g.add_node("y", "mul", ["c", "x"])
    g.add_node("s", "sum", ["y"])
    with pytest.raises(GradientError) as info:
        backward(g, forward(g), "s")
    assert "'s'" in str(info.value) and "does not require grad" in str(info.value)


def test_unknown_output_is_refused():
    g = _chain()
    with pytest.raises(GraphError, match="nope"):
        backward(g, forward(g), "nope", [1.0, 1.0, 1.0])


def test_backward_from_a_leaf():
    g = _chain()
    trace = backward(g, forward(g), "x", [1.0, 2.0, 3.0])
    assert trace.steps == []
    _close(trace.leaf_grads["x"], [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- the walk


def test_fan_out_sums_contributions(tref):
    torch = tref.torch
    g = Graph()
    g.add_node("x", "input", value=[0.5, -1.0])
    g.add_node("a", "sin", ["x"])
    g.add_node("b", "exp", ["x"])
    g.add_node("c", "mul", ["x", "a"])
    g.add_node("d", "add", ["c", "b"])
    g.add_node("s", "sum", ["d"])
    trace = tref.run(g, "s")
    assert trace.fan_in("x") == 3
    into_x = [s for s in trace.steps if s.operand == "x"]
    _close(sum(s.vjp for s in into_x), trace.grads["x"])
    assert into_x[0].before is None
    for s in into_x[1:]:
        assert s.before is not None
    for s in trace.steps:
        _close(s.accumulated, s.vjp if s.before is None else s.before + s.vjp)

    x = tref.t64([0.5, -1.0], True)
    (x * torch.sin(x) + torch.exp(x)).sum().backward()
    _close(trace.grads["x"], x.grad.numpy())


def test_steps_run_in_reverse_topological_order():
    g = Graph()
    g.add_node("x", "input", value=2.0)
    g.add_node("a", "sin", ["x"])
    g.add_node("b", "mul", ["a", "x"])
    g.add_node("c", "exp", ["b"])
    trace = backward(g, forward(g), "c")
    assert [(s.consumer, s.operand) for s in trace.steps] == [
        ("c", "b"),
        ("b", "a"),
        ("b", "x"),
        ("a", "x"),
    ]
    # A consumer's gradient is complete before it sends anything on.
    for k, step in enumerate(trace.steps):
        later = trace.steps[k:]
        assert all(s.operand != step.consumer for s in later)


def test_no_step_toward_what_needs_no_grad(tref):
    torch = tref.torch
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("w", "input", value=[3.0, 4.0], requires_grad=False)
    g.add_node("c", "const", value=[0.5, 0.25])
    g.add_node("wc", "mul", ["w", "c"])  # depends only on what needs no grad
    g.add_node("e", "exp", ["wc"])
    g.add_node("y", "mul", ["x", "e"])
    g.add_node("z", "add", ["y", "c"])
    g.add_node("s", "sum", ["z"])
    fwd = forward(g)
    assert fwd.requires_grad == {"x", "y", "z", "s"}
    trace = backward(g, fwd, "s")
    operands = {s.operand for s in trace.steps}
    assert operands == {"z", "y", "x"}
    for nid in ("w", "c", "wc", "e"):
        assert trace.grads[nid] is None
    assert set(trace.leaf_grads) == {"x"}

    x = tref.t64([1.0, 2.0], True)
    w = tref.t64([3.0, 4.0])
    c = tref.t64([0.5, 0.25])
    e = torch.exp(w * c)
    (x * e + c).sum().backward()
    assert w.grad is None and c.grad is None and not e.requires_grad
    _close(trace.grads["x"], x.grad.numpy())


def test_branches_that_do_not_reach_the_output_get_nothing():
    g = Graph()
    g.add_node("x", "input", value=1.0)
    g.add_node("u", "input", value=2.0)
    g.add_node("a", "sin", ["x"])
    g.add_node("b", "cos", ["x"])
    g.add_node("bu", "mul", ["b", "u"])
    trace = backward(g, forward(g), "a")
    assert [(s.consumer, s.operand) for s in trace.steps] == [("a", "x")]
    assert trace.grads["b"] is None and trace.grads["bu"] is None
    assert trace.leaf_grads == {"x": trace.grads["x"], "u": None}


def test_requires_grad_switch_takes_effect():
    g = _chain()
    g.set_requires_grad("x", False)
    with pytest.raises(GradientError):
        backward(g, forward(g), "y", [1.0, 1.0, 1.0])
    g.set_requires_grad("x", True)
    assert backward(g, forward(g), "y", [1.0, 1.0, 1.0]).grads["x"] is not None
    g.add_node("k", "const", value=1.0)
    with pytest.raises(GraphError, match="node 'k'"):
        g.set_requires_grad("k", True)


def test_end_to_end_jacobian_matches_torch(tref):
    torch = tref.torch
    g = Graph()
    g.add_node("a", "input", value=[[1.0, 2.0], [0.5, -1.0]])
    g.add_node("b", "input", value=[0.3, -0.7])
    g.add_node("m", "matmul", ["a", "b"])
    g.add_node("t", "tanh", ["m"])
    g.add_node("y", "mul", ["t", "b"])
    jac = end_to_end_jacobian(g, forward(g), "y", ["a", "b"])
    ja, jb = torch.autograd.functional.jacobian(
        lambda a, b: torch.tanh(a @ b) * b,
        (tref.t64([[1.0, 2.0], [0.5, -1.0]]), tref.t64([0.3, -0.7])),
    )
    _close(jac, np.hstack([ja.reshape(2, 4).numpy(), jb.reshape(2, 2).numpy()]))


def test_nonfinite_values_are_reported_not_raised():
    g = Graph()
    g.add_node("x", "input", value=[-1.0, 1.0])
    g.add_node("y", "log", ["x"])
    g.add_node("s", "sum", ["y"])
    fwd = forward(g)
    assert not fwd.errors
    assert set(fwd.nonfinite()) == {"y", "s"}
    trace = backward(g, fwd, "s")
    _close(trace.grads["x"], [-1.0, 1.0])


def test_nonfinite_names_each_node_in_order_small_and_big_values_alike():
    """The small values are tested together, the big ones each: the same nodes, in the
    values' order, as a test per node names."""
    from engine.autodiff import SMALL_VALUE

    bad, good = np.ones(SMALL_VALUE + 1), np.ones(SMALL_VALUE + 1)
    bad[3] = np.inf
    cases = [
        ({"a": [1.0, 2.0], "b": bad, "c": 0.5}, ["b"]),
        ({"a": [np.nan], "b": good, "c": 0.5}, ["a"]),
        ({"a": [1.0], "b": bad, "c": np.nan}, ["b", "c"]),
        ({"c": np.nan, "b": bad, "a": [1.0]}, ["c", "b"]),
        ({"a": [1.0], "b": good, "c": 2.0}, []),
    ]
    for values, named in cases:
        g = Graph()
        for nid, value in values.items():
            g.add_node(nid, "input", value=value)
        assert forward(g).nonfinite() == named


# --------------------------------------------------------------------------- graph errors


def test_cycle_is_refused_naming_both_nodes():
    g = Graph()
    g.add_node("x", "input", value=1.0)
    g.add_node("a", "neg", ["x"])
    g.add_node("b", "add", ["a", None])
    g.add_node("c", "exp", ["b"])
    with pytest.raises(GraphError, match="already taken") as info:
        g.connect("c", "a", 0)  # port 0 of a is taken: that error comes first
    g.disconnect("a", 0)
    with pytest.raises(CycleError) as info:
        g.connect("c", "a", 0)
    message = str(info.value)
    assert "'c'" in message and "'a'" in message and "cycle" in message
    assert info.value.node == "a"
    assert g.nodes["a"].inputs == [None]
    assert g.topological_order().index("a") < g.topological_order().index("c")
    with pytest.raises(CycleError, match="'b'"):
        g.connect("b", "b", 1)
    assert g.nodes["b"].inputs == ["a", None]


def test_a_node_that_would_feed_itself_is_not_added():
    g = Graph()
    g.add_node("x", "input", value=1.0)
    with pytest.raises(CycleError, match="'y'"):
        g.add_node("y", "add", ["x", "y"])
    assert "y" not in g
    assert g.edges() == []


def test_graph_errors_name_the_node():
    g = Graph()
    g.add_node("x", "input", value=1.0)
    g.add_node("y", "neg", ["x"])
    cases = [
        (lambda: g.add_node("x", "input"), "node 'x'", "twice"),
        (lambda: g.add_node("q", "frobnicate"), "node 'q'", "unknown op"),
        (lambda: g.add_node("l", "input", ["x"]), "node 'l'", "takes no operands"),
        (lambda: g.connect("x", "y", 0), "node 'y'", "already taken"),
        (lambda: g.connect("x", "y", 1), "node 'y'", "no operand port 1"),
        (lambda: g.connect("y", "x", 0), "node 'x'", "takes no operands"),
        (lambda: g.connect("nope", "y", 0), "nope", "no node"),
        (lambda: g.set_value("y", 2.0), "node 'y'", "computed"),
        (lambda: g.rename("x", "y"), "node 'x'", "already used"),
    ]
    for call, name, words in cases:
        with pytest.raises(GraphError) as info:
            call()
        assert name in str(info.value) and words in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "op,attrs,words",
    [
        ("sum", {"dim": "x"}, "'dim'"),
        ("sum", {"keepdim": 1}, "'keepdim'"),
        ("reshape", {"shape": 3}, "'shape'"),
        ("select", {"index": 1.5}, "'index'"),
        ("stack", {"axis": 0}, "'axis'"),
    ],
)
def test_bad_attributes_name_the_node(op, attrs, words):
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    with pytest.raises(AttrError) as info:
        g.add_node("n", op, ["x"], attrs=attrs)
    assert "node 'n'" in str(info.value) and words in str(info.value)
    assert "n" not in g
    g.add_node("n", op, ["x"])
    with pytest.raises(AttrError, match="node 'n'"):
        g.set_attrs("n", attrs)


# --------------------------------------------------------------------------- operand errors


def _forward_error(g: Graph, node: str) -> str:
    fwd = forward(g)
    assert node in fwd.errors, fwd.errors
    assert node not in fwd.values
    return str(fwd.errors[node])


@pytest.mark.parametrize(
    "op,inputs,words",
    [
        ("add", ["a", None], "add needs 2 operands, 1 connected"),
        ("matmul", [None, None], "matmul needs 2 operands, 0 connected"),
        ("exp", [None], "exp needs 1 operand, 0 connected"),
        ("stack", [], "stack needs at least 1 operand, none connected"),
    ],
)
def test_wrong_operand_count_is_reported_per_node(op, inputs, words):
    g = Graph()
    g.add_node("a", "input", value=[1.0, 2.0])
    g.add_node("bad", op, inputs)
    g.add_node("after", "sum", ["bad"])
    message = _forward_error(g, "bad")
    assert message.startswith("node 'bad': ") and words in message
    fwd = forward(g)
    assert isinstance(fwd.errors["bad"], ArityError)
    # Downstream of the failure: no value and no badge of its own ...
    assert "after" not in fwd.values and "after" not in fwd.errors
    # ... and backward from it reports the node where the problem is.
    with pytest.raises(ArityError, match="node 'bad'"):
        backward(g, fwd, "after")


def test_a_hole_in_a_stack_is_an_arity_error():
    g = Graph()
    for k in range(3):
        g.add_node(f"x{k}", "input", value=float(k))
    g.add_node("s", "stack", ["x0", "x1", "x2"])
    g.disconnect("s", 1)
    assert "stack needs 3 operands, 2 connected" in _forward_error(g, "s")
    g.connect("x1", "s", 1)
    assert "s" in forward(g).values
    g.disconnect("s", 2)  # the last port goes away entirely
    assert forward(g).values["s"].shape == (2,)


@pytest.mark.parametrize(
    "op,shapes,attrs,words",
    [
        ("add", [(2, 3), (4,)], {}, ["cannot broadcast", "(2, 3)", "(4,)"]),
        ("mul", [(2, 3), (3, 2)], {}, ["cannot broadcast", "(2, 3)", "(3, 2)"]),
        ("pow", [(5,), (2,)], {}, ["cannot broadcast", "(5,)", "(2,)"]),
        ("matmul", [(2, 3), (2, 3)], {}, ["cannot multiply", "(2, 3)", "inner sizes 3 and 2"]),
        ("matmul", [(3,), (4,)], {}, ["cannot multiply", "(3,)", "(4,)"]),
        ("matmul", [(2, 2, 3), (2, 2)], {}, ["cannot multiply", "inner sizes 3 and 2"]),
        ("matmul", [(2, 2, 2), (3, 2, 2)], {}, ["batch dims", "(2,)", "(3,)"]),
        ("matmul", [(), (2,)], {}, ["at least 1 dim", "()", "(2,)"]),
        ("stack", [(2,), (3,)], {}, ["one shape", "(2,)", "(3,)"]),
        ("stack", [(2,), (2,)], {"dim": 2}, ["dim 2", "out of range"]),
        ("transpose", [(2, 3, 4)], {"dim1": 3}, ["dim 3", "out of range"]),
        ("select", [(2, 3)], {"index": 3, "dim": 1}, ["index 3", "size 3"]),
        ("select", [(2, 3)], {"dim": 2}, ["dim 2", "(2, 3)"]),
        ("select", [()], {}, ["scalar"]),
        ("reshape", [(2, 3)], {"shape": [4, -1]}, ["cannot reshape", "(2, 3)", "[4, -1]"]),
        ("reshape", [(2, 2)], {"shape": [-2, 2]}, ["cannot reshape", "[-2, 2]"]),
        ("reshape", [(2, 2)], {"shape": [-1, -1]}, ["cannot reshape", "[-1, -1]"]),
        ("sum", [(2, 3)], {"dim": 2}, ["dim 2", "out of range"]),
        ("mean", [(2, 3)], {"dim": [1, -1]}, ["twice"]),
    ],
)
def test_shape_mismatch_is_reported_per_node(op, shapes, attrs, words):
    g = Graph()
    names = []
    for k, shape in enumerate(shapes):
        g.add_node(f"x{k}", "input", value=np.ones(shape))
        names.append(f"x{k}")
    g.add_node("bad", op, names, attrs=attrs)
    g.add_node("after", "sum", ["bad"])
    fwd = forward(g)
    assert isinstance(fwd.errors.get("bad"), ShapeError), fwd.errors
    message = str(fwd.errors["bad"])
    assert message.startswith("node 'bad': ")
    for w in words:
        assert w in message, message
    with pytest.raises(ShapeError, match="node 'bad'"):
        backward(g, fwd, "after")
    with pytest.raises(ShapeError, match="node 'bad'"):
        end_to_end_jacobian(g, fwd, "after", names)


def test_errors_clear_once_fixed():
    g = Graph()
    g.add_node("a", "input", value=np.ones((2, 3)))
    g.add_node("b", "input", value=np.ones(4))
    g.add_node("y", "add", ["a", "b"])
    assert "y" in forward(g).errors
    g.set_value("b", np.ones(3))
    fwd = forward(g)
    assert not fwd.errors and fwd.values["y"].shape == (2, 3)


def test_a_prior_grad_of_an_old_shape_is_dropped():
    g = _chain()
    first = backward(g, forward(g), "y", [1.0, 1.0, 1.0])
    g.set_value("x", [1.0, 2.0])  # .grad of the old shape no longer applies
    trace = backward(g, forward(g), "y", [1.0, 1.0], prior=first.held_grads)
    _close(trace.grads["x"], 1 - np.tanh([1.0, 2.0]) ** 2)


def test_unknown_nodes_are_graph_errors():
    g = _chain()
    fwd = forward(g)
    with pytest.raises(GraphError, match="nope"):
        end_to_end_jacobian(g, fwd, "nope", ["x"])
    with pytest.raises(GraphError, match="nope"):
        end_to_end_jacobian(g, fwd, "y", ["x", "nope"])
    with pytest.raises(GraphError, match="nope"):
        g.rename("nope", "other")
    with pytest.raises(GraphError, match="node 'x'"):
        g.rename("x", "")


def test_jacobian_with_respect_to_a_failed_node_reports_it():
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("bad", "add", ["x", None])
    g.add_node("y", "exp", ["x"])
    with pytest.raises(ArityError, match="node 'bad'"):
        end_to_end_jacobian(g, forward(g), "y", ["x", "bad"])


def test_prior_gradient_of_a_leaf_switched_off_is_not_reported():
    g = _chain()
    g.add_node("w", "input", value=[1.0, 1.0, 1.0])
    g.add_node("z", "mul", ["y", "w"])
    first = backward(g, forward(g), "z", [1.0, 1.0, 1.0])
    g.set_requires_grad("w", False)
    trace = backward(g, forward(g), "z", [1.0, 1.0, 1.0], prior=first.held_grads)
    assert trace.grads["w"] is None
    assert not any(s.operand == "w" for s in trace.steps)
    _close(trace.grads["x"], 2 * (1 - np.tanh([1.0, 2.0, 3.0]) ** 2))
