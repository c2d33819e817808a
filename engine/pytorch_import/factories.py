"""Torch's tensor factories (``torch.tensor``, ``zeros``, ``randn``, ``arange``, ...) as
leaf nodes: sizes checked against the element limits before any array is made, and
PyTorch's random numbers replaced by seeded ones (with a warning)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..fileformat import MAX_ELEMENTS
from .core import Core
from .spellings import FLOAT_DTYPES
from .values import T, all_ints, describe, holds_tensors, is_int, is_number

Value = tuple[np.ndarray, bool]  # the values and whether they stand in for random ones
_LITERALS = ("tensor", "Tensor", "FloatTensor", "DoubleTensor", "as_tensor")
_SIZED = ("ones", "zeros", "empty", "rand", "randn", "full")


def factory(w: Core, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    """``torch.<name>(...)``: a leaf holding the factory's values."""
    requires_grad = kwargs.pop("requires_grad", None)
    dtype = kwargs.pop("dtype", None)
    for ignored in ("device", "layout", "pin_memory", "memory_format"):
        kwargs.pop(ignored, None)
    if requires_grad is not None and not isinstance(requires_grad, bool):
        w.refuse(node, "requires_grad must be True or False")
    floating = dtype is not None and dtype.name in FLOAT_DTYPES
    if requires_grad and name in ("tensor", "as_tensor") and args and not floating:
        if all_ints(args[0]) and dtype is None or (dtype is not None and not floating):
            w.refuse(
                node,
                "only floating-point tensors can require grad (PyTorch "
                "refuses integers: write 1.0, or dtype=torch.float)",
            )
    value, random = _factory_value(w, name, args, kwargs, node)
    if random:
        w.seed += 1
    t = w.leaf(value, requires_grad, node, name.removesuffix("_like"), random=random)
    if name == "tensor" and holds_tensors(args[0] if args else None):
        w.nodes[t.id].detached = True
    return t


