"""THE op table: one record per op, forward, VJP and JVP side by side.

Everything that needs to know about an op reads this table, in the spirit of
HIPS autograd's ``defvjp`` and PyTorch's ``derivatives.yaml``: the engine, titles
on the canvas, the palette and quick search (category, description), the
inspector (one widget per attribute, chosen by the attribute's kind), the file
format (attribute validation here; the schema's op list and attribute rules,
kept equal to :func:`schema_defs` by a test), Jacobian descriptions, forward mode
(``jvp``) and the PyTorch bridge (``torch``). The leaves ``input`` and ``const``
are records too, with arity 0. Semantics follow PyTorch in float64,
broadcasting where PyTorch broadcasts; broadcasting is undone in exactly one
place, :func:`unbroadcast`.

Adding an op means adding one record below (and its tests): nothing else lists ops.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import shape_text

Array = np.ndarray
Shape = tuple[int, ...]
Attrs = dict[str, Any]
Forward = Callable[[Sequence[Array], Attrs], Array]
Vjp = Callable[[int, Array, Sequence[Array], Array, Attrs], Array]
Jvp = Callable[[Sequence["Array | None"], Sequence[Array], Array, Attrs], Array]
Check = Callable[[Sequence[Shape], Attrs], Shape]
Title = Callable[[Sequence[str], Attrs], str]
Words = Callable[[int, Sequence[Shape], Shape, Attrs], str]

LEAF_OPS = ("input", "const")
CATEGORIES = (
    "Leaves",
    "Arithmetic",
    "Elementwise functions",
    "Reductions",
    "Linear algebra",
    "Shape",
    "Losses",
)


class OpShapeError(ValueError):
    """Raised by an op's ``check`` with a message that names the shapes involved."""


# --------------------------------------------------------------------------- attributes


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_bool_tensor(v: Any) -> bool:
    """true/false, or a non-empty rectangular nested list of them."""
    if isinstance(v, bool):
        return True
    if not isinstance(v, list) or not v:
        return False
    try:
        return np.array(v).dtype == np.bool_
    except ValueError:  # ragged
        return False


_INT = {"type": "integer"}
_INTS = {"type": "array", "items": {"title": "an integer", "type": "integer"}}


@dataclass(frozen=True)
class AttrKind:
    """What values an attribute kind takes: a test, the words for an error, a schema."""

    want: str
    accepts: Callable[[Any], bool]
    schema: dict[str, Any]


ATTR_KINDS: dict[str, AttrKind] = {
    "int": AttrKind("an integer", _is_int, _INT),
    "int-or-null": AttrKind(
        "null or an integer",
        lambda v: v is None or _is_int(v),
        {"anyOf": [{"type": "null"}, _INT]},
    ),
    "int-or-list": AttrKind(
        "null, an integer or a list of integers",
        lambda v: v is None or _is_int(v) or (isinstance(v, list) and all(map(_is_int, v))),
        {"anyOf": [{"type": "null"}, _INT, {"type": "array", "items": _INT}]},
    ),
    "bool": AttrKind("true or false", lambda v: isinstance(v, bool), {"type": "boolean"}),
    "shape": AttrKind(
        "a list of integers", lambda v: isinstance(v, list) and all(map(_is_int, v)), _INTS
    ),
    "number-or-null": AttrKind(
        "null or a number",
        lambda v: v is None or _is_number(v),
        {"anyOf": [{"type": "null"}, {"type": "number"}]},
    ),
    "bool-tensor": AttrKind(
        "true, false or a nested list of them",
        _is_bool_tensor,
        {"$ref": "#/$defs/boolTensor"},
    ),
}


