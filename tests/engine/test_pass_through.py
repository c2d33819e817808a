"""add hands its upstream gradient to both operands and sub to its first: when the
operand has the gradient's shape, the VJP is that very array (no call, no copy), as
PyTorch's AddBackward passes it on; a broadcast operand still gets it summed down."""

from __future__ import annotations

import numpy as np
import pytest

from engine.ops import OPS


@pytest.mark.parametrize(("name", "index"), [("add", 0), ("add", 1), ("sub", 0)])
def test_the_upstream_gradient_itself_reaches_an_operand_of_its_shape(name, index) -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    g = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    out = OPS[name].forward([a, b], {})
    assert OPS[name].vjp(index, g, [a, b], out, {}) is g
    scalar = np.asarray(0.5)
    assert OPS[name].vjp(index, scalar, [np.asarray(1.0), np.asarray(2.0)], scalar, {}) is scalar


@pytest.mark.parametrize("name", ["add", "sub"])
def test_a_broadcast_operand_still_gets_the_sum(name) -> None:
    a, b = np.ones((2, 1)), np.ones((2, 3))
    g = np.arange(6.0).reshape(2, 3)
    vjp = OPS[name].vjp(0, g, [a, b], OPS[name].forward([a, b], {}), {})
    np.testing.assert_array_equal(vjp, g.sum(1, keepdims=True))


def test_sub_negates_into_its_second_operand() -> None:
    a, b, g = np.ones((2, 3)), np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    vjp = OPS["sub"].vjp(1, g, [a, b], a - b, {})
    assert vjp is not g
    np.testing.assert_array_equal(vjp, -g)
