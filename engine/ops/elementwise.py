"""Elementwise functions: exp, log, trig, tanh, sigmoid, relu, abs, sqrt, square, clamp,
maximum / minimum and where, each rounding as PyTorch does in float64."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import shape_text
from .build import (
    binary,
    broadcast_words,
    const_words,
    same_check,
    tangents,
    unary,
    unbroadcast,
)
from .record import (
    KEEPS_BOTH,
    KEEPS_POSITIVE,
    Array,
    Attr,
    Attrs,
    Domain,
    Kinks,
    Op,
    OpShapeError,
    Shape,
    at_zero,
)

fused_tanh_grad: Callable[[Array, Array, Array], None] | None
try:  # one pass instead of six; built by the install where a C compiler is found
    from .._fused import tanh_grad as fused_tanh_grad
except ImportError:  # not built: the numpy passes give the same bits
    fused_tanh_grad = None

#: 1.0 as a 0-d array, for ``1 - |y|`` in place: a Python float operand is converted
#: to one on every ufunc call (0.3 µs of tanh's gradient at 64x64).
_ONE = np.ones(())


def _tanh_grad(g: Array, x: Array, out: Array) -> Array:
    """``g * (1 - out²)`` as PyTorch's tanh_backward computes it, ``1 - y²`` within one
    ulp of its value rounded once (a fused multiply-add there).

    ``1 - y²`` is taken as ``2a - a²`` with ``a = 1 - |y|``. ``1 - fl(y·y)`` would not
    do: near saturation it cancels away all but the rounding error of ``y·y`` (3.7e-9
    relative at x = 10). For ``|y| >= 1/2``, ``a`` is exact (Sterbenz) and so is ``2a``;
    ``a²`` is at most ``a/2`` of the result, so its rounding moves the result by at most
    ``a/4`` of an ulp. Below 1/2 nothing cancels.

    Arrays of one shape go through the compiled loop when it is built (``engine._fused``:
    one pass, the same operations in the same order); the rest through
    :func:`tanh_grad_passes`.
    """
    if out.ndim == 0:  # Python floats round alike, without 0-d ufuncs
        a = 1.0 - abs(float(out))
        r = 2.0 * a - a * a
        return np.asarray(float(g) * r) if g.ndim == 0 else g * r
    if (
        fused_tanh_grad is not None
        and g.shape == out.shape
        and g.dtype == out.dtype == np.float64
        and g.flags.c_contiguous
        and out.flags.c_contiguous
    ):
        result = np.empty(out.shape)
        fused_tanh_grad(g, out, result)
        return result
    return tanh_grad_passes(g, out)


def tanh_grad_passes(g: Array, out: Array) -> Array:
    """:func:`_tanh_grad` on arrays in numpy: six passes (a Dekker split of ``y·y`` took
    thirteen), in place on one buffer with operators, which numpy dispatches faster than
    ufunc calls with ``out=``; ``a²`` is the unary ``square`` (the same IEEE product),
    whose loop runs in half the time of ``a * a`` at 64x64."""
    a = np.abs(out)
    np.subtract(_ONE, a, a)
    square = np.square(a)
    a += a
    a -= square
    if a.shape != g.shape:
        return g * a
    a *= g  # a is ours: no seventh array (a·g rounds as g·a)
    return a


def _relu(x: Array) -> Array:
    """``clamp_min(x, 0)`` as PyTorch: NaN stays NaN and -0.0 stays -0.0 (not below 0)."""
    return np.where(x < 0.0, 0.0, x)


def _sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def _sgn(x: Array) -> Array:
    """``(x > 0) - (x < 0)``, as abs_backward uses it: +0.0 at both zeros and at NaN."""
    return (x > 0.0).astype(np.float64) - (x < 0.0)


_SOFTPLUS_ATTRS = (
    Attr("beta", "number", 1.0, "β: the larger, the closer to relu"),
    Attr("threshold", "number", 20.0, "Above this βx the value is x itself"),
)


def _beta_threshold(attrs: Attrs) -> tuple[float, float]:
    beta, threshold = (float(attrs.get(a.name, a.default)) for a in _SOFTPLUS_ATTRS)
    return beta, threshold


def _softplus_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    """PyTorch's softplus: ``x`` where ``βx > threshold`` (the linear region, for
    numerical stability), else ``log1p(exp(βx)) / β``."""
    (x,), (beta, threshold) = xs, _beta_threshold(attrs)
    xb = x * beta
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        smooth = np.log1p(np.exp(xb)) / beta
    return np.asarray(np.where(xb > threshold, x, smooth), dtype=np.float64)


def _softplus_grad(g: Array, xs: Sequence[Array], attrs: Attrs) -> Array:
    """PyTorch's softplus_backward: ``g`` in the linear region, else ``g·z / (z + 1)``
    with ``z = exp(βx)`` (σ(βx), in its order of operations)."""
    beta, threshold = _beta_threshold(attrs)
    xb = xs[0] * beta
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp(xb)
        smooth = g * z / (z + 1.0)
    return np.asarray(np.where(xb > threshold, g, smooth), dtype=np.float64)


def _softplus_title(a: Sequence[str], attrs: Attrs) -> str:
    values = zip(_SOFTPLUS_ATTRS, _beta_threshold(attrs), strict=True)
    changed = [f"{a.name}={v:g}" for a, v in values if v != a.default]
    return f"softplus({', '.join([a[0], *changed])})"


def _softsign_grad(g: Array, x: Array, out: Array) -> Array:
    """The gradient of PyTorch's ``x / (|x| + 1)`` as its autograd sums it: the
    numerator's ``g / d`` plus the denominator's ``-g·((x / d) / d)·sgn(x)``."""
    d = np.abs(x) + 1.0
    return g / d + (-g * ((x / d) / d)) * _sgn(x)


def _clamp_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    if attrs.get("min") is None and attrs.get("max") is None:
        raise OpShapeError("clamp needs min or max (or both); neither is set")
    return tuple(shapes[0])


def _clamp_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    """``min(max(x, min), max)`` as torch.clamp: NaN stays NaN, -0.0 stays -0.0."""
    _clamp_check([xs[0].shape], attrs)
    out = xs[0]
    low, high = attrs.get("min"), attrs.get("max")
    if low is not None:
        out = np.where(out < low, float(low), out)
    if high is not None:
        out = np.where(out > high, float(high), out)
    return np.asarray(out, dtype=np.float64)


def _clamp_mask(x: Array, attrs: Attrs) -> Array:
    """Where the gradient passes: strictly inside, min < x < max (NaN: nowhere).

    PyTorch 2.14's clamp_backward (the pinned oracle) passes nothing at a bound itself,
    as hardtanh always did; 2.13 and older passed the gradient there (min <= x <= max).
    """
    mask = np.ones(x.shape, dtype=bool)
    if attrs.get("min") is not None:
        mask &= x > attrs["min"]
    if attrs.get("max") is not None:
        mask &= x < attrs["max"]
    return mask


def _clamp_title(a: Sequence[str], attrs: Attrs) -> str:
    bounds = [f"{k}={attrs[k]:g}" for k in ("min", "max") if attrs.get(k) is not None]
    return f"clamp({', '.join([a[0], *bounds])})"


def _extremum_grad(larger: bool) -> Callable[[int, Array, Array, Array, Array], Array]:
    """torch.maximum/minimum's backward: a tie splits g in halves, NaN gives g to both."""

    def grads(i: int, g: Array, a: Array, b: Array, out: Array) -> Array:
        mine, other = (a, b) if i == 0 else (b, a)
        loses = mine < other if larger else mine > other
        return np.where(loses, 0.0, np.where(a == b, g / 2.0, g))

    return grads


