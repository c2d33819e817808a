"""Every two-operand op accepts exactly the shape pairs PyTorch accepts, and gives
the shape PyTorch gives: 200 random pairs each, half of them built to nearly fit."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import forward
from engine.ops import OPS
from engine.ops.record import OpShapeError

BINARY = [name for name, op in OPS.items() if op.arity == 2]
PAIRS = 200


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 5)))


def _near(rng: np.random.Generator, a: tuple[int, ...]) -> tuple[int, ...]:
    """A shape made from ``a``: dims dropped from the front, some set to 1, the
    last two swapped, or one dim appended: shapes that fit or just miss."""
    b = list(a[rng.integers(0, len(a) + 1) :] if a else [])
    b = [1 if rng.random() < 0.25 else n for n in b]
    if len(b) >= 2 and rng.random() < 0.5:
        b[-2], b[-1] = b[-1], b[-2]
    if rng.random() < 0.3:
        b.append(int(rng.integers(1, 4)))
    if rng.random() < 0.3:
        b.insert(0, int(rng.integers(1, 4)))
    return tuple(b)


def _pairs(op: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    rng = np.random.default_rng(sum(map(ord, op)))
    out = []
    for k in range(PAIRS):
        a = _shape(rng)
        b = _shape(rng) if k % 2 else _near(rng, a)
        out.append((a, b) if rng.random() < 0.5 else (b, a))
    return out


@pytest.mark.parametrize("op", BINARY)
def test_binary_op_accepts_exactly_what_torch_accepts(tref, op):
    accepted = 0
    for a, b in _pairs(op):
        xs = [np.full(a, 0.5), np.full(b, 0.25)]
        try:
            expected = tuple(tref.torch_op(op, [tref.t64(x) for x in xs], {}).shape)
        except (RuntimeError, ValueError, IndexError):
            expected = None
        fwd = forward(tref.single_op_graph(op, xs))
        got = tuple(fwd.values["y"].shape) if "y" in fwd.values else None
        assert got == expected, (op, a, b, fwd.errors.get("y"))
        try:
            checked = OPS[op].check([a, b], {})
        except OpShapeError:
            checked = None
        assert checked == expected, (op, a, b)
        accepted += expected is not None
    assert 0 < accepted < PAIRS  # both verdicts were exercised
