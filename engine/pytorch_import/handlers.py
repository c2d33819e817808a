"""PyTorch overloads the generic rule (tensors first, then the record's attrs as its
``torch_args`` orders them) does not read: ``.t()``/``.T``, ``max(a, b)`` beside
``max(x, dim)``, logsumexp's ``range(x.ndim)``, softmax's legacy dim, and the spellings
the table has no op for (``permute``, ``linear``, the losses' other reductions),
written with the table's ops and a note saying how.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops import OPS
from ..ops.record import OpShapeError
from .core import Core
from .spellings import canonical
from .values import AllDims, Indices, T, ValuesIndices, is_int

Handler = Callable[[Core, T, list[Any], dict[str, Any], ast.Call], Any]


def _called(node: ast.Call) -> str:
    """The last name of what is called: ``t`` for ``x.t()`` and ``torch.t(x)``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _functional(w: Core, node: ast.Call) -> bool:
    """True for a ``torch.nn.functional.*`` call (as ``F.softmax``), not a method."""
    path = w.callee_path(node.func)
    return path is not None and canonical(path).startswith("torch.nn.functional.")


# ------------------------------------------------------------------ transposes


def swaps(w: Core, t: T, pairs: list[tuple[int, int]], node: ast.AST) -> T:
    """``t`` with each pair of dims swapped in turn, every dim written out."""
    for a, b in pairs:
        t = w.add("transpose", [t], {"dim0": a, "dim1": b}, node)
    return t