#: maximum/minimum where a = b: no derivative (PyTorch, and the engine, split g in halves).
_TIES = Kinks(
    lambda xs, attrs: np.broadcast_to(
        xs[0] == xs[1], np.broadcast_shapes(xs[0].shape, xs[1].shape)
    ),
    "a tie (a = b) has no derivative (the engine, like PyTorch, gives each half)",
)


def _condition(attrs: Attrs) -> Array:
    return np.asarray(attrs.get("condition", True), dtype=bool)


def _where_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    cond = _condition(attrs).shape
    try:
        return tuple(np.broadcast_shapes(cond, *shapes))
    except ValueError:
        listed = " and ".join(shape_text(s) for s in (cond, *shapes))
        raise OpShapeError(f"cannot broadcast shapes {listed} (condition, a, b)") from None


def _where_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    _where_check([x.shape for x in xs], attrs)
    return np.where(_condition(attrs), xs[0], xs[1])


def _where_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    cond = _condition(attrs)
    picked = np.where(cond, g, 0.0) if i == 0 else np.where(cond, 0.0, g)
    return unbroadcast(np.broadcast_to(picked, out.shape), xs[i].shape)


def _where_title(a: Sequence[str], attrs: Attrs) -> str:
    text = json.dumps(attrs.get("condition", True))
    return f"where({text if len(text) <= 16 else 'cond'}, {a[0]}, {a[1]})"


