"""Arithmetic: ``add``, ``sub``, ``mul``, ``div``, ``pow`` (broadcasting) and ``neg``."""

from __future__ import annotations

import operator

import numpy as np

from .build import binary, unary
from .record import KEEPS_POSITIVE, Array, Attrs, Domain, Kinks, Op, at_zero


def _pow(a: Array, b: Array) -> Array:
    """``a ** b`` elementwise, C ``pow`` everywhere as in PyTorch.

    numpy swaps in ``sqrt`` when the exponent is one broadcast number 0.5, and
    ``sqrt`` gives -0.0 for ``pow(-0.0, 0.5)`` = +0.0 (and NaN for ``pow(-inf, 0.5)``
    = inf): a broadcast exponent is spelt out so the general path runs.
    """
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    if np.shape(b) != shape or not shape:
        b = np.full(shape or (1,), b)
        return np.power(a, b).reshape(shape)
    return np.power(a, b)


def _pow_kinks(xs: list[Array], attrs: Attrs) -> Array:
    """0 ** b with b < 1 (and b not 0): an infinite or undefined slope."""
    a, b = xs
    return np.broadcast_to(
        (a == 0.0) & (b < 1.0) & (b != 0.0), np.broadcast_shapes(a.shape, b.shape)
    )


def _pow_grad(i: int, g: Array, a: Array, b: Array, out: Array) -> Array:
    # PyTorch's pow_backward_self / pow_backward_exponent: masks, and products, in its order.
    if i == 0:
        return np.where(b == 0.0, 0.0, g * (b * _pow(a, b - 1.0)))
    return g * np.where((a == 0.0) & (b >= 0.0), 0.0, out * np.log(a))


RECORDS: tuple[Op, ...] = (
    binary(
        "add",
        "+",
        np.add,
        lambda i, g, a, b, out: g,
        ("identity", "identity"),
        "Elementwise sum, broadcasting.",
        ("torch.add", "Tensor.add", "+"),
        on_floats=operator.add,
        passes=(True, True),
        domain=KEEPS_POSITIVE,
    ),
    binary(
        "sub",
        "-",
        np.subtract,
        lambda i, g, a, b, out: g if i == 0 else -g,
        ("identity", "minus identity"),
        "Elementwise difference, broadcasting.",
        ("torch.sub", "Tensor.sub", "-"),
        on_floats=operator.sub,
        passes=(True, False),
    ),
    binary(
        "mul",
        "*",
        np.multiply,
        lambda i, g, a, b, out: g * (b if i == 0 else a),
        ("diagonal with entries of the other operand",) * 2,
        "Elementwise product, broadcasting.",
        ("torch.mul", "Tensor.mul", "*"),
        on_floats=operator.mul,
        domain=KEEPS_POSITIVE,
    ),
    binary(
        "div",
        "/",
        np.divide,
        lambda i, g, a, b, out: g / b if i == 0 else -g * ((a / b) / b),
        ("diagonal with entries 1/b", "diagonal with entries -a/b²"),
        "Elementwise quotient, broadcasting.",
        ("torch.div", "Tensor.div", "/"),
        kinks=at_zero(1, "division by 0 is not differentiable"),
        domain=Domain(positive=(1,), gives_positive="kept"),
    ),
    binary(
        "pow",
        "**",
        _pow,
        _pow_grad,
        ("diagonal with entries b·a^(b-1)", "diagonal with entries a^b·ln a"),
        "Elementwise power with a tensor exponent, broadcasting.",
        ("torch.pow", "Tensor.pow", "**"),
        kinks=Kinks(_pow_kinks, "0 ** b with b < 1 has an infinite or undefined slope"),
        domain=Domain(positive=(0,), gives_positive="first"),
    ),
    unary(
        "neg",
        np.negative,
        lambda g, x, out: -g,
        "minus identity",
        "Negation.",
        torch=("torch.neg", "Tensor.neg", "-"),
        category="Arithmetic",
        title=lambda a, attrs: f"-{a[0]}",
        float_grad=True,
    ),
)
