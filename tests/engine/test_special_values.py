"""The ops at the values where PyTorch's exact choices show: NaN, signed zeros,
infinities and saturation. Values and gradients must match torch float64 to the
last few bits, zeros with their sign and NaN where torch has NaN."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.ops import OPS

SPECIAL = [-0.0, 0.0, -1.0, 1.0, -2.5, 0.5, 2.0, 3.0, np.inf, -np.inf, np.nan]
# Where each unary op saturates, underflows or overflows, and its ordinary range.
EXTREMES = np.concatenate(
    [
        [-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-300, -1e-300, 1e-8, -1e-8],
        np.linspace(-40.0, 40.0, 161),
        [700.0, 709.0, 710.0, 745.0, -745.0, -800.0, 1e300, -1e300],
    ]
)
ELEMENTWISE = [
    name
    for name, op in OPS.items()
    if op.arity == 1 and op.category in ("Arithmetic", "Elementwise functions") and not op.attrs
]
BINARY = [name for name, op in OPS.items() if op.category == "Arithmetic" and op.arity == 2]


def same(actual, expected, rtol: float = 1e-13) -> None:
    """Equal within ``rtol``, NaN where NaN, and every zero with the same sign."""
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    np.testing.assert_allclose(a, e, rtol=rtol, atol=0.0, equal_nan=True)
    zeros = (a == 0.0) & (e == 0.0)
    np.testing.assert_array_equal(np.signbit(a[zeros]), np.signbit(e[zeros]))


def _grads(tref, op, xs, v):
    torch = tref.torch
    graph = tref.single_op_graph(op, xs)
    fwd = forward(graph)
    trace = backward(graph, fwd, "y", v)
    txs = [tref.t64(x, True) for x in xs]
    ty = tref.torch_op(op, txs, {})
    expected = torch.autograd.grad(ty, txs, grad_outputs=tref.t64(v))
    return fwd.values["y"], ty.detach().numpy(), trace, [e.numpy() for e in expected]


def test_relu_passes_nan_and_keeps_negative_zero(tref):
    x = np.array([np.nan, -0.0, 0.0, -1.0, 2.0])
    for g in (1.0, -1.0):
        value, expected, trace, (grad,) = _grads(tref, "relu", [x], np.full(5, g))
        same(value, expected)
        same(trace.grads["x0"], grad)
    assert trace.grads["x0"][0] == -1.0  # at NaN the gradient passes g through, as torch
    with np.errstate(divide="ignore"):
        assert 1.0 / value[1] == -np.inf  # relu(-0.0) is -0.0


@pytest.mark.parametrize("b", [[0.5], [[0.5], [1.5]], 0.5, [0.5, 0.5, 0.5]])
def test_pow_of_negative_zero_by_a_broadcast_half(tref, b):
    a = np.array([[-0.0, 4.0, -np.inf]] * 2)
    b = np.array(b)
    with np.errstate(all="ignore"):
        value, expected, trace, grads = _grads(tref, "pow", [a, b], np.ones(a.shape))
    assert not np.signbit(value[:, 0]).any() and (value[:, 2] == np.inf).all()
    same(value, expected)  # +0.0 and inf, not sqrt's -0.0 and NaN
    same(trace.grads["x0"], grads[0])


def test_tanh_gradient_at_saturation_is_rounded_once_as_torch(tref):
    torch = tref.torch
    x = np.array([10.0])
    trace = tref.run(tref.single_op_graph("tanh", [x]), "y", np.ones(1))
    tx = tref.t64(x, True)
    torch.tanh(tx).backward(torch.ones(1, dtype=torch.float64))
    assert trace.grads["x0"][0] == tx.grad.item() == 8.244614529632978e-09


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_unary_gradient_near_extremes_is_computed_as_torch(tref, op):
    # The gradient from torch's own forward value (libm and torch may differ in the
    # last bit of tanh(x) or exp(x), which 1 - tanh² then magnifies): same formula,
    # same rounding, so the same bits up to the last one or two.
    torch = tref.torch
    x = np.abs(EXTREMES) if op == "log" else EXTREMES
    v = np.random.default_rng(5).uniform(-2.0, 2.0, size=x.shape)
    tx = tref.t64(x, True)
    ty = tref.torch_op(op, [tx], {})
    (grad,) = torch.autograd.grad(ty, [tx], grad_outputs=tref.t64(v))
    y = ty.detach().numpy()
    with np.errstate(all="ignore"):
        same(OPS[op].forward([x], {}), y)
        same(OPS[op].vjp(0, v, [x], y, {}), grad.numpy())
        same(OPS[op].jvp([v], [x], y, {}), grad.numpy())  # diagonal: J·v = Jᵀ·v


@pytest.mark.parametrize("op", BINARY)
def test_binary_special_values_match_torch(tref, op):
    a, b = (m.ravel() for m in np.meshgrid(SPECIAL, SPECIAL))
    for g in (1.0, -1.0):
        with np.errstate(all="ignore"):
            value, expected, trace, grads = _grads(tref, op, [a, b], np.full(a.shape, g))
        same(value, expected)
        same(trace.grads["x0"], grads[0])
        same(trace.grads["x1"], grads[1])


@pytest.mark.parametrize("op", ELEMENTWISE + BINARY)
def test_jacobian_zeros_have_torchs_sign(tref, op):
    torch = tref.torch
    base = np.array([-0.0, 0.0, -1.5, 0.5, 2.0])
    xs = [np.abs(base) + 0.5 if op == "log" else base]
    if OPS[op].arity == 2:
        xs.append(np.array([0.0, -0.0, 2.0, -0.5, 3.0]))
    graph = tref.single_op_graph(op, xs)
    with np.errstate(all="ignore"):
        fwd = forward(graph)
        trace = backward(graph, fwd, "y", np.ones(5))
        jacs = torch.autograd.functional.jacobian(
            lambda *t: tref.torch_op(op, t, {}), tuple(tref.t64(x) for x in xs)
        )
    jacs = jacs if isinstance(jacs, tuple) else (jacs,)
    for step in trace.steps:
        same(step.jacobian(), jacs[step.operand_index].numpy())


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize(
    "attrs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}], ids=["all", "dim1", "dim0"]
)
def test_extreme_ties_and_nan_split_as_torch(tref, op, attrs):
    # Over all elements torch splits the gradient evenly among the ties; along a dim
    # it all goes to the index torch.max/min returns (the first; a NaN wins).
    x = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, -1.0, -1.0], [np.nan, 0.0, np.nan, 5.0]])
    for rows in (x[:2], x):
        graph = tref.single_op_graph(op, [rows], attrs)
        fwd = forward(graph)
        v = np.arange(1.0, 1.0 + fwd.values["y"].size).reshape(fwd.values["y"].shape)
        trace = backward(graph, fwd, "y", v)
        tx = tref.t64(rows, True)
        ty = tref.torch_op(op, [tx], attrs)
        (grad,) = tref.torch.autograd.grad(ty, [tx], grad_outputs=tref.t64(v))
        same(fwd.values["y"], ty.detach().numpy())
        same(trace.grads["x0"], grad.numpy())


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("attrs", [{}, {"dim": 1}], ids=["all", "dim1"])
@pytest.mark.parametrize("upstream", [np.nan, np.inf], ids=["nan", "inf"])
def test_extreme_gradient_leaves_unpicked_elements_exactly_zero(tref, op, attrs, upstream):
    # torch writes the gradient into zeros at the picked elements, so a NaN or inf
    # upstream reaches only those; weights times the upstream would give 0 * nan = nan.
    x = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    graph = tref.single_op_graph(op, [x], attrs)
    fwd = forward(graph)
    v = np.full(fwd.values["y"].shape, upstream)
    trace = backward(graph, fwd, "y", v)
    tx = tref.t64(x, True)
    ty = tref.torch_op(op, [tx], attrs)
    (grad,) = tref.torch.autograd.grad(ty, [tx], grad_outputs=tref.t64(v))
    same(trace.grads["x0"], grad.numpy())
    assert np.count_nonzero(trace.grads["x0"] == 0.0) > 0