RECORDS: tuple[Op, ...] = (
    unary(
        "exp",
        np.exp,
        lambda g, x, out: g * out,
        "diagonal with entries exp(x)",
        "e to the x.",
        float_grad=True,
        domain=Domain(gives_positive="always"),
    ),
    unary(
        "log",
        np.log,
        lambda g, x, out: g / x,
        "diagonal with entries 1/x",
        "Natural log.",
        kinks=Kinks(lambda xs, attrs: xs[0] <= 0.0, "log at 0 or below is not differentiable"),
        domain=Domain(positive=(0,)),
    ),
    unary("sin", np.sin, lambda g, x, out: g * np.cos(x), "diagonal with entries cos(x)", "Sine."),
    unary(
        "cos", np.cos, lambda g, x, out: -g * np.sin(x), "diagonal with entries -sin(x)", "Cosine."
    ),
    unary(
        "tanh",
        np.tanh,
        _tanh_grad,
        "diagonal with entries 1 - tanh²(x)",
        "Hyperbolic tangent.",
    ),
    unary(
        "sigmoid",
        _sigmoid,
        lambda g, x, out: g * (1.0 - out) * out,  # PyTorch's sigmoid_backward, in its order
        "diagonal with entries σ(x)(1 - σ(x))",
        "Logistic sigmoid 1/(1+e^-x).",
        float_grad=True,
        domain=Domain(gives_positive="always", gives_unit="always"),
    ),
    unary(
        "relu",
        _relu,
        lambda g, x, out: np.where(out <= 0.0, 0.0, g),  # NaN passes g, as threshold_backward
        "diagonal with entries 1 where x > 0, else 0",
        "max(x, 0).",
        torch=("torch.relu", "Tensor.relu", "torch.nn.functional.relu"),
        kinks=at_zero(0, "relu at 0 has no derivative (the engine, like PyTorch, uses 0)"),
    ),
    unary(
        "abs",
        np.abs,
        lambda g, x, out: g * _sgn(x),
        "diagonal with entries sign(x) (0 at x = 0)",
        "Absolute value |x|.",
        kinks=at_zero(0, "abs at 0 has no derivative (the engine, like PyTorch, uses 0)"),
    ),
    unary(
        "sqrt",
        np.sqrt,
        lambda g, x, out: g / (2.0 * out),
        "diagonal with entries 1/(2√x)",
        "Square root.",
        kinks=at_zero(0, "sqrt at 0 has an infinite slope"),
        domain=Domain(positive=(0,), gives_positive="kept"),
    ),
    unary(
        "square",
        lambda x: x * x,
        lambda g, x, out: g * (2.0 * x),
        "diagonal with entries 2x",
        "x², as torch.square (x ** 2).",
        float_grad=True,
        domain=KEEPS_POSITIVE,
    ),
    Op(
        name="clamp",
        arity=1,
        category="Elementwise functions",
        doc="x limited to [min, max]; either bound may be left out.",
        forward=_clamp_forward,
        vjp=lambda i, g, xs, out, attrs: np.where(_clamp_mask(xs[0], attrs), g, 0.0),
        jvp=lambda ts, xs, out, attrs: np.where(
            _clamp_mask(xs[0], attrs), tangents(ts, xs)[0], 0.0
        ),
        check=_clamp_check,
        title=_clamp_title,
        jacobian_words=const_words("diagonal with entries 1 where min ≤ x ≤ max, else 0"),
        attrs=(
            Attr("min", "number-or-null", -1.0, "Lower bound; empty for none"),
            Attr("max", "number-or-null", 1.0, "Upper bound; empty for none"),
        ),
        torch=("torch.clamp", "Tensor.clamp", "torch.clip"),
    ),
    unary(
        "softsign",
        lambda x: x / (np.abs(x) + 1.0),
        _softsign_grad,
        "diagonal with entries 1/(1 + |x|)²",
        "x / (1 + |x|), a slower-saturating tanh.",
        torch=("torch.nn.functional.softsign",),
        domain=KEEPS_BOTH,
    ),
    Op(
        name="softplus",
        arity=1,
        category="Elementwise functions",
        doc="log(1 + exp(βx)) / β, a smooth relu; x itself where βx > threshold.",
        forward=_softplus_forward,
        vjp=lambda i, g, xs, out, attrs: _softplus_grad(g, xs, attrs),
        jvp=lambda ts, xs, out, attrs: _softplus_grad(tangents(ts, xs)[0], xs, attrs),
        check=same_check,
        title=_softplus_title,
        jacobian_words=const_words(
            "diagonal with entries σ(βx), 1 where βx > threshold (the linear region)"
        ),
        attrs=_SOFTPLUS_ATTRS,
        torch=("torch.nn.functional.softplus",),
    ),
    binary(
        "maximum",
        "max",
        np.maximum,
        _extremum_grad(larger=True),
        (
            "diagonal: 1 where a > b, ½ where a = b, else 0",
            "diagonal: 1 where b > a, ½ where a = b, else 0",
        ),
        "Elementwise maximum, broadcasting; a tie splits the gradient.",
        ("torch.maximum", "Tensor.maximum"),
        category="Elementwise functions",
        domain=KEEPS_BOTH,
        kinks=_TIES,
    ),
    binary(
        "minimum",
        "min",
        np.minimum,
        _extremum_grad(larger=False),
        (
            "diagonal: 1 where a < b, ½ where a = b, else 0",
            "diagonal: 1 where b < a, ½ where a = b, else 0",
        ),
        "Elementwise minimum, broadcasting; a tie splits the gradient.",
        ("torch.minimum", "Tensor.minimum"),
        category="Elementwise functions",
        domain=KEEPS_BOTH,
        kinks=_TIES,
    ),
    Op(
        name="where",
        arity=2,
        category="Elementwise functions",
        doc="a where the constant condition holds, else b; broadcasting.",
        forward=_where_forward,
        vjp=_where_vjp,
        jvp=lambda ts, xs, out, attrs: np.asarray(
            np.broadcast_to(_where_forward(tangents(ts, xs), attrs), out.shape), dtype=np.float64
        ),
        check=_where_check,
        title=_where_title,
        jacobian_words=lambda i, shapes, out, attrs: broadcast_words(
            "diagonal with entries 1 where the condition is "
            + ("true" if i == 0 else "false")
            + ", else 0"
        )(i, shapes, out, attrs),
        attrs=(
            Attr("condition", "bool-tensor", True, "true/false, or a nested list of them (a mask)"),
        ),
        torch=("torch.where",),
        domain=KEEPS_BOTH,
        torch_call=lambda op, a, attrs: (
            f"torch.where(torch.tensor({attrs['condition']!r}), {a[0]}, {a[1]})"
        ),
    ),
)
