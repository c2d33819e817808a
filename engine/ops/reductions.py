"""Reductions: ``sum`` and ``mean`` (over all or some dims), ``logsumexp``, ``max``, ``min``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import shape_text
from .build import dim_index, linear_jvp, reduce_dims
from .record import (
    DIM_HELP,
    DIMS_HELP,
    KEEPDIM,
    KEEPS_BOTH,
    KEEPS_POSITIVE,
    Array,
    Attr,
    Attrs,
    Forward,
    Jvp,
    Kinks,
    Op,
    OpShapeError,
    Shape,
    Title,
    TorchArgs,
    Vjp,
    Words,
)
from .torch_source import Source, function_call, written_attrs

#: ``x.sum(dim, dtype=...)``: the dtype changes nothing the graph records.
_REDUCTION_ARGS = TorchArgs(ignored=("dtype",))


def _reduce_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    shape = shapes[0]
    dims = reduce_dims(len(shape), attrs.get("dim"))
    if attrs.get("keepdim"):
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _extreme_ties(larger: bool) -> Callable[[list[Array], Attrs], Array]:
    """The elements that tie for the extreme of their slice (over ``dim``, or all)."""

    def where(xs: list[Array], attrs: Attrs) -> Array:
        x = xs[0]
        axes = _axes(x.ndim, attrs.get("dim"))
        extreme = (np.max if larger else np.min)(x, axis=axes, keepdims=True)
        hits = x == extreme
        return hits & (np.sum(hits, axis=axes, keepdims=True) > 1)

    return where


def _axes(ndim: int, dim: int | list[int] | None) -> tuple[int, ...] | None:
    """``dim`` as numpy's ``axis``: None for a full reduction (the fast path)."""
    if dim is None or (isinstance(dim, list) and not dim):
        return None
    return reduce_dims(ndim, dim)


def _reduce_forward(mean: bool) -> Forward:
    def forward(xs: Sequence[Array], attrs: Attrs) -> Array:
        x = xs[0]
        out = x.sum(axis=_axes(x.ndim, attrs.get("dim")), keepdims=bool(attrs.get("keepdim")))
        if mean:  # sum / n, as PyTorch computes it
            out = out / (x.size // out.size if out.size else 1)
        return out

    return forward


def _expand_back(g: Array, shape: Shape, attrs: Attrs, count: int = 1) -> Array:
    """Undo a reduction's shape change: ``g`` (divided by ``count``) over the operand's shape."""
    axes = _axes(len(shape), attrs.get("dim"))
    if axes is not None and not attrs.get("keepdim"):
        g = g.reshape(tuple(1 if d in axes else n for d, n in enumerate(shape)))
    out = np.empty(shape)
    out[...] = g / count if count != 1 else g
    return out


def _mean_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    x = xs[0]
    return _expand_back(g, x.shape, attrs, x.size // out.size if out.size else 1)


def _reduced_count(shape: Shape, attrs: Attrs) -> int:
    dims = reduce_dims(len(shape), attrs.get("dim"))
    return int(np.prod([shape[d] for d in dims])) if dims else 1


def _reduce_title(fn: str) -> Title:
    def title(a: Sequence[str], attrs: Attrs) -> str:
        args = [a[0]]
        if attrs.get("dim") is not None:
            args.append(f"dim={attrs['dim']}")
        if attrs.get("keepdim"):
            args.append("keepdim=True")
        return f"{fn}({', '.join(args)})"

    return title


def _reduce_words(kind: str) -> Words:
    def words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        n = _reduced_count(shapes[0], attrs)
        over = "all elements" if attrs.get("dim") in (None, []) else f"dim {attrs['dim']}"
        if kind == "sum":
            return f"sum over {over}: all ones"
        return f"mean over {over}: 1/n = 1/{n}"

    return words


def _reduction(name: str, vjp: Vjp, doc: str) -> Op:
    """``sum`` or ``mean``: over all elements, or over ``dim`` (int or list), ``keepdim``."""
    forward = _reduce_forward(mean=name == "mean")
    return Op(
        name=name,
        arity=1,
        category="Reductions",
        doc=doc,
        forward=forward,
        vjp=vjp,
        jvp=linear_jvp(forward),
        check=_reduce_check,
        title=_reduce_title(name),
        jacobian_words=_reduce_words(name),
        attrs=(Attr("dim", "int-or-list", None, DIMS_HELP), KEEPDIM),
        torch=(f"torch.{name}", f"Tensor.{name}"),
        domain=KEEPS_BOTH if name == "mean" else KEEPS_POSITIVE,
        torch_args=_REDUCTION_ARGS,
    )


def _logsumexp_call(op: Op, a: Sequence[str], attrs: Attrs) -> str:
    """PyTorch's logsumexp has no "all dims" value: ``tuple(range(x.ndim))`` for null and
    ``list(range(x.ndim))`` for [], which the importer reads back as those."""
    written = written_attrs(op.attrs, attrs)
    if written.get("dim") in (None, []):
        whole = "list" if written["dim"] == [] else "tuple"
        written["dim"] = Source(f"{whole}(range({a[0]}.ndim))")
    return function_call(op, a, written)


def _extreme_call(op: Op, a: Sequence[str], attrs: Attrs) -> str:
    """Over a dim PyTorch's max/min return (values, indices): the values."""
    call = function_call(op, a, written_attrs(op.attrs, attrs))
    return call if attrs.get("dim") is None else call + ".values"


def _logsumexp_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    """log Σ exp(x) over ``dim``, shifted by the max as PyTorch (an infinite max is not)."""
    x = xs[0]
    axes = reduce_dims(x.ndim, attrs.get("dim"))
    keep = bool(attrs.get("keepdim"))
    if x.ndim == 0:  # the max shift leaves x itself (x = 1000 gives 1000, not inf)
        return x + 0.0
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axes or None, keepdims=keep))
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    out = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=axes)


