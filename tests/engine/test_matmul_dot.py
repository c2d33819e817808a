"""Two matrices are multiplied with ``ndarray.dot`` (the generalised ufunc's dispatch
costs more than the product at small sizes): the same BLAS call, so the very bits
``np.matmul`` gives, forward and backward (the left operand's VJP multiplies by a
contiguous copy of ``b.T``), and the same refusal."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.ops import OPS
from engine.ops.record import OpShapeError

MATMUL = OPS["matmul"]


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize(
    ("m", "n", "p"), list(itertools.product([1, 2, 5, 64], [1, 3, 64], [1, 4, 33]))
)
def test_forward_and_vjps_have_matmuls_bits(m: int, n: int, p: int) -> None:
    rng = np.random.default_rng(m * 100 + n * 10 + p)
    a, b = rng.normal(size=(m, n)), rng.normal(size=(n, p))
    for x, y in ((a, b), (np.asfortranarray(a), b), (a, np.ascontiguousarray(b.T).T)):
        out = MATMUL.forward([x, y], {})
        same_bits(out, np.matmul(x, y))
        g = rng.normal(size=out.shape)
        same_bits(MATMUL.vjp(0, g, [x, y], out, {}), np.matmul(g, np.ascontiguousarray(y.T)))
        same_bits(MATMUL.vjp(1, g, [x, y], out, {}), np.matmul(x.T, g))


def test_mismatched_matrices_are_refused_in_torchs_words() -> None:
    with pytest.raises(OpShapeError, match=r"cannot multiply shapes \(2, 3\) and \(4, 5\)"):
        MATMUL.forward([np.ones((2, 3)), np.ones((4, 5))], {})