@dataclass(frozen=True)
class Attr:
    """One attribute of an op: its name, kind (a key of :data:`ATTR_KINDS`), default,
    allowed integer range (``low``/``high``, inclusive, None: unbounded) and the
    one-line help a student sees next to its widget."""

    name: str
    kind: str
    default: Any
    help: str = ""
    low: int | None = None
    high: int | None = None

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a valid value of this attribute (None: it is)."""
        kind = ATTR_KINDS[self.kind]
        if not kind.accepts(value):
            return f"attribute {self.name!r} must be {kind.want}, got {value!r}"
        low = self.low if self.low is not None else -np.inf
        high = self.high if self.high is not None else np.inf
        if _is_int(value) and not low <= value <= high:
            return f"attribute {self.name!r} must be from {self.low} to {self.high}, got {value}"
        return None


_DIM_RANGE = {"low": -64, "high": 64}
_DIM_HELP = "Negative values count from the end, as in PyTorch"
_DIMS_HELP = "Empty for all dims, an integer, or a list such as 0, 1"
_KEEPDIM = Attr("keepdim", "bool", False, "Keep the reduced dims as size 1")


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class Op:
    """One op: how to compute it, push a tangent forward, pull a gradient back.

    - ``arity``: operand count; None: variadic (at least one); 0: a leaf.
    - ``forward(xs, attrs)``: the value.
    - ``vjp(i, g, xs, out, attrs)``: the gradient with respect to operand ``i``
      given the upstream gradient ``g`` (shaped like ``out``).
    - ``jvp(tangents, xs, out, attrs)``: the output tangent ``J·t`` given one
      tangent per operand (None for an operand that carries none; all None gives
      zeros). For every op ``⟨u, Jᵀv⟩ = ⟨v, Ju⟩``, which the tests check.
    - ``check(shapes, attrs)``: the output shape, or :class:`OpShapeError`.
    - ``title(operand_names, attrs)``: how the node reads (``a + b``, ``sum(a)``).
    - ``jacobian_words(i, shapes, out_shape, attrs)``: the Jacobian's structure.
    - ``attrs``: the attribute specs, in display order.
    - ``torch``: the op's PyTorch spellings, for reading and writing PyTorch code:
      ``torch.X`` is a function (``torch.nn.functional.X`` spelled out),
      ``Tensor.X`` a method, and a bare symbol (``+``, ``@``, ``.T``, ``[]``) an
      operator. The first entry is the preferred spelling.
    """

    name: str
    arity: int | None
    category: str
    doc: str
    forward: Forward
    vjp: Vjp
    jvp: Jvp
    check: Check
    title: Title
    jacobian_words: Words
    attrs: tuple[Attr, ...] = ()
    torch: tuple[str, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.arity == 0

    @property
    def defaults(self) -> Attrs:
        """Attribute name -> default value."""
        return {a.name: a.default for a in self.attrs}

    def attr(self, name: str) -> Attr:
        return next(a for a in self.attrs if a.name == name)


# --------------------------------------------------------------------------- helpers


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


def _tangents(tangents: Sequence[Array | None], xs: Sequence[Array]) -> list[Array]:
    """Every operand's tangent, zeros where it carries none."""
    pairs = zip(tangents, xs, strict=True)
    return [np.zeros(x.shape) if t is None else np.asarray(t) for t, x in pairs]


def _linear_jvp(forward: Forward) -> Jvp:
    """A linear op's JVP is the op itself applied to the tangents."""
    return lambda ts, xs, out, attrs: np.asarray(forward(_tangents(ts, xs), attrs))


def _bilinear_jvp(forward: Forward) -> Jvp:
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


def _no_rule(*args: Any) -> Any:
    raise TypeError("a leaf has no rule: its value is given, not computed")


def _broadcast_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " and ".join(shape_text(s) for s in shapes)
        raise OpShapeError(f"cannot broadcast shapes {listed}") from None


def _same_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    return tuple(shapes[0])


def _binary_title(sym: str) -> Title:
    return lambda a, attrs: f"{a[0]} {sym} {a[1]}"


def _call_title(fn: str) -> Title:
    return lambda a, attrs: f"{fn}({a[0]})"


def _broadcast_words(base: str) -> Words:
    def words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        dims = broadcast_dims(shapes[i], out)
        if not dims:
            return base
        which = ", ".join(str(d) for d in dims)
        return f"{base}; broadcast: summed over dim {which}"

    return words


def _const_words(text: str) -> Words:
    return lambda i, shapes, out, attrs: text


def _leaf(name: str, doc: str, formula: str) -> Op:
    """``input`` or ``const``: arity 0, its value given in the file, no rules."""
    return Op(
        name=name,
        arity=0,
        category="Leaves",
        doc=doc,
        forward=_no_rule,
        vjp=_no_rule,
        jvp=_no_rule,
        check=_no_rule,
        title=lambda a, attrs: formula,
        jacobian_words=_no_rule,
        torch=("torch.tensor",),
    )


def _binary(
    name: str,
    sym: str,
    fwd: Callable[[Array, Array], Array],
    grads: Callable[[int, Array, Array, Array, Array], Array],
    words: Sequence[str],
    doc: str,
    torch: tuple[str, ...],
    category: str = "Arithmetic",
) -> Op:
    """A broadcasting elementwise binary op.

    ``grads(i, g, a, b, out)`` is ``g`` times the elementwise derivative by operand
    ``i``, before un-broadcasting. The Jacobian is diagonal (up to broadcasting),
    so the same function gives the JVP: ``Σᵢ grads(i, tᵢ broadcast, a, b, out)``.
    """

    def vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        return unbroadcast(grads(i, g, xs[0], xs[1], out), xs[i].shape)

    def jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        total = np.zeros(out.shape)
        for i, t in enumerate(ts):
            if t is not None:
                total = total + grads(i, np.broadcast_to(t, out.shape), xs[0], xs[1], out)
        return total

    def jwords(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        return _broadcast_words(words[i])(i, shapes, out, attrs)

    return Op(
        name=name,
        arity=2,
        category=category,
        doc=doc,
        forward=lambda xs, attrs: fwd(xs[0], xs[1]),
        vjp=vjp,
        jvp=jvp,
        check=_broadcast_check,
        title=_binary_title(sym),
        jacobian_words=jwords,
        torch=torch,
    )


def _unary(
    name: str,
    fwd: Callable[[Array], Array],
    grad: Callable[[Array, Array, Array], Array],
    words: str,
    doc: str,
    torch: tuple[str, ...] | None = None,
    category: str = "Elementwise functions",
    title: Title | None = None,
) -> Op:
    """An elementwise op; its Jacobian is diagonal, so ``grad(g, x, out)`` (``g``
    times the derivative) is both the VJP and the JVP."""
    return Op(
        name=name,
        arity=1,
        category=category,
        doc=doc,
        forward=lambda xs, attrs: fwd(xs[0]),
        vjp=lambda i, g, xs, out, attrs: grad(g, xs[0], out),
        jvp=lambda ts, xs, out, attrs: (
            np.zeros(out.shape) if ts[0] is None else grad(np.asarray(ts[0]), xs[0], out)
        ),
        check=_same_check,
        title=title or _call_title(name),
        jacobian_words=_const_words(words),
        torch=torch or (f"torch.{name}", f"Tensor.{name}"),
    )


# --------------------------------------------------------------------------- pow


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


def _pow_grad(i: int, g: Array, a: Array, b: Array, out: Array) -> Array:
    # PyTorch's pow_backward_self / pow_backward_exponent: masks, and products, in its order.
    if i == 0:
        return np.where(b == 0.0, 0.0, g * (b * _pow(a, b - 1.0)))
    return g * np.where((a == 0.0) & (b >= 0.0), 0.0, out * np.log(a))


# --------------------------------------------------------------------------- reductions


def _reduce_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    shape = shapes[0]
    dims = reduce_dims(len(shape), attrs.get("dim"))
    if attrs.get("keepdim"):
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


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
        jvp=_linear_jvp(forward),
        check=_reduce_check,
        title=_reduce_title(name),
        jacobian_words=_reduce_words(name),
        attrs=(Attr("dim", "int-or-list", None, _DIMS_HELP), _KEEPDIM),
        torch=(f"torch.{name}", f"Tensor.{name}"),
    )


