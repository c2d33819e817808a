"""tanh's gradient ``1 - y²`` against the exactly rounded value (rational arithmetic).

PyTorch's tanh_backward rounds ``1 - y²`` once (a fused multiply-add); the engine
computes ``2a - a²`` with ``a = 1 - |y|``, which must stay within one ulp of that
everywhere, including deep in saturation where ``1 - fl(y·y)`` loses every digit.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from engine.ops import OPS


def exactly_rounded(y: np.ndarray) -> np.ndarray:
    return np.array([float(1 - Fraction(float(v)) ** 2) for v in y.ravel()]).reshape(y.shape)


def test_within_one_ulp_of_the_once_rounded_value() -> None:
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-20.0, 20.0, 400), rng.normal(size=400), [10.0, 0.0, -0.0]])
    y = np.tanh(x)
    grad = OPS["tanh"].vjp(0, np.ones(x.shape), [x], y, {})
    want = exactly_rounded(y)
    assert (np.abs(grad - want) <= np.spacing(want)).all()
    assert (grad == want).mean() > 0.9  # mostly the very same bits
    assert grad[800] == want[800] == 8.244614529632978e-09  # x = 10


def test_scalar_and_tensor_paths_agree_and_scale_by_g() -> None:
    y = np.tanh(np.array([[0.3, -4.0], [12.0, 0.9]]))
    g = np.array([[2.0, -1.0], [0.5, 3.0]])
    tensor = OPS["tanh"].vjp(0, g, [y], y, {})
    scalars = [OPS["tanh"].vjp(0, g[i, j], [y[i, j]], y[i, j], {}) for i in (0, 1) for j in (0, 1)]
    np.testing.assert_array_equal(tensor.ravel(), np.array(scalars, dtype=float))
    assert np.isnan(OPS["tanh"].vjp(0, np.ones(1), [np.ones(1)], np.array([np.nan]), {})).all()


def test_the_tensor_path_is_two_a_minus_a_squared_bit_for_bit() -> None:
    # The same bits as the formula spelt out with binary products, whichever numpy
    # loops compute it (the square is numpy's unary one): the torch agreement above
    # rests on this rounding sequence.
    rng = np.random.default_rng(7)
    y = np.tanh(np.concatenate([rng.normal(size=2000) * 3.0, rng.uniform(-20, 20, 2000)]))
    g = rng.normal(size=y.shape)
    a = 1.0 - np.abs(y)
    want = g * (2.0 * a - a * a)
    got = OPS["tanh"].vjp(0, g, [y], y, {})
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
