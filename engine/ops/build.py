"""Shared pieces of op records: un-broadcasting, dims, JVPs of linear ops, titles and
Jacobian words, and the builders of elementwise :func:`unary` and :func:`binary` ops.

Broadcasting is undone in exactly one place, :func:`unbroadcast`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import shape_text
from .record import (
    ANYWHERE,
    Array,
    Attrs,
    Domain,
    Forward,
    Jvp,
    Kinks,
    Op,
    OpShapeError,
    Shape,
    Title,
    Words,
)


def unbroadcast(g: Array, shape: Shape) -> Array:
    """Sum ``g`` down to ``shape``: the adjoint of numpy/PyTorch broadcasting."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape:
        return np.asarray(g.sum())
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    return g.sum(axis=axes).reshape(shape)


def broadcast_dims(operand: Shape, out: Shape) -> list[int]:
    """The output dims over which an operand of shape ``operand`` was broadcast."""
    lead = len(out) - len(operand)
    dims = list(range(lead))
    dims += [lead + i for i, n in enumerate(operand) if n == 1 and out[lead + i] != 1]
    return dims


def reduce_dims(ndim: int, dim: int | list[int] | None) -> tuple[int, ...]:
    """Normalise a ``dim`` attribute (None, int or list) to sorted non-negative axes."""
    if dim is None or (isinstance(dim, list) and not dim):
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    span = max(ndim, 1)
    out = set()
    for d in dims:
        if not -span <= d < span:
            raise OpShapeError(f"dim {d} is out of range for a {ndim}-D tensor")
        out.add(d % span)
    if len(out) != len(dims):
        raise OpShapeError(f"dim {dim} names a dimension twice")
    return tuple(sorted(out)) if ndim else ()


def dim_index(ndim: int, dim: int) -> int:
    """One ``dim`` of a tensor, non-negative (a 0-D tensor has dims 0 and -1, as in PyTorch)."""
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise OpShapeError(f"dim {dim} is out of range for a {ndim}-D tensor")
    return dim % span if ndim else 0


def tangents(tangents: Sequence[Array | None], xs: Sequence[Array]) -> list[Array]:
    """Every operand's tangent, zeros where it carries none."""
    pairs = zip(tangents, xs, strict=True)
    return [np.zeros(x.shape) if t is None else np.asarray(t) for t, x in pairs]


def linear_jvp(forward: Forward) -> Jvp:
    """A linear op's JVP is the op itself applied to the tangents."""
    return lambda ts, xs, out, attrs: np.asarray(forward(tangents(ts, xs), attrs))


def bilinear_jvp(forward: Forward) -> Jvp:
    """f(a, b) bilinear: J·(ta, tb) = f(ta, b) + f(a, tb)."""

    def jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        total = np.zeros(out.shape)
        for i, t in enumerate(ts):
            if t is not None:
                args = list(xs)
                args[i] = np.asarray(t)
                total = total + forward(args, attrs)
        return total

    return jvp


def broadcast_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " and ".join(shape_text(s) for s in shapes)
        raise OpShapeError(f"cannot broadcast shapes {listed}") from None


def same_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    return tuple(shapes[0])


def binary_title(sym: str) -> Title:
    return lambda a, attrs: f"{a[0]} {sym} {a[1]}"


def call_title(fn: str) -> Title:
    return lambda a, attrs: f"{fn}({a[0]})"


def broadcast_words(base: str) -> Words:
    def words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        dims = broadcast_dims(shapes[i], out)
        if not dims:
            return base
        which = ", ".join(str(d) for d in dims)
        return f"{base}; broadcast: summed over dim {which}"

    return words


def const_words(text: str) -> Words:
    return lambda i, shapes, out, attrs: text