# --------------------------------------------------------------------------- matmul


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
    a, b = xs
    if not (a.ndim == b.ndim == 2 and a.shape[1] == b.shape[0]):  # else the rules below
        _matmul_parts(a.shape, b.shape)  # numpy agrees on what it accepts, but says it less clearly
    return np.matmul(a, b)


def _matmul_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    a, b = xs
    if a.ndim == b.ndim == 2:  # the common case: no promotion, no batch
        return g @ b.T if i == 0 else a.T @ g
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
        words = "block structure: each output row takes that row of A times B (rows of Bᵀ)"
    else:
        words = "block structure: each output column takes A times that column of B (rows of A)"
    batch, pa, pb = _matmul_parts(a, b)
    if batch:
        words += f"; one such block per batch element {shape_text(batch)}"
        dims = broadcast_dims((pa if i == 0 else pb)[:-2], batch)
        if dims:
            words += f"; broadcast: summed over batch dim {', '.join(map(str, dims))}"
    return words


# --------------------------------------------------------------------------- shape ops


def _swapped(ndim: int, attrs: Attrs) -> tuple[int, int]:
    """The two dims ``transpose`` swaps (a 0-D or 1-D tensor has just dim 0)."""
    return _dim(ndim, attrs.get("dim0", 0)), _dim(ndim, attrs.get("dim1", -1))


def _transpose_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s = list(shapes[0])
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


def _stack_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            listed = ", ".join(shape_text(t) for t in shapes)
            raise OpShapeError(f"stack needs operands of one shape, got {listed}")
    dim = attrs.get("dim", 0)
    nd = len(first) + 1
    if not -nd <= dim < nd:
        raise OpShapeError(f"dim {dim} is out of range for stacking {len(first)}-D tensors")
    dim %= nd
    return tuple(first[:dim]) + (len(shapes),) + tuple(first[dim:])


def _stack_dim(xs_ndim: int, attrs: Attrs) -> int:
    return attrs.get("dim", 0) % (xs_ndim + 1)


def _select_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s = shapes[0]
    dim, index = attrs.get("dim", 0), attrs.get("index", 0)
    if not s:
        raise OpShapeError("select needs a tensor with at least 1 dim, got a scalar")
    if not -len(s) <= dim < len(s):
        raise OpShapeError(f"dim {dim} is out of range for shape {shape_text(s)}")
    dim %= len(s)
    if not -s[dim] <= index < s[dim]:
        raise OpShapeError(f"index {index} is out of range for size {s[dim]} of dim {dim}")
    return tuple(s[:dim]) + tuple(s[dim + 1 :])


def _stack_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    dim, nd = attrs.get("dim", 0), xs[0].ndim + 1
    if not -nd <= dim < nd:  # _stack_dim alone would wrap it around
        _stack_check([x.shape for x in xs], attrs)
    return np.stack(xs, axis=dim)


def _select_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    if xs[0].ndim == 0:  # numpy would take from a scalar as if it were 1-D
        _select_check([()], attrs)
    return np.take(xs[0], attrs.get("index", 0), axis=attrs.get("dim", 0))


def _select_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    x = xs[0]
    grad = np.zeros(x.shape)
    dim = attrs.get("dim", 0) % x.ndim
    grad[(slice(None),) * dim + (attrs.get("index", 0),)] = g
    return grad


def _select_title(a: Sequence[str], attrs: Attrs) -> str:
    dim, index = attrs.get("dim", 0), attrs.get("index", 0)
    return f"{a[0]}[{index}]" if dim == 0 else f"{a[0]}.select({dim}, {index})"


