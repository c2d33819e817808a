"""0-d operands take a Python-float path through some ops and the backward
accumulation (a 0-d ufunc costs three times a float operation); it must give the
very bits the array path gives, signed zeros included (and NaN where it gives NaN)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.graph import Graph
from engine.ops import OPS

SPECIAL = [-0.0, 0.0, 1.0, -2.5, 0.1, 3.0, 1e308, -1e-310, np.inf, -np.inf, np.nan]
ELEMENTWISE = [
    name
    for name, op in OPS.items()
    if op.arity in (1, 2) and op.category in ("Arithmetic", "Elementwise functions")
    if not op.attrs
]


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> None:
    """The same bits, or NaN in both (numpy itself gives NaNs of either sign)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert type(a) is np.ndarray and a.dtype == np.float64
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_a_0d_operand_gives_the_array_paths_bits(name: str) -> None:
    op = OPS[name]
    for values in itertools.product(SPECIAL, repeat=op.arity):
        scalars = [np.asarray(v) for v in values]
        arrays = [np.array([v]) for v in values]
        with np.errstate(all="ignore"):
            out0, out1 = op.forward(scalars, {}), op.forward(arrays, {})
            bitwise_equal(np.reshape(out0, (1,)), out1)
            for g in (1.0, -0.5, -0.0, np.nan):
                for i in range(op.arity):
                    vjp0 = op.vjp(i, np.asarray(g), scalars, np.asarray(out0), {})
                    vjp1 = op.vjp(i, np.array([g]), arrays, out1, {})
                    bitwise_equal(np.reshape(vjp0, (1,)), vjp1)


def test_accumulating_0d_gradients_gives_the_array_paths_bits() -> None:
    def graph(shape: tuple[int, ...]) -> Graph:
        g = Graph()
        g.add_node("x", "input", value=np.full(shape, 0.1))
        g.add_node("y", "input", value=np.full(shape, -0.3))
        g.add_node("a", "mul", ["x", "y"])
        g.add_node("b", "tanh", ["x"])
        g.add_node("c", "sub", ["a", "b"])
        g.add_node("d", "sigmoid", ["c"])
        g.add_node("e", "add", ["d", "x"])
        g.add_node("f", "mul", ["e", "a"])
        return g

    traces = []
    for shape in ((), (1,)):
        g = graph(shape)
        traces.append(backward(g, forward(g), "f", np.ones(shape)))
    for node in ("x", "y", "a", "c", "e"):
        bitwise_equal(np.reshape(traces[0].grads[node], (1,)), traces[1].grads[node])
    assert all(type(s.accumulated) is np.ndarray for s in traces[0].steps)
