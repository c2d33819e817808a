"""Losses of (input, target) with PyTorch's default ``reduction="mean"``: mse_loss,
binary_cross_entropy, cross_entropy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import shape_text
from .build import broadcast_check, tangents, unbroadcast
from .record import (
    ANYWHERE,
    Array,
    Attrs,
    Check,
    Domain,
    Forward,
    Jvp,
    Op,
    OpShapeError,
    Shape,
    Vjp,
)
from .softmax import log_softmax, softmax


def _same_shape_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    a, b = shapes
    if a != b:
        raise OpShapeError(
            f"input and target need one shape (as torch), got {shape_text(a)} and {shape_text(b)}"
        )
    return ()


def _mse_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    d = xs[0] - xs[1]
    return np.mean(d * d) if d.size else np.asarray(np.nan)


def _mse_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    d = xs[0] - xs[1]
    grad = (2.0 / max(d.size, 1)) * d * g  # an empty input's gradient is empty
    return unbroadcast(grad if i == 0 else -grad, xs[i].shape)


def _mse_jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    d = xs[0] - xs[1]
    t0, t1 = tangents(ts, xs)
    if not d.size:  # the mean of nothing: NaN, as the loss
        return np.asarray(np.nan)
    return np.asarray(np.sum((2.0 / d.size) * d * (t0 - t1)))


#: PyTorch's EPSILON in binary_cross_entropy_backward: 1e-12 as a float32.
_BCE_EPSILON = float(np.float32(1e-12))


def _bce_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    p, y = xs
    _same_shape_check([p.shape, y.shape], attrs)
    for name, v in (("input", p), ("target", y)):
        if not ((v >= 0.0) & (v <= 1.0)).all():  # NaN too, as torch refuses it
            raise ValueError(f"binary_cross_entropy needs {name} values between 0 and 1")
    log_p = np.maximum(np.log(p), -100.0)  # PyTorch clamps each log at -100
    log_q = np.maximum(np.log1p(-p), -100.0)
    return np.mean(-(y * log_p + (1.0 - y) * log_q)) if p.size else np.asarray(np.nan)


def _bce_partials(p: Array, y: Array) -> tuple[Array, Array]:
    """d loss / d p and d loss / d y per element, before the 1/n of the mean."""
    dp = (p - y) / np.maximum((1.0 - p) * p, _BCE_EPSILON)
    dy = -(np.log(p) - np.log1p(-p))  # -logit(p)
    return dp, dy


def _bce_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    return g * _bce_partials(xs[0], xs[1])[i] / xs[0].size


def _bce_jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    parts = _bce_partials(xs[0], xs[1])
    total = sum(np.sum(d * t) for d, t in zip(parts, ts, strict=True) if t is not None)
    return np.asarray(total / xs[0].size, dtype=np.float64)


def _ce_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    a, b = shapes
    if not a:
        raise OpShapeError("cross_entropy needs logits of at least 1 dim (the classes), got ()")
    if a != b:
        raise OpShapeError(
            "cross_entropy needs target class probabilities of the logits' shape, "
            f"got {shape_text(a)} and {shape_text(b)}"
        )
    return ()


def _ce_parts(x: Array) -> tuple[int, int]:
    """(class dim, how many rows the mean is over): classes are dim 1, or dim 0 of a 1-D x."""
    dim = 1 if x.ndim > 1 else 0
    return dim, (x.size // x.shape[dim]) if x.shape[dim] else 0


def _ce_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    x, y = xs
    _ce_check([x.shape, y.shape], attrs)
    dim, n = _ce_parts(x)
    return np.asarray(-np.sum(y * log_softmax(x, dim)) / n if n else np.nan)


def _ce_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    x, y = xs
    dim, n = _ce_parts(x)
    if i == 1:
        return -g * log_softmax(x, dim) / n
    return g * (softmax(x, dim) * np.sum(y, axis=dim, keepdims=True) - y) / n


def _ce_jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    return np.asarray(
        sum(
            np.sum(t * _ce_vjp(i, np.ones(()), xs, out, attrs))
            for i, t in enumerate(ts)
            if t is not None
        ),
        dtype=np.float64,
    )


def _loss(
    name: str,
    forward: Forward,
    vjp: Vjp,
    jvp: Jvp,
    check: Check,
    words: Sequence[str],
    doc: str,
    domain: Domain = ANYWHERE,
) -> Op:
    """A loss of (input, target) with PyTorch's default reduction='mean': a scalar."""
    return Op(
        name=name,
        arity=2,
        category="Losses",
        doc=doc,
        forward=forward,
        vjp=vjp,
        jvp=jvp,
        check=check,
        title=lambda a, attrs: f"{name}({a[0]}, {a[1]})",
        jacobian_words=lambda i, shapes, out, attrs: words[i],
        torch=(f"torch.nn.functional.{name}",),
        domain=domain,
    )


def _mse_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    broadcast_check(shapes, attrs)
    return ()


RECORDS: tuple[Op, ...] = (
    _loss(
        "mse_loss",
        _mse_forward,
        _mse_vjp,
        _mse_jvp,
        _mse_check,
        ("one row: 2(x - y)/n", "one row: -2(x - y)/n"),
        "Mean squared error mean((x - y)²), broadcasting as torch.",
    ),
    _loss(
        "binary_cross_entropy",
        _bce_forward,
        _bce_vjp,
        _bce_jvp,
        _same_shape_check,
        ("one row: (p - y) / (p(1 - p)) / n", "one row: -logit(p)/n = (ln(1 - p) - ln p)/n"),
        "mean(-(y ln p + (1 - y) ln(1 - p))) for probabilities p; each log clamped at -100.",
        Domain(unit=(0, 1)),
    ),
    _loss(
        "cross_entropy",
        _ce_forward,
        _ce_vjp,
        _ce_jvp,
        _ce_check,
        (
            "one row: (softmax(x)·Σy - y)/N; for one-hot y: softmax(x) - y, over N rows",
            "one row: -log_softmax(x)/N",
        ),
        "Softmax cross-entropy of logits (classes: dim 1, or dim 0 if 1-D) against "
        "target class probabilities (one-hot for hard labels); mean over the N rows.",
    ),
)