def _reshape_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    # Checked first: numpy reads any negative size as "infer", PyTorch only -1.
    return np.reshape(xs[0], _reshape_check([xs[0].shape], attrs))


def _reshape_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s, target = shapes[0], tuple(attrs.get("shape", []))
    size = int(np.prod(s))
    unknown = [d for d in target if d == -1]
    known = int(np.prod([d for d in target if d != -1]))
    bad = len(unknown) > 1 or any(d < -1 for d in target)
    if bad or (unknown and (known == 0 or size % known)) or (not unknown and known != size):
        raise OpShapeError(f"cannot reshape {shape_text(s)} ({size} elements) to {list(target)}")
    return tuple(size // known if d == -1 else d for d in target)


# --------------------------------------------------------------------------- more elementwise


def _sgn(x: Array) -> Array:
    """``(x > 0) - (x < 0)``, as abs_backward uses it: +0.0 at both zeros and at NaN."""
    return (x > 0.0).astype(np.float64) - (x < 0.0)


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
    """Where the gradient passes: min <= x <= max (NaN: nowhere), as clamp_backward."""
    mask = np.ones(x.shape, dtype=bool)
    if attrs.get("min") is not None:
        mask &= x >= attrs["min"]
    if attrs.get("max") is not None:
        mask &= x <= attrs["max"]
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


# --------------------------------------------------------------------------- softmax family


def _dim(ndim: int, dim: int) -> int:
    """One ``dim`` of a tensor, non-negative (a 0-D tensor has dims 0 and -1, as in PyTorch)."""
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise OpShapeError(f"dim {dim} is out of range for a {ndim}-D tensor")
    return dim % span if ndim else 0


def _one_dim_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    reduce_dims(len(shapes[0]), attrs.get("dim", -1))
    return tuple(shapes[0])


def _softmax(x: Array, dim: int) -> Array:
    if x.ndim == 0:
        return np.where(np.isnan(x), x, 1.0)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x: Array, dim: int) -> Array:
    if x.ndim == 0:
        return x - x
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _sum_along(x: Array, dim: int) -> Array:
    return np.sum(x, axis=dim, keepdims=True) if x.ndim else x


def _softmax_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    # PyTorch's _softmax_backward_data: s * (g - Σ g·s)
    dim = _dim(out.ndim, attrs.get("dim", -1))
    return out * (g - _sum_along(g * out, dim))


def _log_softmax_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    # PyTorch's _log_softmax_backward_data: g - exp(out) * Σ g
    dim = _dim(out.ndim, attrs.get("dim", -1))
    return g - np.exp(out) * _sum_along(g, dim)


def _dim_title(fn: str) -> Title:
    return lambda a, attrs: f"{fn}({a[0]}, dim={attrs.get('dim', -1)})"


def _logsumexp_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    """log Σ exp(x) over ``dim``, shifted by the max as PyTorch (an infinite max is not)."""
    x = xs[0]
    axes = reduce_dims(x.ndim, attrs.get("dim"))
    keep = bool(attrs.get("keepdim"))
    if x.ndim == 0 or x.size == 0:
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


# --------------------------------------------------------------------------- max / min


def _extreme_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    shape, dim = shapes[0], attrs.get("dim")
    if dim is None:
        if attrs.get("keepdim"):
            raise OpShapeError("keepdim needs a dim (torch.max(x) reduces to one number)")
        if 0 in shape:
            raise OpShapeError(f"cannot take the extreme of an empty tensor {shape_text(shape)}")
        return ()
    axis = _dim(len(shape), dim)
    if shape and shape[axis] == 0:
        raise OpShapeError(f"cannot take the extreme over dim {dim} of size 0")
    return _reduce_check(shapes, attrs)


def _extreme_index(x: Array, attrs: Attrs, larger: bool) -> Array:
    """The index torch.max/min(x, dim) returns: the first extreme (a NaN first of all)."""
    dim = _dim(x.ndim, attrs["dim"])
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
        return reduce(x, axis=_dim(x.ndim, attrs["dim"]), keepdims=bool(attrs.get("keepdim")))

    return forward


def _extreme_weights(x: Array, out: Array, attrs: Attrs, larger: bool) -> Array:
    """d out / d x as weights on x: with a dim, a one at the index torch picks; over
    all elements, the gradient split evenly among the ties (NaNs tie with NaN)."""
    if attrs.get("dim") is None:
        hit = np.isnan(x) if np.isnan(out) else x == out
        return hit / np.count_nonzero(hit)
    if x.ndim == 0:
        return np.ones(())
    weights = np.zeros(x.shape)
    np.put_along_axis(weights, _extreme_index(x, attrs, larger), 1.0, _dim(x.ndim, attrs["dim"]))
    return weights


def _extreme_vjp(larger: bool) -> Vjp:
    def vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
        x = xs[0]
        w = _extreme_weights(x, out, attrs, larger)
        g = g if attrs.get("dim") is None or attrs.get("keepdim") else _keep(g, x.shape, attrs)
        return w * g

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
        return picked.sum(axis=_dim(x.ndim, attrs["dim"]), keepdims=bool(attrs.get("keepdim")))

    return jvp