def _keep(a: Array, shape: Shape, attrs: Attrs) -> Array:
    """A reduction's result or gradient with the reduced dims kept (size 1)."""
    axes = reduce_dims(len(shape), attrs.get("dim"))
    return np.reshape(a, tuple(1 if d in axes else n for d, n in enumerate(shape)))


def _logsumexp_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    x = xs[0]
    return _keep(g, x.shape, attrs) * np.exp(x - _keep(out, x.shape, attrs))


def _logsumexp_jvp(
    ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs
) -> Array:
    if ts[0] is None:
        return np.zeros(out.shape)
    x = xs[0]
    weights = np.exp(x - _keep(out, x.shape, attrs))
    return _reduce_forward(mean=False)([weights * ts[0]], attrs)


def _extreme_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    shape, dim = shapes[0], attrs.get("dim")
    if dim is None:
        if attrs.get("keepdim"):
            raise OpShapeError("keepdim needs a dim (torch.max(x) reduces to one number)")
        if 0 in shape:
            raise OpShapeError(f"cannot take the extreme of an empty tensor {shape_text(shape)}")
        return ()
    axis = dim_index(len(shape), dim)
    if shape and shape[axis] == 0:
        raise OpShapeError(f"cannot take the extreme over dim {dim} of size 0")
    return _reduce_check(shapes, attrs)


def _extreme_index(x: Array, attrs: Attrs, larger: bool) -> Array:
    """The index torch.max/min(x, dim) returns: the first extreme (a NaN first of all)."""
    dim = dim_index(x.ndim, attrs["dim"])
    pick = np.argmax if larger else np.argmin
    return pick(x, axis=dim, keepdims=True) if x.ndim else np.zeros((), dtype=np.intp)


def _extreme_forward(larger: bool) -> Forward:
    def forward(xs: Sequence[Array], attrs: Attrs) -> Array:
        x = xs[0]
        _extreme_check([x.shape], attrs)
        reduce = np.max if larger else np.min
        if attrs.get("dim") is None:
            return reduce(x)
        if x.ndim == 0:
            return x.copy()
        return reduce(x, axis=dim_index(x.ndim, attrs["dim"]), keepdims=bool(attrs.get("keepdim")))

    return forward


def _ties(x: Array, out: Array) -> Array:
    """Where x equals its extreme over all elements (NaNs tie with a NaN extreme)."""
    return np.isnan(x) if np.isnan(out) else x == out


