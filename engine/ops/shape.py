"""Shape ops: ``stack``, ``select``, ``reshape``, ``unsqueeze``, ``squeeze``, ``flatten``
(the same elements read in another shape, or picked)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import shape_text
from .build import const_words, dim_index, linear_jvp
from .record import (
    DIM_HELP,
    DIM_RANGE,
    KEEPS_BOTH,
    Array,
    Attr,
    Attrs,
    Check,
    Forward,
    Op,
    OpShapeError,
    Shape,
    Title,
    TorchArgs,
)
from .torch_source import function_call, written_attrs


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


def _select_call(op: Op, a: Sequence[str], attrs: Attrs) -> str:
    """``x[:, i]`` along a dim counted from the front, else ``torch.select``."""
    dim, index = attrs["dim"], attrs["index"]
    if dim >= 0:
        return f"{a[0]}[{':, ' * dim}{index}]"
    return function_call(op, a, written_attrs(op.attrs, attrs))


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
    d = dim_index(len(s), dim)
    return tuple(n for k, n in enumerate(s) if k != d or n != 1) if s else ()


def _flatten_check(shapes: Sequence[Shape], attrs: Attrs) -> Shape:
    s = shapes[0]
    start, end = attrs.get("start_dim", 0), attrs.get("end_dim", -1)
    a, b = dim_index(len(s), start), dim_index(len(s), end)
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
        jvp=linear_jvp(forward),
        check=check,
        title=title,
        jacobian_words=const_words("identity: the same elements, read in a new shape"),
        attrs=attrs,
        torch=(f"torch.{name}", f"Tensor.{name}"),
        domain=KEEPS_BOTH,
    )


RECORDS: tuple[Op, ...] = (
    Op(
        name="stack",
        arity=None,
        category="Shape",
        doc="Stack n tensors of one shape along a new dim.",
        forward=_stack_forward,
        vjp=lambda i, g, xs, out, attrs: g[(slice(None),) * _stack_dim(xs[0].ndim, attrs) + (i,)],
        jvp=linear_jvp(_stack_forward),
        check=_stack_check,
        title=lambda a, attrs: (
            f"stack([{', '.join(a)}]" + (f", dim={attrs['dim']})" if attrs.get("dim") else ")")
        ),
        jacobian_words=lambda i, shapes, out, attrs: f"selection: picks slice {i} of the stack",
        attrs=(Attr("dim", "int", 0, DIM_HELP, **DIM_RANGE),),
        torch=("torch.stack",),
        domain=KEEPS_BOTH,
    ),
    Op(
        name="select",
        arity=1,
        category="Shape",
        doc="x[index] along dim (x.select(dim, index)).",
        forward=_select_forward,
        vjp=_select_vjp,
        jvp=linear_jvp(_select_forward),
        check=_select_check,
        title=_select_title,
        jacobian_words=lambda i, shapes, out, attrs: (
            f"selection: a one at index {attrs.get('index', 0)} of dim {attrs.get('dim', 0)}"
        ),
        attrs=(
            Attr("index", "int", 0, DIM_HELP, -(10**6), 10**6),
            Attr("dim", "int", 0, DIM_HELP, **DIM_RANGE),
        ),
        torch=("torch.select", "Tensor.select", "[]"),
        domain=KEEPS_BOTH,
        torch_args=TorchArgs(order=("dim", "index")),
        torch_call=_select_call,
    ),
    Op(
        name="reshape",
        arity=1,
        category="Shape",
        doc="The same elements in a new shape (one -1 is inferred).",
        forward=_reshape_forward,
        vjp=lambda i, g, xs, out, attrs: np.reshape(g, xs[0].shape),
        jvp=linear_jvp(_reshape_forward),
        check=_reshape_check,
        title=lambda a, attrs: f"{a[0]}.reshape({list(attrs.get('shape', []))})",
        jacobian_words=const_words("identity: the same elements, read in a new shape"),
        attrs=(
            Attr("shape", "shape", [-1], "The new shape as a list of integers; one -1 is inferred"),
        ),
        torch=("torch.reshape", "Tensor.reshape", "Tensor.view"),
        domain=KEEPS_BOTH,
        torch_args=TorchArgs(sizes="shape"),
    ),
    _shape_op(
        "unsqueeze",
        _unsqueeze_check,
        "A new dim of size 1 at dim.",
        lambda a, attrs: f"{a[0]}.unsqueeze({attrs.get('dim', 0)})",
        (Attr("dim", "int", 0, DIM_HELP, **DIM_RANGE),),
    ),
    _shape_op(
        "squeeze",
        _squeeze_check,
        "Drop dims of size 1 (all of them, or just dim).",
        lambda a, attrs: (
            f"{a[0]}.squeeze()" if attrs.get("dim") is None else f"{a[0]}.squeeze({attrs['dim']})"
        ),
        (Attr("dim", "int-or-null", None, DIM_HELP + "; empty for all size-1 dims"),),
    ),
    _shape_op(
        "flatten",
        _flatten_check,
        "Merge dims start_dim..end_dim into one.",
        lambda a, attrs: f"{a[0]}.flatten({attrs.get('start_dim', 0)}, {attrs.get('end_dim', -1)})",
        (
            Attr("start_dim", "int", 0, DIM_HELP, **DIM_RANGE),
            Attr("end_dim", "int", -1, DIM_HELP, **DIM_RANGE),
        ),
    ),
)
