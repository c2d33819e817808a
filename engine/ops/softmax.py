"""``softmax`` and ``log_softmax`` along one dim (the losses reuse both)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .build import dim_index, reduce_dims
from .record import DIM_HELP, DIM_RANGE, Array, Attr, Attrs, Domain, Op, Shape, Title


def _one_dim_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    reduce_dims(len(shapes[0]), attrs.get("dim", -1))
    return tuple(shapes[0])


def softmax(x: Array, dim: int) -> Array:
    if x.ndim == 0 or x.size == 0:  # exp(x - x) / itself, as torch: NaN at ±inf, empty stays
        return x - x + 1.0
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax(x: Array, dim: int) -> Array:
    if x.ndim == 0 or x.size == 0:  # no max to shift by over a zero-size dim: torch's empty
        return x - x
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _sum_along(x: Array, dim: int) -> Array:
    return np.sum(x, axis=dim, keepdims=True) if x.ndim else x


def _softmax_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    # PyTorch's _softmax_backward_data: s * (g - Σ g·s)
    dim = dim_index(out.ndim, attrs.get("dim", -1))
    return out * (g - _sum_along(g * out, dim))


def _log_softmax_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    # PyTorch's _log_softmax_backward_data: g - exp(out) * Σ g
    dim = dim_index(out.ndim, attrs.get("dim", -1))
    return g - np.exp(out) * _sum_along(g, dim)


def _dim_title(fn: str) -> Title:
    return lambda a, attrs: f"{fn}({a[0]}, dim={attrs.get('dim', -1)})"


RECORDS: tuple[Op, ...] = (
    Op(
        name="softmax",
        arity=1,
        category="Elementwise functions",
        doc="exp(x) / Σ exp(x) along dim: each slice becomes probabilities.",
        forward=lambda xs, attrs: softmax(xs[0], dim_index(xs[0].ndim, attrs.get("dim", -1))),
        vjp=_softmax_vjp,
        jvp=lambda ts, xs, out, attrs: (
            np.zeros(out.shape) if ts[0] is None else _softmax_vjp(0, ts[0], xs, out, attrs)
        ),
        check=_one_dim_check,
        title=_dim_title("softmax"),
        jacobian_words=lambda i, shapes, out, attrs: (
            f"block diagonal, one block per slice along dim {attrs.get('dim', -1)}: "
            "diag(s) - s sᵀ (symmetric)"
        ),
        attrs=(Attr("dim", "int", -1, DIM_HELP, **DIM_RANGE),),
        torch=("torch.softmax", "Tensor.softmax", "torch.nn.functional.softmax"),
        domain=Domain(gives_positive="always", gives_unit="always"),
    ),
    Op(
        name="log_softmax",
        arity=1,
        category="Elementwise functions",
        doc="log(softmax(x)) along dim, computed stably.",
        forward=lambda xs, attrs: log_softmax(xs[0], dim_index(xs[0].ndim, attrs.get("dim", -1))),
        vjp=_log_softmax_vjp,
        jvp=lambda ts, xs, out, attrs: (
            np.zeros(out.shape)
            if ts[0] is None
            else ts[0] - _sum_along(np.exp(out) * ts[0], dim_index(out.ndim, attrs.get("dim", -1)))
        ),
        check=_one_dim_check,
        title=_dim_title("log_softmax"),
        jacobian_words=lambda i, shapes, out, attrs: (
            f"block diagonal, one block per slice along dim {attrs.get('dim', -1)}: "
            "I - 1 sᵀ (each row minus the softmax)"
        ),
        attrs=(Attr("dim", "int", -1, DIM_HELP, **DIM_RANGE),),
        torch=("torch.log_softmax", "Tensor.log_softmax", "torch.nn.functional.log_softmax"),
    ),
)