def _extreme_words(fn: str) -> Words:
    def words(i: int, shapes: Sequence[Shape], out: Shape, attrs: Attrs) -> str:
        if attrs.get("dim") is None:
            return f"one row: 1/k at each of the k elements equal to the {fn}, else 0"
        return f"selection: a one at the first {fn} of each slice along dim {attrs['dim']}"

    return words


# --------------------------------------------------------------------------- where


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


# --------------------------------------------------------------------------- more shape ops


def _unsqueeze_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s, dim = shapes[0], attrs.get("dim", 0)
    if not -(len(s) + 1) <= dim <= len(s):
        raise OpShapeError(f"dim {dim} is out of range for unsqueezing {shape_text(s)}")
    dim %= len(s) + 1
    return (*s[:dim], 1, *s[dim:])


def _squeeze_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s, dim = shapes[0], attrs.get("dim")
    if dim is None:
        return tuple(n for n in s if n != 1)
    d = _dim(len(s), dim)
    return tuple(n for k, n in enumerate(s) if k != d or n != 1) if s else ()


def _flatten_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s = shapes[0]
    start, end = attrs.get("start_dim", 0), attrs.get("end_dim", -1)
    a, b = _dim(len(s), start), _dim(len(s), end)
    if a > b:
        raise OpShapeError(f"start_dim {start} comes after end_dim {end} for {shape_text(s)}")
    if not s:
        return (1,)
    return (*s[:a], int(np.prod(s[a : b + 1])), *s[b + 1 :])


def _reshaping(check: Check) -> Forward:
    """A shape op's forward: the same elements in the shape ``check`` works out."""
    return lambda xs, attrs: np.reshape(xs[0], check([xs[0].shape], attrs))


def _shape_op(name: str, check: Check, doc: str, title: Title, attrs: tuple[Attr, ...]) -> Op:
    forward = _reshaping(check)
    return Op(
        name=name,
        arity=1,
        category="Shape",
        doc=doc,
        forward=forward,
        vjp=lambda i, g, xs, out, attrs: np.reshape(g, xs[0].shape),
        jvp=_linear_jvp(forward),
        check=check,
        title=title,
        jacobian_words=_const_words("identity: the same elements, read in a new shape"),
        attrs=attrs,
        torch=(f"torch.{name}", f"Tensor.{name}"),
    )


# --------------------------------------------------------------------------- losses


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
    grad = (2.0 / d.size) * d * g
    return unbroadcast(grad if i == 0 else -grad, xs[i].shape)


def _mse_jvp(ts: Sequence[Array | None], xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    d = xs[0] - xs[1]
    t0, t1 = _tangents(ts, xs)
    return np.asarray(np.sum((2.0 / d.size) * d * (t0 - t1)))


#: PyTorch's EPSILON in binary_cross_entropy_backward: 1e-12 as a float32.
_BCE_EPSILON = float(np.float32(1e-12))


def _bce_forward(xs: Sequence[Array], attrs: Attrs) -> Array:
    p, y = xs
    _same_shape_check([p.shape, y.shape], attrs)
    for name, v in (("input", p), ("target", y)):
        if ((v < 0.0) | (v > 1.0)).any():
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
    return np.asarray(-np.sum(y * _log_softmax(x, dim)) / n if n else np.nan)


def _ce_vjp(i: int, g: Array, xs: Sequence[Array], out: Array, attrs: Attrs) -> Array:
    x, y = xs
    dim, n = _ce_parts(x)
    if i == 1:
        return -g * _log_softmax(x, dim) / n
    return g * (_softmax(x, dim) * np.sum(y, axis=dim, keepdims=True) - y) / n


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
    name: str, forward: Forward, vjp: Vjp, jvp: Jvp, check: Check, words: Sequence[str], doc: str
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
    )


def _mse_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    _broadcast_check(shapes, attrs)
    return ()


# --------------------------------------------------------------------------- the table


def _one_minus_square(y: Array) -> Array:
    """``1 - y²`` as ``2a - a²`` with ``a = 1 - |y|``: within one ulp of PyTorch's
    tanh_backward, which rounds ``1 - y²`` once in a fused multiply-add.

    ``1 - fl(y·y)`` would not do: near saturation it cancels away all but the rounding
    error of ``y·y`` (3.7e-9 relative at x = 10). For ``|y| >= 1/2``, ``a`` is exact
    (Sterbenz) and so is ``2a``; ``a²`` is at most ``a/2`` of the result, so its
    rounding moves the result by at most ``a/4`` of an ulp. Below 1/2 nothing cancels.
    Five numpy passes (a Dekker split of ``y·y`` took thirteen).
    """
    if y.ndim == 0:
        a = 1.0 - abs(float(y))
        return np.asarray(2.0 * a - a * a)
    a = np.abs(y)
    np.subtract(1.0, a, out=a)
    square = a * a
    np.add(a, a, out=a)
    np.subtract(a, square, out=a)
    return a


