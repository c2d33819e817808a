"""tanh's gradient ``1 - y²`` against the exactly rounded value (rational arithmetic).

PyTorch's tanh_backward rounds ``1 - y²`` once (a fused multiply-add); the engine
computes ``2a - a²`` with ``a = 1 - |y|``, which must stay within one ulp of that
everywhere, including deep in saturation where ``1 - fl(y·y)`` loses every digit.
"""

from __future__ import annotations

import shutil
import sysconfig
from fractions import Fraction

import numpy as np
import pytest

from engine.ops import OPS, elementwise


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


def special_values(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """y over the whole range (saturated, ±1, ±0, subnormal, NaN) and g with zeros,
    infinities and NaN among ordinary values."""
    y = np.concatenate(
        [
            np.tanh(rng.normal(size=3000) * 3.0),
            np.tanh(rng.uniform(-20, 20, 3000)),
            [1.0, -1.0, 0.0, -0.0, 5e-324, -5e-324, 0.5, -0.5, np.nan, 1.0 - 2**-53],
        ]
    )
    g = rng.normal(size=y.shape)
    g[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e308, -1e308, 1.0, -1.0, 2.0, 0.5]
    g[-12:] = g[:12]
    return y, g


def c_compiler() -> str | None:
    """The C compiler Python was built with, where it is on this machine's PATH."""
    cc = (sysconfig.get_config_var("CC") or "").split()
    return shutil.which(cc[0]) if cc else None


def test_the_compiled_loop_is_built_where_a_c_compiler_is() -> None:
    # The install builds engine/_fused.c where it finds a C compiler, and goes on without
    # it where it finds none. Where one is, a failed build would leave every test here
    # checking numpy alone, and tanh's gradient twice as slow.
    assert elementwise.fused_tanh_grad is not None or c_compiler() is None


def test_the_compiled_loop_gives_the_numpy_passes_bits() -> None:
    y, g = special_values(np.random.default_rng(11))
    with np.errstate(all="ignore"):
        want = elementwise.tanh_grad_passes(g, y)
        got = np.empty_like(y)
        elementwise.fused_tanh_grad(g, y, got)
        both = np.isnan(want) & np.isnan(got)
        assert (np.isnan(want) == np.isnan(got)).all()
        np.testing.assert_array_equal(got[~both].view(np.int64), want[~both].view(np.int64))
        n = y.size
        for shape in [(n,), (2, n // 2), (n, 1)]:  # any C-contiguous layout, via the op
            vjp = OPS["tanh"].vjp(0, g.reshape(shape), [y.reshape(shape)], y.reshape(shape), {})
            np.testing.assert_array_equal(
                vjp.ravel()[~both].view(np.int64), want[~both].view(np.int64)
            )


def test_strided_operands_take_the_numpy_passes_with_the_same_bits() -> None:
    rng = np.random.default_rng(12)
    y = np.tanh(rng.normal(size=(40, 30)) * 3.0)
    g = rng.normal(size=(30, 40)).T  # a transposed view, as transpose's VJP hands on
    got = OPS["tanh"].vjp(0, g, [y], y, {})
    want = elementwise.tanh_grad_passes(np.ascontiguousarray(g), y)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    broadcast = OPS["tanh"].vjp(0, np.float64(2.0) * np.ones(()), [y], y, {})  # 0-d g
    np.testing.assert_array_equal(
        broadcast, 2.0 * elementwise.tanh_grad_passes(np.ones(y.shape), y)
    )


@pytest.mark.parametrize(
    "g, y, out, error",
    [
        (np.ones(4, np.float32), np.ones(4), np.empty(4), TypeError),  # not float64
        (np.ones(4), np.ones(5), np.empty(4), ValueError),  # sizes differ
        (np.ones((4, 4)).T[::2], np.ones(8), np.empty(8), (ValueError, BufferError)),  # strided
        (np.ones(4), np.ones(4), np.ones(4), None),  # a buffer of its own: written
    ],
)
def test_the_compiled_loop_refuses_what_it_cannot_read(g, y, out, error) -> None:
    if error is None:
        elementwise.fused_tanh_grad(g, y, out)
        assert (out == 0.0).all()  # 1 - 1² = 0
    else:
        with pytest.raises(error):
            elementwise.fused_tanh_grad(g, y, out)


def test_the_compiled_loop_never_writes_over_its_inputs() -> None:
    y = np.tanh(np.linspace(-3, 3, 16))
    g = np.ones(16)
    with pytest.raises(ValueError, match="share memory"):
        elementwise.fused_tanh_grad(g, y, g)
    with pytest.raises(ValueError, match="share memory"):
        elementwise.fused_tanh_grad(g[:8], y[4:12], y[:8])  # overlapping, not the same start
    read_only = np.empty(16)
    read_only.flags.writeable = False
    with pytest.raises((ValueError, BufferError, TypeError)):
        elementwise.fused_tanh_grad(g, y, read_only)
    np.testing.assert_array_equal(y, np.tanh(np.linspace(-3, 3, 16)))


def test_without_the_compiled_loop_the_op_gives_the_same_bits(monkeypatch) -> None:
    # An install without a C compiler: the op falls back to the numpy passes.
    y, g = special_values(np.random.default_rng(13))
    ok = ~np.isnan(y) & np.isfinite(g)
    with np.errstate(all="ignore"):
        fused = OPS["tanh"].vjp(0, g, [y], y, {})
        monkeypatch.setattr(elementwise, "fused_tanh_grad", None)
        passes = OPS["tanh"].vjp(0, g, [y], y, {})
    np.testing.assert_array_equal(passes[ok].view(np.int64), fused[ok].view(np.int64))
