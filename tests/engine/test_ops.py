"""Every op of the table against PyTorch float64: forward, VJP, local Jacobian,
and the VJP against central finite differences."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.graph import Graph
from engine.ops import LEAF_OPS, OP_NAMES, OPS
from engine.ops.record import CATEGORIES
from engine.trace import JACOBIAN_LIMIT

BROADCAST_SHAPES = [
    ((), ()),
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((2, 1), (1, 3)),
    ((4,), ()),
    ((), (2, 2)),
    ((2, 3, 4), (3, 1)),
    ((1,), (2, 3)),
    ((2, 1, 3), (4, 1)),
]
UNARY_SHAPES = [(), (1,), (4,), (2, 3), (2, 1, 3)]
# Per-op domain of each operand: "any" (-2..2), "pos" (0.5..2), "away0" (|x| >= 0.1).
BINARY = {
    "add": ("any", "any"),
    "sub": ("any", "any"),
    "mul": ("any", "any"),
    "div": ("any", "away0"),
    "pow": ("pos", "any"),
    "maximum": ("any", "any"),
    "minimum": ("any", "any"),
}
UNARY = {
    "neg": "any",
    "exp": "any",
    "log": "pos",
    "sin": "any",
    "cos": "any",
    "tanh": "any",
    "sigmoid": "any",
    "relu": "away0",
    "abs": "away0",
    "sqrt": "pos",
    "square": "any",
    "softsign": "any",
}
REDUCE_ATTRS = [
    ((2, 3, 4), {}),
    ((2, 3, 4), {"keepdim": True}),
    ((2, 3, 4), {"dim": 0}),
    ((2, 3, 4), {"dim": -1}),
    ((2, 3, 4), {"dim": 1, "keepdim": True}),
    ((2, 3, 4), {"dim": [0, 2]}),
    ((2, 3, 4), {"dim": [-1, 0], "keepdim": True}),
    ((2, 3, 4), {"dim": []}),
    ((5,), {}),
    ((5,), {"dim": 0, "keepdim": True}),
    ((), {}),
    ((), {"dim": 0}),
    ((), {"dim": -1, "keepdim": True}),
    ((1, 1), {"dim": 1}),
]


def _case(op: str, shapes: list[tuple[int, ...]], attrs: dict[str, Any], domains: list[str]):
    label = f"{op}-{'-'.join(map(str, shapes))}-{attrs}".replace(" ", "")
    return pytest.param(op, shapes, attrs, domains, id=label)


def _cases() -> list[Any]:
    cases = []
    for op, doms in BINARY.items():
        for shapes in BROADCAST_SHAPES:
            cases.append(_case(op, list(shapes), {}, list(doms)))
    for op, dom in UNARY.items():
        for shape in UNARY_SHAPES:
            cases.append(_case(op, [shape], {}, [dom]))
    for op in ("sum", "mean"):
        for shape, attrs in REDUCE_ATTRS:
            cases.append(_case(op, [shape], attrs, ["any"]))
    for shapes in [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((1, 1), (1, 5)),
        ((1, 1, 2), (2,)),
        ((2, 3), (3, 3, 3)),
        ((2,), (2, 2, 3)),
        ((3, 2, 4), (4,)),
        ((2, 3, 4), (2, 4, 2)),
        ((2, 1, 3, 2), (4, 2, 1)),
        ((1, 2, 3), (3, 3, 1)),
    ]:
        cases.append(_case("matmul", list(shapes), {}, ["any", "any"]))
    for shape, attrs in [
        ((2, 3), {}),
        ((1, 4), {}),
        ((3, 3), {}),
        ((3,), {}),
        ((), {}),
        ((2, 3, 4), {"dim0": -2, "dim1": -1}),
        ((2, 3, 4), {"dim0": 0, "dim1": 2}),
        ((2, 1, 3, 2), {"dim0": 1, "dim1": 3}),
    ]:
        cases.append(_case("transpose", [shape], attrs, ["any"]))
    for n, shape, dim in [
        (1, (3,), 0),
        (2, (), 0),
        (3, (), 0),
        (2, (3,), 0),
        (2, (3,), 1),
        (3, (2, 3), 1),
        (2, (2, 3), -1),
        (4, (2, 2), 2),
        (2, (2, 3), -3),
    ]:
        cases.append(_case("stack", [shape] * n, {"dim": dim}, ["any"] * n))
    for shape, attrs in [
        ((3,), {"index": 1}),
        ((3,), {"index": -1}),
        ((2, 3), {"index": 0}),
        ((2, 3), {"index": 2, "dim": 1}),
        ((2, 3), {"index": -2, "dim": -1}),
        ((2, 3, 4), {"index": 3, "dim": 2}),
        ((2, 3, 4), {"index": 1, "dim": -2}),
    ]:
        cases.append(_case("select", [shape], attrs, ["any"]))
    for shape, target in [
        ((2, 3), [3, 2]),
        ((2, 3), [6]),
        ((2, 3), [-1]),
        ((2, 3), [1, -1, 2]),
        ((2, 3, 2), [4, -1]),
        ((), [1]),
        ((1,), []),
        ((4,), [2, 1, 2]),
    ]:
        cases.append(_case("reshape", [shape], {"shape": target}, ["any"]))
    cases += _new_op_cases()
    return cases


def _new_op_cases() -> list[Any]:
    cases = []
    for shape, attrs in [
        ((5,), {}),
        ((2, 3), {"min": -0.5, "max": 0.5}),
        ((2, 3), {"min": 0.0, "max": None}),
        ((4,), {"min": None, "max": 0.25}),
    ]:
        cases.append(_case("clamp", [shape], attrs, ["away0"]))
    for shape, attrs in [
        ((5,), {}),
        ((2, 3), {"beta": 2.0}),
        ((2, 3), {"beta": 2.0, "threshold": 1.0}),  # both regions: βx above 1 is x itself
        ((4,), {"beta": 0.5, "threshold": -0.5}),
        ((), {"threshold": 0.0}),
    ]:
        cases.append(_case("softplus", [shape], attrs, ["any"]))
    for op in ("softmax", "log_softmax"):
        for shape, dim in [((4,), -1), ((2, 3), 1), ((2, 3), 0), ((2, 3, 2), -2), ((), 0)]:
            cases.append(_case(op, [shape], {"dim": dim}, ["any"]))
    for shape, attrs in [
        ((2, 3), {}),
        ((2, 3), {"dim": 0, "keepdim": True}),
        ((2, 3, 4), {"dim": [0, 2]}),
        ((2, 3), {"dim": None}),
        ((), {"dim": 0}),
    ]:
        cases.append(_case("logsumexp", [shape], attrs, ["any"]))
    for op in ("max", "min"):
        for shape, attrs in [
            ((5,), {}),
            ((2, 3), {}),
            ((2, 3), {"dim": 1}),
            ((2, 3, 2), {"dim": 0, "keepdim": True}),
            ((2, 3), {"dim": -1, "keepdim": True}),
            ((), {"dim": 0}),
        ]:
            cases.append(_case(op, [shape], attrs, ["any"]))
    for shapes, cond in [
        (((3,), (3,)), [True, False, True]),
        (((2, 3), (3,)), [[True, False, False], [False, True, True]]),
        (((2, 1), (1, 3)), [False, True, True]),
        (((), (2,)), True),
    ]:
        cases.append(_case("where", list(shapes), {"condition": cond}, ["any", "any"]))
    for shape, dim in [((3,), 0), ((2, 3), -1), ((2, 3), 1), ((), 0)]:
        cases.append(_case("unsqueeze", [shape], {"dim": dim}, ["any"]))
    for shape, attrs in [((1, 3, 1), {}), ((1, 3, 1), {"dim": 0}), ((2, 3), {"dim": 1}), ((), {})]:
        cases.append(_case("squeeze", [shape], attrs, ["any"]))
    for shape, attrs in [
        ((2, 3, 2), {}),
        ((2, 3, 2), {"start_dim": 1}),
        ((2, 3, 2, 2), {"start_dim": 1, "end_dim": 2}),
        ((), {}),
    ]:
        cases.append(_case("flatten", [shape], attrs, ["any"]))
    for shapes in [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((), ())]:
        cases.append(_case("mse_loss", list(shapes), {}, ["any", "any"]))
    for shapes in [((3,), (3,)), ((2, 3), (2, 3)), ((), ())]:
        cases.append(_case("binary_cross_entropy", list(shapes), {}, ["prob", "prob"]))
    for shape in [(4,), (2, 3), (2, 3, 2)]:
        cases.append(_case("cross_entropy", [shape, shape], {}, ["any", "prob"]))
    return cases


CASES = _cases()


def _values(shapes, domains, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape, dom in zip(shapes, domains, strict=True):
        if dom == "pos":
            v = rng.uniform(0.5, 2.0, size=shape)
        elif dom == "prob":
            v = rng.uniform(0.05, 0.95, size=shape)
        elif dom == "away0":
            v = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.1, 2.0, size=shape)
        else:
            v = rng.uniform(-2.0, 2.0, size=shape)
        out.append(np.asarray(v, dtype=np.float64))
    return out


def _seed(op: str, shapes, attrs) -> int:
    return zlib.crc32(f"{op}{shapes}{attrs}".encode())


def _setup(ref, op, shapes, attrs, domains):
    xs = _values(shapes, domains, _seed(op, shapes, attrs))
    graph = ref.single_op_graph(op, xs, attrs)
    return xs, graph


def test_every_op_of_the_table_has_cases_here():
    """The cases are checked against the table, not a second list of op names: a new
    record without forward/VJP cases fails here."""
    assert {case.values[0] for case in CASES} == set(OPS) - set(LEAF_OPS)
    assert OP_NAMES[:2] == ("input", "const")
    assert [n for n in OP_NAMES if OPS[n].is_leaf] == ["input", "const"]
    for op in OPS.values():
        assert op.category in CATEGORIES and op.doc and op.torch


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_forward_matches_torch(tref, op, shapes, attrs, domains):
    xs, graph = _setup(tref, op, shapes, attrs, domains)
    fwd = forward(graph)
    assert not fwd.errors
    expected = tref.torch_op(op, [tref.t64(x) for x in xs], attrs)
    tref.close(fwd.values["y"], expected.detach().numpy())
    # The op's shape check predicts the shape the forward produces.
    assert OPS[op].check([x.shape for x in xs], graph.nodes["y"].attrs) == tuple(expected.shape)


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_vjp_matches_torch(tref, op, shapes, attrs, domains):
    torch = tref.torch
    xs, graph = _setup(tref, op, shapes, attrs, domains)
    fwd = forward(graph)
    out_shape = fwd.values["y"].shape
    v = np.random.default_rng(1).uniform(-1.0, 1.0, size=out_shape)
    trace = backward(graph, fwd, "y", v)

    txs = [tref.t64(x, requires_grad=True) for x in xs]
    ty = tref.torch_op(op, txs, attrs)
    expected = torch.autograd.grad(ty, txs, grad_outputs=tref.t64(v))
    for k, e in enumerate(expected):
        tref.close(trace.grads[f"x{k}"], e.numpy())
    # One step per operand, each carrying v as its upstream gradient.
    assert [s.operand for s in trace.steps] == [f"x{k}" for k in range(len(xs))]
    for step in trace.steps:
        assert step.consumer == "y"
        tref.close(step.upstream, v)
        assert step.vjp.shape == xs[step.operand_index].shape
        assert isinstance(step.structure(), str) and step.structure()


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_vjp_matches_central_differences(ref, op, shapes, attrs, domains):
    xs, graph = _setup(ref, op, shapes, attrs, domains)
    fwd = forward(graph)
    full_attrs = graph.nodes["y"].attrs
    v = np.random.default_rng(2).uniform(-1.0, 1.0, size=fwd.values["y"].shape)
    trace = backward(graph, fwd, "y", v)
    h = 1e-6

    def objective(args: list[np.ndarray]) -> float:
        return float(np.sum(OPS[op].forward(args, full_attrs) * v))

    for k, x in enumerate(xs):
        numeric = np.zeros(x.shape)
        for idx in np.ndindex(x.shape):
            plus = [a.copy() for a in xs]
            minus = [a.copy() for a in xs]
            plus[k][idx] += h
            minus[k][idx] -= h
            numeric[idx] = (objective(plus) - objective(minus)) / (2 * h)
        ref.close(trace.grads[f"x{k}"], numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_step_jacobian_matches_torch(tref, op, shapes, attrs, domains):
    torch = tref.torch
    xs, graph = _setup(tref, op, shapes, attrs, domains)
    trace = tref.run(graph, "y", np.ones(forward(graph).values["y"].shape))
    inputs = tuple(tref.t64(x) for x in xs)
    jacs = torch.autograd.functional.jacobian(lambda *a: tref.torch_op(op, a, attrs), inputs)
    m = int(np.prod(trace.gradient.shape))
    for step in trace.steps:
        k = step.operand_index
        expected = jacs[k].numpy().reshape(m, xs[k].size)
        jac = step.jacobian()
        assert jac is not None and jac.shape == (m, xs[k].size)
        assert step.jacobian_size == jac.size
        tref.close(jac, expected)
        # And the VJP it shows is the upstream row vector times that Jacobian.
        tref.close(step.vjp.ravel(), step.upstream.ravel() @ jac)


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_jvp_matches_torch(tref, op, shapes, attrs, domains):
    torch = tref.torch
    xs, graph = _setup(tref, op, shapes, attrs, domains)
    full_attrs = graph.nodes["y"].attrs
    out = forward(graph).values["y"]
    rng = np.random.default_rng(3)
    us = [rng.uniform(-1.0, 1.0, size=x.shape) for x in xs]
    primals = tuple(tref.t64(x) for x in xs)
    _, expected = torch.func.jvp(
        lambda *a: tref.torch_op(op, a, attrs), primals, tuple(tref.t64(u) for u in us)
    )
    tref.close(OPS[op].jvp(us, xs, out, full_attrs), expected.numpy())
    # An operand that carries no tangent counts as a zero tangent.
    for k in range(len(xs)):
        only = [u if i == k else None for i, u in enumerate(us)]
        zeros = tuple(tref.t64(u if i == k else np.zeros(u.shape)) for i, u in enumerate(us))
        _, part = torch.func.jvp(lambda *a: tref.torch_op(op, a, attrs), primals, zeros)
        tref.close(OPS[op].jvp(only, xs, out, full_attrs), part.numpy())
    tref.close(OPS[op].jvp([None] * len(xs), xs, out, full_attrs), np.zeros(out.shape))


@pytest.mark.parametrize("op,shapes,attrs,domains", CASES)
def test_jvp_is_the_transpose_of_the_vjp(ref, op, shapes, attrs, domains):
    # For random u and v: uᵀ(Jᵀv) = vᵀ(Ju), summed over the operands.
    xs, graph = _setup(ref, op, shapes, attrs, domains)
    full_attrs = graph.nodes["y"].attrs
    out = forward(graph).values["y"]
    rng = np.random.default_rng(4)
    us = [rng.normal(size=x.shape) for x in xs]
    v = rng.normal(size=out.shape)
    rule = OPS[op]
    left = sum(float(np.sum(u * rule.vjp(i, v, xs, out, full_attrs))) for i, u in enumerate(us))
    right = float(np.sum(v * rule.jvp(us, xs, out, full_attrs)))
    assert right == pytest.approx(left, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "a,b",
    [
        ([0.0, 0.0, 2.0, 0.0], [2.0, 0.0, 0.0, -1.0]),  # the masked corners of pow's gradient
        ([-2.0, -1.5, -3.0, 0.5], [2.0, 3.0, -1.0, 0.0]),  # negative bases, integer exponents
        ([[0.0], [1.0]], [0.0, 1.0, 2.5]),  # broadcasting with zeros
    ],
)
def test_pow_special_values_match_torch(tref, a, b):
    torch = tref.torch
    a, b = np.array(a), np.array(b)
    graph = tref.single_op_graph("pow", [a, b])
    fwd = forward(graph)
    v = np.ones(fwd.values["y"].shape)
    trace = backward(graph, fwd, "y", v)
    ta, tb = tref.t64(a, True), tref.t64(b, True)
    out = torch.pow(ta, tb)
    tref.close(fwd.values["y"], out.detach().numpy())
    ga, gb = torch.autograd.grad(out, (ta, tb), grad_outputs=tref.t64(v))
    tref.close(trace.grads["x0"], ga.numpy())
    tref.close(trace.grads["x1"], gb.numpy())


@pytest.mark.parametrize("op", ["relu"])
def test_relu_at_zero_matches_torch(tref, op):
    torch = tref.torch
    x = np.array([-1.0, 0.0, 1.0])
    trace = tref.run(tref.single_op_graph(op, [x]), "y", np.ones(3))
    tx = tref.t64(x, True)
    torch.relu(tx).backward(torch.ones(3, dtype=torch.float64))
    tref.close(trace.grads["x0"], tx.grad.numpy())


def test_same_operand_twice_gets_both_contributions(ref):
    # y = x * x: two edges into x, summed (d/dx x^2 = 2x).
    g = Graph()
    g.add_node("x", "input", value=[1.0, -2.0, 3.0])
    g.add_node("y", "mul", ["x", "x"])
    trace = ref.run(g, "y", [1.0, 1.0, 1.0])
    assert [(s.operand, s.operand_index) for s in trace.steps] == [("x", 0), ("x", 1)]
    ref.close(trace.grads["x"], [2.0, -4.0, 6.0])
    ref.close(trace.steps[0].accumulated, [1.0, -2.0, 3.0])
    assert trace.steps[0].before is None
    ref.close(trace.steps[1].before, [1.0, -2.0, 3.0])


# --------------------------------------------------------------------------- Jacobian limit


def test_jacobian_limit_boundary():
    at_limit = Graph()
    at_limit.add_node("x", "input", value=np.linspace(-1, 1, 64))
    at_limit.add_node("y", "tanh", ["x"])
    fwd = forward(at_limit)
    step = backward(at_limit, fwd, "y", np.ones(64)).steps[0]
    assert step.jacobian_size == JACOBIAN_LIMIT == 4096
    jac = step.jacobian()
    assert jac is not None
    np.testing.assert_allclose(jac, np.diag(1 - np.tanh(np.linspace(-1, 1, 64)) ** 2))

    over = Graph()
    over.add_node("x", "input", value=np.linspace(-1, 1, 65))
    over.add_node("y", "tanh", ["x"])
    step = backward(over, forward(over), "y", np.ones(65)).steps[0]
    assert step.jacobian_size == 65 * 65
    assert step.jacobian() is None
    assert step.jacobian(limit=10_000) is not None
    forced = step.jacobian(force=True)
    assert forced is not None and forced.shape == (65, 65)
    np.testing.assert_allclose(forced, np.diag(1 - np.tanh(np.linspace(-1, 1, 65)) ** 2))
    assert "diagonal" in step.structure()


def test_vjp_exact_for_large_tensors(tref):
    torch = tref.torch
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(120, 80)), rng.normal(size=(80, 150))
    g = Graph()
    g.add_node("a", "input", value=a)
    g.add_node("b", "input", value=b)
    g.add_node("m", "matmul", ["a", "b"])
    g.add_node("t", "tanh", ["m"])
    g.add_node("s", "mean", ["t"])
    trace = tref.run(g, "s")
    for step in trace.steps:
        assert step.jacobian() is None  # far above the limit
        assert step.structure()
    ta, tb = tref.t64(a, True), tref.t64(b, True)
    torch.tanh(ta @ tb).mean().backward()
    tref.close(trace.grads["a"], ta.grad.numpy())
    tref.close(trace.grads["b"], tb.grad.numpy())