def _tanh_grad(g: Array, x: Array, out: Array) -> Array:
    """``g * (1 - out²)`` as PyTorch's tanh_backward computes it."""
    r = _one_minus_square(out)
    if r.ndim and r.shape == g.shape:
        return np.multiply(g, r, out=r)  # r is ours: no sixth array
    return g * r


def _relu(x: Array) -> Array:
    """``clamp_min(x, 0)`` as PyTorch: NaN stays NaN and -0.0 stays -0.0 (not below 0)."""
    return np.where(x < 0.0, 0.0, x)


def _sigmoid(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


_OPS: list[Op] = [
    _leaf("input", "A leaf tensor; requires grad unless switched off.", "requires_grad"),
    _leaf("const", "A constant tensor; never requires grad.", "constant"),
    _binary(
        "add",
        "+",
        np.add,
        lambda i, g, a, b, out: g,
        ("identity", "identity"),
        "Elementwise sum, broadcasting.",
        ("torch.add", "Tensor.add", "+"),
    ),
    _binary(
        "sub",
        "-",
        np.subtract,
        lambda i, g, a, b, out: g if i == 0 else -g,
        ("identity", "minus identity"),
        "Elementwise difference, broadcasting.",
        ("torch.sub", "Tensor.sub", "-"),
    ),
    _binary(
        "mul",
        "*",
        np.multiply,
        lambda i, g, a, b, out: g * (b if i == 0 else a),
        ("diagonal with entries of the other operand",) * 2,
        "Elementwise product, broadcasting.",
        ("torch.mul", "Tensor.mul", "*"),
    ),
    _binary(
        "div",
        "/",
        np.divide,
        lambda i, g, a, b, out: g / b if i == 0 else -g * ((a / b) / b),
        ("diagonal with entries 1/b", "diagonal with entries -a/b²"),
        "Elementwise quotient, broadcasting.",
        ("torch.div", "Tensor.div", "/"),
    ),
    _binary(
        "pow",
        "**",
        _pow,
        _pow_grad,
        ("diagonal with entries b·a^(b-1)", "diagonal with entries a^b·ln a"),
        "Elementwise power with a tensor exponent, broadcasting.",
        ("torch.pow", "Tensor.pow", "**"),
    ),
    _unary(
        "neg",
        np.negative,
        lambda g, x, out: -g,
        "minus identity",
        "Negation.",
        torch=("torch.neg", "Tensor.neg", "-"),
        category="Arithmetic",
        title=lambda a, attrs: f"-{a[0]}",
    ),
    _unary("exp", np.exp, lambda g, x, out: g * out, "diagonal with entries exp(x)", "e to the x."),
    _unary("log", np.log, lambda g, x, out: g / x, "diagonal with entries 1/x", "Natural log."),
    _unary("sin", np.sin, lambda g, x, out: g * np.cos(x), "diagonal with entries cos(x)", "Sine."),
    _unary(
        "cos", np.cos, lambda g, x, out: -g * np.sin(x), "diagonal with entries -sin(x)", "Cosine."
    ),
    _unary(
        "tanh",
        np.tanh,
        _tanh_grad,
        "diagonal with entries 1 - tanh²(x)",
        "Hyperbolic tangent.",
    ),
    _unary(
        "sigmoid",
        _sigmoid,
        lambda g, x, out: g * (1.0 - out) * out,  # PyTorch's sigmoid_backward, in its order
        "diagonal with entries σ(x)(1 - σ(x))",
        "Logistic sigmoid 1/(1+e^-x).",
    ),
    _unary(
        "relu",
        _relu,
        lambda g, x, out: np.where(out <= 0.0, 0.0, g),  # NaN passes g, as threshold_backward
        "diagonal with entries 1 where x > 0, else 0",
        "max(x, 0).",
        torch=("torch.relu", "Tensor.relu", "torch.nn.functional.relu"),
    ),
    _reduction(
        "sum",
        lambda i, g, xs, out, attrs: _expand_back(g, xs[0].shape, attrs),
        "Sum over all elements, or over dim (int or list).",
    ),
    _reduction("mean", _mean_vjp, "Mean over all elements, or over dim (int or list)."),
    Op(
        name="matmul",
        arity=2,
        category="Linear algebra",
        doc="Matrix product with torch.matmul's rules (1-D promotion, broadcast batches).",
        forward=_matmul_forward,
        vjp=_matmul_vjp,
        jvp=_bilinear_jvp(_matmul_forward),
        check=_matmul_check,
        title=_binary_title("@"),
        jacobian_words=_matmul_words,
        torch=("torch.matmul", "Tensor.matmul", "@"),
    ),
    Op(
        name="transpose",
        arity=1,
        category="Linear algebra",
        doc="Swap two dims: a matrix's rows and columns by default (dims 0 and -1).",
        forward=_transpose_forward,
        vjp=lambda i, g, xs, out, attrs: _transpose_forward([g], attrs),
        jvp=_linear_jvp(_transpose_forward),
        check=_transpose_check,
        title=_transpose_title,
        jacobian_words=lambda i, shapes, out, attrs: (
            "permutation: element (i, j) goes to (j, i)"
            if len(shapes[0]) <= 2
            else f"permutation: dims {attrs.get('dim0', 0)} and {attrs.get('dim1', -1)} swap"
        ),
        attrs=(
            Attr("dim0", "int", 0, _DIM_HELP, **_DIM_RANGE),
            Attr("dim1", "int", -1, _DIM_HELP, **_DIM_RANGE),
        ),
        torch=("torch.transpose", "Tensor.transpose", "torch.t", "Tensor.t", ".T", ".mT"),
    ),
    Op(
        name="stack",
        arity=None,
        category="Shape",
        doc="Stack n tensors of one shape along a new dim.",
        forward=_stack_forward,
        vjp=lambda i, g, xs, out, attrs: g[(slice(None),) * _stack_dim(xs[0].ndim, attrs) + (i,)],
        jvp=_linear_jvp(_stack_forward),
        check=_stack_check,
        title=lambda a, attrs: (
            f"stack([{', '.join(a)}]" + (f", dim={attrs['dim']})" if attrs.get("dim") else ")")
        ),
        jacobian_words=lambda i, shapes, out, attrs: f"selection: picks slice {i} of the stack",
        attrs=(Attr("dim", "int", 0, _DIM_HELP, **_DIM_RANGE),),
        torch=("torch.stack",),
    ),
    Op(
        name="select",
        arity=1,
        category="Shape",
        doc="x[index] along dim (x.select(dim, index)).",
        forward=_select_forward,
        vjp=_select_vjp,
        jvp=_linear_jvp(_select_forward),
        check=_select_check,
        title=_select_title,
        jacobian_words=lambda i, shapes, out, attrs: (
            f"selection: a one at index {attrs.get('index', 0)} of dim {attrs.get('dim', 0)}"
        ),
        attrs=(
            Attr("index", "int", 0, _DIM_HELP, -(10**6), 10**6),
            Attr("dim", "int", 0, _DIM_HELP, **_DIM_RANGE),
        ),
        torch=("torch.select", "Tensor.select", "[]"),
    ),
    Op(
        name="reshape",
        arity=1,
        category="Shape",
        doc="The same elements in a new shape (one -1 is inferred).",
        forward=_reshape_forward,
        vjp=lambda i, g, xs, out, attrs: np.reshape(g, xs[0].shape),
        jvp=_linear_jvp(_reshape_forward),
        check=_reshape_check,
        title=lambda a, attrs: f"{a[0]}.reshape({list(attrs.get('shape', []))})",
        jacobian_words=_const_words("identity: the same elements, read in a new shape"),
        attrs=(
            Attr("shape", "shape", [-1], "The new shape as a list of integers; one -1 is inferred"),
        ),
        torch=("torch.reshape", "Tensor.reshape", "Tensor.view"),
    ),
    _unary(
        "abs",
        np.abs,
        lambda g, x, out: g * _sgn(x),
        "diagonal with entries sign(x) (0 at x = 0)",
        "Absolute value |x|.",
    ),
    _unary(
        "sqrt",
        np.sqrt,
        lambda g, x, out: g / (2.0 * out),
        "diagonal with entries 1/(2√x)",
        "Square root.",
    ),
    _unary(
        "square",
        lambda x: x * x,
        lambda g, x, out: g * (2.0 * x),
        "diagonal with entries 2x",
        "x², as torch.square (x ** 2).",
    ),
    Op(
        name="clamp",
        arity=1,
        category="Elementwise functions",
        doc="x limited to [min, max]; either bound may be left out.",
        forward=_clamp_forward,
        vjp=lambda i, g, xs, out, attrs: np.where(_clamp_mask(xs[0], attrs), g, 0.0),
        jvp=lambda ts, xs, out, attrs: np.where(
            _clamp_mask(xs[0], attrs), _tangents(ts, xs)[0], 0.0
        ),
        check=_clamp_check,
        title=_clamp_title,
        jacobian_words=_const_words("diagonal with entries 1 where min ≤ x ≤ max, else 0"),
        attrs=(
            Attr("min", "number-or-null", -1.0, "Lower bound; empty for none"),
            Attr("max", "number-or-null", 1.0, "Upper bound; empty for none"),
        ),
        torch=("torch.clamp", "Tensor.clamp", "torch.clip"),
    ),
    _binary(
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
    ),
    _binary(
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
    ),
    Op(
        name="where",
        arity=2,
        category="Elementwise functions",
        doc="a where the constant condition holds, else b; broadcasting.",
        forward=_where_forward,
        vjp=_where_vjp,
        jvp=lambda ts, xs, out, attrs: np.asarray(
            np.broadcast_to(_where_forward(_tangents(ts, xs), attrs), out.shape), dtype=np.float64
        ),
        check=_where_check,
        title=_where_title,
        jacobian_words=lambda i, shapes, out, attrs: _broadcast_words(
            "diagonal with entries 1 where the condition is "
            + ("true" if i == 0 else "false")
            + ", else 0"
        )(i, shapes, out, attrs),
        attrs=(
            Attr("condition", "bool-tensor", True, "true/false, or a nested list of them (a mask)"),
        ),
        torch=("torch.where",),
    ),
    Op(
        name="softmax",
        arity=1,
        category="Elementwise functions",
        doc="exp(x) / Σ exp(x) along dim: each slice becomes probabilities.",
        forward=lambda xs, attrs: _softmax(xs[0], _dim(xs[0].ndim, attrs.get("dim", -1))),
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
        attrs=(Attr("dim", "int", -1, _DIM_HELP, **_DIM_RANGE),),
        torch=("torch.softmax", "Tensor.softmax", "torch.nn.functional.softmax"),
    ),
    Op(
        name="log_softmax",
        arity=1,
        category="Elementwise functions",
        doc="log(softmax(x)) along dim, computed stably.",
        forward=lambda xs, attrs: _log_softmax(xs[0], _dim(xs[0].ndim, attrs.get("dim", -1))),
        vjp=_log_softmax_vjp,
        jvp=lambda ts, xs, out, attrs: (
            np.zeros(out.shape)
            if ts[0] is None
            else ts[0] - _sum_along(np.exp(out) * ts[0], _dim(out.ndim, attrs.get("dim", -1)))
        ),
        check=_one_dim_check,
        title=_dim_title("log_softmax"),
        jacobian_words=lambda i, shapes, out, attrs: (
            f"block diagonal, one block per slice along dim {attrs.get('dim', -1)}: "
            "I - 1 sᵀ (each row minus the softmax)"
        ),
        attrs=(Attr("dim", "int", -1, _DIM_HELP, **_DIM_RANGE),),
        torch=("torch.log_softmax", "Tensor.log_softmax", "torch.nn.functional.log_softmax"),
    ),
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
        attrs=(Attr("dim", "int-or-list", -1, _DIMS_HELP), _KEEPDIM),
        torch=("torch.logsumexp", "Tensor.logsumexp"),
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
            attrs=(Attr("dim", "int-or-null", None, _DIM_HELP + "; empty for all"), _KEEPDIM),
            torch=(f"torch.{fn}", f"Tensor.{fn}", f"torch.a{fn}"),
        )
        for fn in ("max", "min")
    ),
    _shape_op(
        "unsqueeze",
        _unsqueeze_check,
        "A new dim of size 1 at dim.",
        lambda a, attrs: f"{a[0]}.unsqueeze({attrs.get('dim', 0)})",
        (Attr("dim", "int", 0, _DIM_HELP, **_DIM_RANGE),),
    ),
    _shape_op(
        "squeeze",
        _squeeze_check,
        "Drop dims of size 1 (all of them, or just dim).",
        lambda a, attrs: (
            f"{a[0]}.squeeze()" if attrs.get("dim") is None else f"{a[0]}.squeeze({attrs['dim']})"
        ),
        (Attr("dim", "int-or-null", None, _DIM_HELP + "; empty for all size-1 dims"),),
    ),
    _shape_op(
        "flatten",
        _flatten_check,
        "Merge dims start_dim..end_dim into one.",
        lambda a, attrs: f"{a[0]}.flatten({attrs.get('start_dim', 0)}, {attrs.get('end_dim', -1)})",
        (
            Attr("start_dim", "int", 0, _DIM_HELP, **_DIM_RANGE),
            Attr("end_dim", "int", -1, _DIM_HELP, **_DIM_RANGE),
        ),
    ),
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
]

