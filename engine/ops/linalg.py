"""Linear algebra: ``matmul`` with torch.matmul's promotion and batch rules, ``transpose``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import shape_text
from .build import bilinear_jvp, binary_title, broadcast_dims, dim_index, linear_jvp, unbroadcast
from .record import (
    DIM_HELP,
    DIM_RANGE,
    KEEPS_BOTH,
    KEEPS_POSITIVE,
    Array,
    Attr,
    Attrs,
    Op,
    OpShapeError,
    Shape,
)


def _matmul_parts(a: Shape, b: Shape) -> tuple[Shape, Shape, Shape]:
    """torch.matmul's rules: (batch shape, promoted a, promoted b), or OpShapeError.

    A 1-D ``a`` becomes a row (1, n), a 1-D ``b`` a column (n, 1); dims before the
    last two are batch dims and broadcast. The promoted dims leave the result again.
    """
    if not a or not b:
        raise OpShapeError(
            f"matmul needs operands of at least 1 dim, got {shape_text(a)} and {shape_text(b)}"
        )
    pa = (1, *a) if len(a) == 1 else tuple(a)
    pb = (*b, 1) if len(b) == 1 else tuple(b)
    if pa[-1] != pb[-2]:
        raise OpShapeError(
            f"cannot multiply shapes {shape_text(a)} and {shape_text(b)}: "
            f"inner sizes {pa[-1]} and {pb[-2]} differ"
        )
    try:
        batch = tuple(np.broadcast_shapes(pa[:-2], pb[:-2]))
    except ValueError:
        raise OpShapeError(
            f"cannot multiply shapes {shape_text(a)} and {shape_text(b)}: batch dims "
            f"{shape_text(pa[:-2])} and {shape_text(pb[:-2])} do not broadcast"
        ) from None
    return batch, pa, pb


def _matmul_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    a, b = shapes
    batch, pa, pb = _matmul_parts(a, b)
    rows = (pa[-2],) if len(a) > 1 else ()
    cols = (pb[-1],) if len(b) > 1 else ()
    return batch + rows + cols


def _matmul_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    """Two matrices go through ``ndarray.dot``: the same BLAS call and bits as
    ``np.matmul`` there, without the generalised ufunc's dispatch (0.5 µs a call)."""
    a, b = xs
    try:
        return a.dot(b) if a.ndim == b.ndim == 2 else np.matmul(a, b)
    except ValueError:  # numpy refuses what torch refuses, but says it less clearly
        _matmul_parts(a.shape, b.shape)
        raise


def _matmul_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    a, b = xs
    if a.ndim == b.ndim == 2:  # the common case: no promotion, no batch (dot: as forward)
        # numpy multiplies by a contiguous copy of b.T faster than by the transposed view
        return g.dot(np.ascontiguousarray(b.T)) if i == 0 else a.T.dot(g)
    if a.ndim == 1 and b.ndim == 1:
        return g * (b if i == 0 else a)
    batch, pa, pb = _matmul_parts(a.shape, b.shape)
    g = np.reshape(g, batch + (pa[-2], pb[-1]))  # the promoted dims back in
    if i == 0:
        grad = g @ np.swapaxes(np.reshape(b, pb), -1, -2)
        return unbroadcast(grad, pa).reshape(a.shape)
    grad = np.swapaxes(np.reshape(a, pa), -1, -2) @ g
    return unbroadcast(grad, pb).reshape(b.shape)


def _matmul_words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
    a, b = shapes
    if len(a) == 1 and len(b) == 1:
        return f"one row holding {'b' if i == 0 else 'a'}: the dot product's gradient"
    if i == 0:
        words = (
            "block structure: each output row takes that row of the left factor times "
            "the right factor (rows of the right factor transposed)"
        )
    else:
        words = (
            "block structure: each output column takes the left factor times that "
            "column of the right factor (rows of the left factor)"
        )
    batch, pa, pb = _matmul_parts(a, b)
    if batch:
        words += f"; one such block per batch element {shape_text(batch)}"
        dims = broadcast_dims((pa if i == 0 else pb)[:-2], batch)
        if dims:
            words += f"; broadcast: summed over batch dim {', '.join(map(str, dims))}"
    return words


def _swapped(ndim: int, attrs: Attrs) -> tuple[int, int]:
    """The two dims ``transpose`` swaps (a 0-D or 1-D tensor has just dim 0)."""
    return dim_index(ndim, attrs.get("dim0", 0)), dim_index(ndim, attrs.get("dim1", -1))


def _transpose_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s = list(shapes[0])
    if len(s) >= 3 and (attrs.get("dim0", 0), attrs.get("dim1", -1)) == (0, -1):
        # The default is a matrix's .T; on more dims a PyTorch user means x.mT (the last
        # two) as often as the first and last: ask, rather than guess either.
        raise OpShapeError(
            f"transpose's default (dims 0 and -1) is a matrix's .T; for this {len(s)}-D "
            f"tensor write dim0=-2, dim1=-1 for each matrix's transpose (x.mT), or "
            f"dim0=0, dim1={len(s) - 1} to swap the first and last dims"
        )
    d0, d1 = _swapped(len(s), attrs)
    if s:
        s[d0], s[d1] = s[d1], s[d0]
    return tuple(s)


def _transpose_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    x = xs[0]
    d0, d1 = _swapped(x.ndim, attrs)
    return np.swapaxes(x, d0, d1) if x.ndim else x


def _transpose_title(a: Sequence[str], attrs: Attrs) -> str:
    d0, d1 = attrs.get("dim0", 0), attrs.get("dim1", -1)
    return f"{a[0]}.T" if (d0, d1) == (0, -1) else f"{a[0]}.transpose({d0}, {d1})"


RECORDS: tuple[Op, ...] = (
    Op(
        name="matmul",
        arity=2,
        category="Linear algebra",
        doc="Matrix product with torch.matmul's rules (1-D promotion, broadcast batches).",
        forward=_matmul_forward,
        vjp=_matmul_vjp,
        jvp=bilinear_jvp(_matmul_forward),
        check=_matmul_check,
        title=binary_title("@"),
        jacobian_words=_matmul_words,
        torch=("torch.matmul", "Tensor.matmul", "@"),
        domain=KEEPS_POSITIVE,
    ),
    Op(
        name="transpose",
        arity=1,
        category="Linear algebra",
        doc="Swap two dims: a matrix's rows and columns by default (dims 0 and -1).",
        forward=_transpose_forward,
        vjp=lambda i, g, xs, out, attrs: _transpose_forward([g], attrs),
        jvp=linear_jvp(_transpose_forward),
        check=_transpose_check,
        title=_transpose_title,
        jacobian_words=lambda i, shapes, out, attrs: (
            "permutation: element (i, j) goes to (j, i)"
            if len(shapes[0]) <= 2
            else f"permutation: dims {attrs.get('dim0', 0)} and {attrs.get('dim1', -1)} swap"
        ),
        attrs=(
            Attr("dim0", "int", 0, DIM_HELP, **DIM_RANGE),
            Attr("dim1", "int", -1, DIM_HELP, **DIM_RANGE),
        ),
        torch=("torch.transpose", "Tensor.transpose", "torch.t", "Tensor.t", ".T", ".mT"),
        domain=KEEPS_BOTH,
    ),
)