def _factory_value(
    w: Core, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Value:
    if name in _LITERALS:
        return _literal_value(w, name, args, kwargs, node)
    if name.endswith("_like"):
        if not args or not isinstance(args[0], T):
            w.refuse(node, f"torch.{name} needs a tensor")
        shape = w.nodes[args[0].id].value.shape
        return _sized(w, name, name.removesuffix("_like"), shape, args[1:], kwargs, node)
    if name in _SIZED:
        return _sized(w, name, name, None, args, kwargs, node)
    build = _OTHERS.get(name)
    if build is None:
        w.refuse(node, f"torch.{name} is outside the supported subset")
    return build(w, args, kwargs, node)


def _literal_value(
    w: Core, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Value:
    if len(args) == 1 and not kwargs:
        return literal(w, args[0], node, name), False
    if name in ("Tensor", "FloatTensor", "DoubleTensor") and all(isinstance(a, int) for a in args):
        shape = shape_of(w, args, node, name)
        w.warn(node.lineno, f"torch.{name}(sizes) is uninitialised; using zeros")
        return np.zeros(shape), False
    w.refuse(node, f"torch.{name} takes one value")


def _sized(
    w: Core,
    name: str,
    base: str,
    shape: tuple[int, ...] | None,
    rest: list[Any],
    kwargs: dict[str, Any],
    node: ast.Call,
) -> Value:
    """ones/zeros/empty/rand/randn/full, of a size given (``shape`` None) or of a tensor's."""
    if shape is None and base == "full":
        if not rest:
            w.refuse(node, "torch.full needs a size and a fill value")
        size, rest = rest[0], rest[1:]
        shape = shape_of(w, list(size) if isinstance(size, tuple | list) else [size], node, name)
    elif shape is None:
        size = kwargs.pop("size", None)
        shape, rest = shape_of(w, rest if size is None else [size], node, name), []
    w.reserve(math.prod(shape), node, name)
    if base == "full":
        fill = rest[0] if rest else kwargs.pop("fill_value", None)
        if not is_number(fill):
            w.refuse(node, "torch.full needs a number to fill with")
        return np.full(shape, float(fill)), False
    if base == "ones":
        return np.ones(shape), False
    if base == "empty":
        w.warn(node.lineno, "torch.empty is uninitialised; using zeros")
    if base in ("zeros", "empty"):
        return np.zeros(shape), False
    rng = np.random.default_rng(w.seed)
    if base == "rand":
        return rng.random(shape), True
    return rng.standard_normal(shape), True


def _eye(w: Core, rest: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Value:
    dims = [d for d in rest if d is not None]
    if not 1 <= len(dims) <= 2 or not all(is_int(d) and d >= 0 for d in dims):
        w.refuse(node, "torch.eye takes one or two sizes")
    n, m = dims[0], dims[-1]
    w.reserve(n * m, node, "eye")
    return np.eye(n, m), False


def _arange(w: Core, rest: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Value:
    nums = list(rest) + [kwargs.pop(k) for k in ("start", "end", "step") if k in kwargs]
    if not 1 <= len(nums) <= 3 or not all(is_number(a) for a in nums):
        w.refuse(node, "torch.arange takes one to three numbers")
    start, end, step = (
        (0, nums[0], 1) if len(nums) == 1 else (*nums[:2], nums[2] if len(nums) == 3 else 1)
    )
    if step == 0:
        w.refuse(node, "torch.arange: the step must not be zero")
    count = max(0, math.ceil((end - start) / step))
    w.reserve(count, node, "arange")
    return start + step * np.arange(count, dtype=np.float64), False


def _randint(w: Core, rest: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Value:
    low, high = (0, rest[0]) if len(rest) == 2 else tuple(rest[:2])
    size = kwargs.pop("size", rest[-1] if len(rest) in (2, 3) else None)
    if not (is_int(low) and is_int(high) and high > low and size is not None):
        w.refuse(node, "torch.randint takes [low,] high and a size")
    shape = shape_of(w, list(size) if isinstance(size, tuple | list) else [size], node, "randint")
    w.reserve(math.prod(shape), node, "randint")
    return np.random.default_rng(w.seed).integers(low, high, shape).astype(float), True


def _linspace(w: Core, rest: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Value:
    nums = list(rest) + [kwargs.pop(k) for k in ("start", "end", "steps") if k in kwargs]
    if len(nums) != 3 or not all(is_number(a) for a in nums) or not is_int(nums[2]):
        w.refuse(node, "torch.linspace takes start, end and a number of steps")
    if nums[2] < 0:
        w.refuse(node, "torch.linspace: the number of steps must not be negative")
    w.reserve(nums[2], node, "linspace")
    return np.linspace(float(nums[0]), float(nums[1]), nums[2]), False


_OTHERS: dict[str, Callable[[Core, list[Any], dict[str, Any], ast.Call], Value]] = {
    "eye": _eye,
    "arange": _arange,
    "randint": _randint,
    "linspace": _linspace,
}


def fill_random_ints(w: Core, t: T, args: list[Any], node: ast.Call) -> T:
    """``torch.empty(3).random_(5)`` on a fresh tensor: seeded integers in [0, 5)."""
    if len(args) != 1 or not is_int(args[0]) or args[0] < 1:
        w.refuse(node, ".random_(n) takes one positive integer here")
    n = w.nodes[t.id]
    n.value = np.random.default_rng(w.seed).integers(0, args[0], n.value.shape) * 1.0
    n.random = True
    w.seed += 1
    return t


def numpy_factory(
    w: Core, path: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> list[Any]:
    """``np.zeros/ones/array`` handed to ``torch.tensor``: their values as nested lists."""
    kwargs.pop("dtype", None)
    if kwargs or len(args) != 1:
        w.refuse(node, f"{path}(...) takes one argument here")
    what = path.replace("numpy.", "np.")
    if path == "numpy.array":
        values: list[Any] = literal(w, args[0], node, what).tolist()
        return values
    shape = shape_of(w, [args[0]], node, what)
    w.reserve(math.prod(shape), node, what)
    filled: list[Any] = np.full(shape, 1.0 if path == "numpy.ones" else 0.0).tolist()
    return filled


def shape_of(w: Core, dims: list[Any], node: ast.AST, what: str) -> tuple[int, ...]:
    """Sizes as a factory takes them (``(2, 3)`` or ``2, 3``), checked against the limits."""
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        dims = list(dims[0])
    if not all(is_int(d) and d >= 0 for d in dims):
        w.refuse(node, f"torch.{what}: sizes must be non-negative integers")
    if len(dims) > 32:
        w.refuse(node, f"torch.{what}: more than 32 dims")
    count = math.prod(dims)
    if count > MAX_ELEMENTS:
        w.refuse(node, f"torch.{what}: {count:,} elements; the limit is {MAX_ELEMENTS:,}")
    return tuple(dims)


def literal(w: Core, value: Any, node: ast.AST, what: str) -> np.ndarray:
    """A nested list of numbers (or of one-element tensors, copied) as a float64 array."""
    count, _ = w.extent(value)
    if count > MAX_ELEMENTS:
        w.refuse(node, f"torch.{what}: {count:,} elements; the limit is {MAX_ELEMENTS:,}")

    def walk(v: Any) -> Any:
        if isinstance(v, tuple | list):
            return [walk(x) for x in v]
        if isinstance(v, T):
            tv = w.nodes[v.id].value
            if tv.size != 1 and tv.ndim:
                return tv.tolist()
            return float(tv.reshape(()))
        if is_number(v):
            return float(v)
        w.refuse(node, f"torch.{what}: expected numbers, got {describe(v)}")

    data = walk(value)
    try:
        array = np.array(data, dtype=np.float64)
    except ValueError:
        w.refuse(node, f"torch.{what}: the nested lists are not rectangular")
    w.reserve(array.size, node, what)
    return array


def variable(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> T:
    """``Variable(t, requires_grad=...)`` from old tutorials: a leaf holding t's value."""
    if len(args) != 1 or not isinstance(args[0], T):
        w.refuse(node, "Variable(...) takes one tensor")
    rg = kwargs.get("requires_grad")
    t = args[0]
    n = w.nodes[t.id]
    if n.op == "const" and w.made_here(t):
        if rg is not None:
            n.op, n.requires_grad = "input", bool(rg)
        return t
    return w.leaf(n.value.copy(), None if rg is None else bool(rg), node, "variable")