#: The table: op name -> record, the two leaf kinds first.
OPS: dict[str, Op] = {op.name: op for op in _OPS}

#: Every op name a graph file may use: the two leaf kinds, then the primitives.
OP_NAMES: tuple[str, ...] = tuple(OPS)


def ops_in(category: str) -> list[str]:
    """Op names of one palette category, in table order."""
    return [op.name for op in _OPS if op.category == category]


def validate_attrs(op_name: str, attrs: Attrs) -> Attrs:
    """Return the op's full attrs (defaults filled in); raise ValueError on a bad one."""
    op = OPS.get(op_name)
    specs = {a.name: a for a in op.attrs} if op else {}
    unknown = sorted(set(attrs) - set(specs))
    if unknown:
        raise ValueError(f"{op_name} has no attribute {unknown[0]!r}")
    full = {**(op.defaults if op else {}), **attrs}
    for key, value in full.items():
        problem = specs[key].problem(value)
        if problem:
            raise ValueError(problem)
    return full


# --------------------------------------------------------------------------- schema


def schema_defs() -> dict[str, Any]:
    """The graph-format schema's op-dependent ``$defs``, derived from the table.

    ``opName`` lists every op; ``opAttrs`` gives, per op with attributes, the
    JSON type of each (ranges, unknown names and the rest are the loader's, via
    :func:`validate_attrs`). A test keeps ``graph-format.schema.json`` equal to this.
    """
    rules = []
    for op in _OPS:
        if not op.attrs:
            continue
        props = {
            a.name: {"title": ATTR_KINDS[a.kind].want, **ATTR_KINDS[a.kind].schema}
            for a in op.attrs
        }
        rules.append(
            {
                "if": {"properties": {"op": {"const": op.name}}},
                "then": {"properties": {"attrs": {"properties": props}}},
            }
        )
    return {
        "opName": {"title": "one of the engine's op names", "type": "string", "enum": list(OPS)},
        "opAttrs": {"title": "each op's attribute types", "allOf": rules},
    }