def reverse_dims(w: Core, t: T, node: ast.AST) -> T:
    """``x.T``: a matrix's rows and columns, and on other ranks what torch computes, the
    dims reversed (``x.permute(n-1, ..., 0)``), which it warns is deprecated."""
    ndim = w.nodes[t.id].value.ndim
    if ndim < 2:
        w.note(node, f".T of a {ndim}-D tensor is the tensor itself")
        return t
    if ndim == 2:  # the record's default dims, whichever pair they name, on a matrix
        return w.add("transpose", [t], None, node)
    w.warn(
        getattr(node, "lineno", 1),
        f".T on a {ndim}-D tensor reverses all its dims (PyTorch warns that this is "
        "deprecated; x.mT swaps the last two)",
    )
    return swaps(w, t, [(i, ndim - 1 - i) for i in range(ndim // 2)], node)


def _transpose(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    dims = list(args) + [kwargs.pop(k) for k in ("dim0", "dim1") if k in kwargs]
    if not dims and _called(node) == "t":  # x.t() / torch.t(x): a matrix's two dims
        if w.nodes[t.id].value.ndim > 2:
            w.refuse(
                node,
                ".t() takes at most 2 dims (PyTorch refuses more); use .mT or "
                ".transpose(dim0, dim1)",
            )
        return reverse_dims(w, t, node)
    if len(dims) != 2 or not all(is_int(d) for d in dims):
        w.refuse(node, "transpose needs two integer dims")
    return swaps(w, t, [(int(dims[0]), int(dims[1]))], node)


def _permute(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    """``x.permute(2, 0, 1)`` as the transposes that put the dims in that order."""
    dims = list(args[0]) if len(args) == 1 and isinstance(args[0], tuple | list) else list(args)
    dims = dims or list(kwargs.pop("dims", []))
    ndim = w.nodes[t.id].value.ndim
    if kwargs or not all(is_int(d) and -ndim <= d < max(ndim, 1) for d in dims):
        w.refuse(node, "permute takes the tensor's dims in their new order")
    order = [d % ndim for d in dims] if ndim else []
    if sorted(order) != list(range(ndim)):
        w.refuse(node, f"permute needs each of the {ndim} dims once, got {dims}")
    current, pairs = list(range(ndim)), []
    for i, want in enumerate(order):
        if current[i] != want:
            j = current.index(want)
            current[i], current[j] = current[j], current[i]
            pairs.append((i, j))
    if pairs:
        w.note(node, f"permute{tuple(dims)} written as transposes {pairs}")
    return swaps(w, t, pairs, node)


# ------------------------------------------------------------------ dims and reductions


def reduction(w: Core, op: str, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    dim = kwargs.pop("dim", kwargs.pop("axis", args[0] if args else None))
    keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
    kwargs.pop("dtype", None)
    if kwargs or len(args) > 2:
        w.refuse(node, f"{op}: unsupported arguments")
    if isinstance(dim, tuple):
        dim = list(dim)
    return w.add(op, [t], {"dim": dim, "keepdim": keepdim}, node)


def _extreme(op: str) -> Handler:
    def handler(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """``x.max()`` (a tensor), ``x.max(dim, keepdim)`` (values and indices, as torch)
        and ``torch.max(a, b)`` (the elementwise maximum)."""
        other = kwargs.pop("other", args[0] if args and isinstance(args[0], T) else None)
        if other is not None:
            if args[1:] or kwargs:
                w.refuse(node, f"{op}(a, b): unsupported arguments")
            return w.add("maximum" if op == "max" else "minimum", [t, other], None, node)
        dim = kwargs.pop("dim", args[0] if args else None)
        keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
        if kwargs or len(args) > 2 or not (dim is None or is_int(dim)):
            w.refuse(node, f"{op}: takes one integer dim and keepdim")
        if dim is None:
            if keepdim:
                w.refuse(node, f"{op}: keepdim needs a dim")
            return w.add(op, [t], {"dim": None, "keepdim": False}, node)
        values = w.add(op, [t], {"dim": dim, "keepdim": bool(keepdim)}, node)
        return ValuesIndices(values, Indices())

    return handler


def _logsumexp(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    """logsumexp over dims; ``tuple(range(x.ndim))`` is null (all dims), ``list(...)`` []."""
    dim = kwargs.get("dim", args[0] if args else None)
    if isinstance(dim, AllDims):
        if dim.n != w.nodes[t.id].value.ndim:
            w.refuse(node, f"logsumexp: range({dim.n}) is not every dim of the tensor")
        whole: list[int] | None = [] if dim.as_list else None
        if args:
            args = [whole, *args[1:]]
        else:
            kwargs["dim"] = whole
    elif dim is None:
        w.refuse(node, "logsumexp needs a dim (PyTorch has no default)")
    return reduction(w, "logsumexp", t, args, kwargs, node)


def legacy_softmax_dim(ndim: int) -> int:
    """The dim ``F.softmax(x)`` without one picks (torch's ``_get_softmax_dim``)."""
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(op: str) -> Handler:
    def handler(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
        dim = kwargs.pop("dim", args[0] if args else None)
        if len(args) > 1 or set(kwargs) - {"dtype", "_stacklevel"}:
            w.refuse(node, f"{op}: takes a tensor and a dim")
        if dim is None:
            if not _functional(w, node):
                w.refuse(node, f"{op} needs a dim (PyTorch has no default here)")
            ndim = w.nodes[t.id].value.ndim
            dim = legacy_softmax_dim(ndim)
            w.note(
                node,
                f"{op} without a dim: dim={dim}, the dim PyTorch picks for a "
                f"{ndim}-D input (it warns that this choice is deprecated)",
            )
        if not is_int(dim):
            w.refuse(node, f"{op} needs an integer dim")
        return w.add(op, [t], {"dim": dim}, node)

    return handler


def stack(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    if not args or not isinstance(args[0], tuple | list) or not args[0]:
        w.refuse(node, "torch.stack takes a list of tensors")
    dim = kwargs.pop("dim", args[1] if len(args) > 1 else 0)
    tensors = [w.as_tensor(a, node) for a in args[0]]
    return w.add("stack", tensors, {"dim": dim}, node)


def _identity(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    return t


def detach(w: Core, t: T, node: ast.AST) -> T:
    return w.leaf(w.nodes[t.id].value.copy(), None, node, f"{t.id}_detached")


HANDLERS: dict[str, Handler] = {
    "transpose": _transpose,
    "max": _extreme("max"),
    "min": _extreme("min"),
    "logsumexp": _logsumexp,
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
}

#: Methods that change nothing the graph records (dtype, device, copies), detach, permute.
PASS_THROUGH: dict[str, Handler] = {
    **{m: _identity for m in ("float", "double", "clone", "contiguous", "to", "cpu")},
    "detach": lambda w, t, a, k, n: detach(w, t, n),
    "permute": _permute,
}


# ------------------------------------------------------------------ composites


def _composite(name: str, how: str) -> Callable[[Handler], Handler]:
    """Register ``name`` as written with the table's ops, noting how."""

    def register(build: Handler) -> Handler:
        def handler(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
            w.note(node, f"{name} written with the op table's ops: {how}")
            result: T = build(w, t, args, kwargs, node)
            return result

        COMPOSITES[name] = handler
        return build

    return register


COMPOSITES: dict[str, Handler] = {}


@_composite("linear", "x @ W.T + b")
def _linear(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    weight = kwargs.pop("weight", args[0] if args else None)
    bias = kwargs.pop("bias", args[1] if len(args) > 1 else None)
    if not isinstance(weight, T):
        w.refuse(node, "linear needs a weight tensor")
    out = w.add("matmul", [t, reverse_dims(w, weight, node)], None, node)
    if bias is not None:
        out = w.add("add", [out, w.as_tensor(bias, node)], None, node)
    return out


def _reduce_loss(w: Core, t: T, kwargs: dict[str, Any], node: ast.Call) -> T:
    reduction = kwargs.pop("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        w.refuse(node, f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if kwargs:
        w.refuse(node, f"unsupported argument {next(iter(kwargs))!r}")
    if reduction == "none":
        return t
    return w.add(reduction, [t], {"dim": None, "keepdim": False}, node)


@_composite("mse_loss", "mean((input - target) ** 2)")
def _mse_loss(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    target = kwargs.pop("target", args[0] if args else None)
    d = w.add("sub", [t, w.as_tensor(target, node)], None, node)
    return _reduce_loss(w, w.add("pow", [d, w.constant(2.0, node)], None, node), kwargs, node)


@_composite("binary_cross_entropy", "-mean(y·log p + (1 - y)·log(1 - p))")
def _bce(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    target = w.as_tensor(kwargs.pop("target", args[0] if args else None), node)
    one = w.constant(1.0, node)
    pos = w.add("mul", [target, w.add("log", [t], None, node)], None, node)
    q = w.add("log", [w.add("sub", [one, t], None, node)], None, node)
    neg = w.add("mul", [w.add("sub", [one, target], None, node), q], None, node)
    loss = w.add("neg", [w.add("add", [pos, neg], None, node)], None, node)
    return _reduce_loss(w, loss, kwargs, node)


@_composite("binary_cross_entropy_with_logits", "binary_cross_entropy(sigmoid(x), y)")
def _bce_logits(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    p = w.add("sigmoid", [t], None, node)
    bce = "torch.nn.functional.binary_cross_entropy"
    result: T = w.call_method(p, "binary_cross_entropy", args, kwargs, node, bce)
    return result


@_composite("cross_entropy", "-mean(sum(target · log_softmax(x, dim=1), dim=1))")
def _cross_entropy(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    target = w.as_tensor(kwargs.pop("target", args[0] if args else None), node)
    x = w.nodes[t.id].value
    y = w.nodes[target.id]
    if x.ndim != 2:
        w.refuse(node, "cross_entropy is supported for (batch, classes) inputs")
    if y.value.shape != x.shape:  # class indices: one-hot rows, a const
        if y.value.shape != x.shape[:1] or y.requires_grad:
            w.refuse(node, "cross_entropy needs class indices of shape (batch,) or probabilities")
        classes = y.value.astype(int)
        if classes.min(initial=0) < 0 or classes.max(initial=0) >= x.shape[1]:
            w.refuse(node, "cross_entropy: a class index is out of range")
        target = w.leaf(np.eye(x.shape[1])[classes], None, node, f"{target.id}_one_hot", y.random)
    log_p = w.add("log_softmax", [t], {"dim": 1}, node)
    picked = w.add("sum", [w.add("mul", [target, log_p], None, node)], {"dim": 1}, node)
    return _reduce_loss(w, w.add("neg", [picked], None, node), kwargs, node)


def _loss_handler(name: str) -> Handler:
    """A loss the table has as one op: that op for PyTorch's default mean over a target
    that fits it; the composite above for other reductions or class-index targets."""

    def handler(w: Core, t: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
        target = kwargs.get("target", args[0] if args else None)
        plain = kwargs.get("reduction", "mean") == "mean" and len(args) <= 1
        plain = plain and set(kwargs) <= {"target", "reduction"}
        if not isinstance(target, T):
            plain = False
        elif plain:
            shapes = [w.nodes[t.id].value.shape, w.nodes[target.id].value.shape]
            try:
                OPS[name].check(shapes, {})
            except OpShapeError:
                plain = False
        if not plain or not isinstance(target, T):
            result: T = COMPOSITES[name](w, t, args, kwargs, node)
            return result
        return w.add(name, [t, target], None, node)

    return handler


for _loss in ("mse_loss", "binary_cross_entropy", "cross_entropy"):
    HANDLERS[_loss] = _loss_handler(_loss)