def binary(
    name: str,
    sym: str,
    fwd: Callable[[Array, Array], Array],
    grads: Callable[[int, Any, Any, Any, Array], Any],  # Arrays, or floats for 0-d
    words: Sequence[str],
    doc: str,
    torch: tuple[str, ...],
    category: str = "Arithmetic",
    on_floats: Callable[[float, float], float] | None = None,
    passes: tuple[bool, bool] = (False, False),
    kinks: Kinks | None = None,
    domain: Domain = ANYWHERE,
) -> Op:
    """A broadcasting elementwise binary op.

    ``grads(i, g, a, b, out)`` is ``g`` times the elementwise derivative by operand
    ``i``, before un-broadcasting. The Jacobian is diagonal (up to broadcasting),
    so the same function gives the JVP: ``Σᵢ grads(i, tᵢ broadcast, a, b, out)``.

    ``on_floats`` is the op on Python floats, for ops whose numpy ufunc is one IEEE
    operation (add, sub, mul): on 0-d operands the forward and ``grads`` (then plain
    arithmetic too) run on floats, the same bits at a third of a 0-d ufunc's cost.

    ``passes[i]``: ``grads`` hands ``g`` itself on to operand ``i`` (add's operands,
    sub's first), so when that operand has ``g``'s shape (nothing to un-broadcast) the
    VJP is ``g`` without a call: on a backward pass that is most add and sub edges.
    """

    def forward(xs: Sequence[Array], attrs: Attrs) -> Array:
        a, b = xs
        if on_floats is not None and a.ndim == 0 and b.ndim == 0:
            return np.asarray(on_floats(float(a), float(b)))
        return fwd(a, b)

    def vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        if passes[i] and g.shape == xs[i].shape:
            return g
        a, b = xs
        if on_floats is not None and g.ndim == 0 and a.ndim == 0 and b.ndim == 0:
            gf = float(g)
            grad = grads(i, gf, float(a), float(b), out)
            return g if grad is gf else np.asarray(grad)  # add passes g on as it is
        return unbroadcast(grads(i, g, a, b, out), xs[i].shape)

    def jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        total = np.zeros(out.shape)
        for i, t in enumerate(ts):
            if t is not None:
                total = total + grads(i, np.broadcast_to(t, out.shape), xs[0], xs[1], out)
        return total

    def jwords(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        return broadcast_words(words[i])(i, shapes, out, attrs)

    return Op(
        name=name,
        arity=2,
        category=category,
        doc=doc,
        forward=forward,
        vjp=vjp,
        jvp=jvp,
        check=broadcast_check,
        title=binary_title(sym),
        jacobian_words=jwords,
        torch=torch,
        kinks=kinks,
        domain=domain,
    )


def unary(
    name: str,
    fwd: Callable[[Array], Array],
    grad: Callable[[Any, Any, Any], Any],  # Arrays, or floats with float_grad
    words: str,
    doc: str,
    torch: tuple[str, ...] | None = None,
    category: str = "Elementwise functions",
    title: Title | None = None,
    float_grad: bool = False,
    kinks: Kinks | None = None,
    domain: Domain = ANYWHERE,
) -> Op:
    """An elementwise op; its Jacobian is diagonal, so ``grad(g, x, out)`` (``g``
    times the derivative) is both the VJP and the JVP.

    ``float_grad``: ``grad`` is plain arithmetic without division (IEEE operations
    numpy rounds alike), so on a 0-d operand it runs on Python floats."""

    def vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        x = xs[0]
        if float_grad and g.ndim == 0 and x.ndim == 0:
            return np.asarray(grad(float(g), float(x), float(out)))
        return grad(g, x, out)

    return Op(
        name=name,
        arity=1,
        category=category,
        doc=doc,
        forward=lambda xs, attrs: fwd(xs[0]),
        vjp=vjp,
        jvp=lambda ts, xs, out, attrs: (
            np.zeros(out.shape) if ts[0] is None else grad(np.asarray(ts[0]), xs[0], out)
        ),
        check=same_check,
        title=title or call_title(name),
        jacobian_words=const_words(words),
        torch=torch or (f"torch.{name}", f"Tensor.{name}"),
        kinks=kinks,
        domain=domain,
    )