def _extreme_weights(x: Array, out: Array, attrs: Attrs, larger: bool) -> Array:
    """d out / d x as weights on x: with a dim, a one at the index torch picks; over
    all elements, the gradient split evenly among the ties (NaNs tie with NaN)."""
    if attrs.get("dim") is None:
        hit = _ties(x, out)
        return hit / np.count_nonzero(hit)
    if x.ndim == 0:
        return np.ones(())
    weights = np.zeros(x.shape)
    index = _extreme_index(x, attrs, larger)
    np.put_along_axis(weights, index, 1.0, dim_index(x.ndim, attrs["dim"]))
    return weights


def _extreme_vjp(larger: bool) -> Vjp:
    """The gradient written into zeros at the picked elements, as PyTorch does on the CPU
    (not weights times g: a NaN or inf upstream must leave the other elements exactly 0)."""

    def vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        x = xs[0]
        grad = np.zeros(x.shape)
        if attrs.get("dim") is None:
            hit = _ties(x, out)
            grad[hit] = g / np.count_nonzero(hit)
            return grad
        if x.ndim == 0:
            return np.array(g, dtype=float)
        g = g if attrs.get("keepdim") else _keep(g, x.shape, attrs)
        axis = dim_index(x.ndim, attrs["dim"])
        np.put_along_axis(grad, _extreme_index(x, attrs, larger), g, axis)
        return grad

    return vjp


def _extreme_jvp(larger: bool) -> Jvp:
    def jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        if ts[0] is None:
            return np.zeros(out.shape)
        x = xs[0]
        picked = _extreme_weights(x, out, attrs, larger) * ts[0]
        if attrs.get("dim") is None:
            return np.asarray(picked.sum())
        if x.ndim == 0:
            return np.asarray(picked)
        return picked.sum(axis=dim_index(x.ndim, attrs["dim"]), keepdims=bool(attrs.get("keepdim")))

    return jvp


def _extreme_words(fn: str) -> Words:
    def words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        if attrs.get("dim") is None:
            return f"one row: 1/k at each of the k elements equal to the {fn}, else 0"
        return f"selection: a one at the first {fn} of each slice along dim {attrs['dim']}"

    return words


RECORDS: tuple[Op, ...] = (
    _reduction(
        "sum",
        lambda i, g, xs, out, attrs: _expand_back(g, xs[0].shape, attrs),
        "Sum over all elements, or over dim (int or list).",
    ),
    _reduction("mean", _mean_vjp, "Mean over all elements, or over dim (int or list)."),
    Op(
        name="logsumexp",
        arity=1,
        category="Reductions",
        doc="log Σ exp(x) over dim (int or list; null: all), computed stably.",
        forward=_logsumexp_forward,
        vjp=_logsumexp_vjp,
        jvp=_logsumexp_jvp,
        check=_reduce_check,
        title=_reduce_title("logsumexp"),
        jacobian_words=lambda i, shapes, out, attrs: (
            "one row per reduced slice holding softmax(x) of that slice"
        ),
        attrs=(Attr("dim", "int-or-list", -1, DIMS_HELP), KEEPDIM),
        torch=("torch.logsumexp", "Tensor.logsumexp"),
        torch_args=_REDUCTION_ARGS,
        torch_call=_logsumexp_call,
    ),
    *(
        Op(
            name=fn,
            arity=1,
            category="Reductions",
            doc=f"The {'largest' if fn == 'max' else 'smallest'} element, or per slice along dim.",
            forward=_extreme_forward(fn == "max"),
            vjp=_extreme_vjp(fn == "max"),
            jvp=_extreme_jvp(fn == "max"),
            check=_extreme_check,
            title=_reduce_title(fn),
            jacobian_words=_extreme_words(fn),
            attrs=(Attr("dim", "int-or-null", None, DIM_HELP + "; empty for all"), KEEPDIM),
            torch=(f"torch.{fn}", f"Tensor.{fn}", f"torch.a{fn}"),
            domain=KEEPS_BOTH,
            torch_call=_extreme_call,
            kinks=Kinks(
                _extreme_ties(fn == "max"),
                "a tie for the " + ("largest" if fn == "max" else "smallest")
                + " has no derivative (the engine, like PyTorch, splits the gradient evenly)",
            ),
        )
        for fn in ("max", "min")
    ),
)
