"""The small Python the walk evaluates itself: arithmetic on numbers, a few builtins,
``math`` and ``range``. Python's own versions are never called on the user's values
beyond plain float arithmetic, whose results are bounded here.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

from .core import Core
from .values import AllDims, Range, T, construct, is_int, is_number

Builtin = Callable[[Core, list[Any], dict[str, Any], ast.Call], Any]

_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def number_op(op: ast.operator, a: Any, b: Any, where: ast.AST, w: Core) -> Any:
    """Arithmetic on plain numbers (sizes, scale factors), guarded against huge results."""
    try:
        if isinstance(op, ast.Pow):
            huge = is_int(a) and is_int(b) and (b > 64 or b < 0)
            out = float(a) ** float(b) if huge else a**b
        elif type(op) in _ARITHMETIC:
            out = _ARITHMETIC[type(op)](a, b)
        else:
            w.refuse(where, f"{construct(where)} is outside the supported subset")
    except (ZeroDivisionError, OverflowError) as exc:
        w.refuse(where, f"arithmetic error: {exc}")
    if isinstance(out, complex):
        w.refuse(where, "a complex number is outside the supported subset")
    if is_int(out) and abs(out) >= 2**63:
        w.refuse(where, "an integer this large is outside the supported subset")
    return out


def _builtin_float(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> float:
    if len(args) == 1 and isinstance(args[0], str):
        text = args[0].strip().lower()
        if text in ("nan", "inf", "+inf", "-inf", "infinity", "-infinity"):
            return float(text)
    if len(args) == 1 and is_number(args[0]):
        return float(args[0])
    w.refuse(node, "float(...) takes a number or 'nan'/'inf'")


def _builtin_int(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
    if len(args) == 1 and is_number(args[0]) and math.isfinite(args[0]):
        return int(args[0])
    w.refuse(node, "int(...) takes a finite number")


def _builtin_len(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
    if len(args) == 1 and isinstance(args[0], tuple | list):
        return len(args[0])
    if len(args) == 1 and isinstance(args[0], T):
        shape = w.nodes[args[0].id].value.shape
        if shape:
            return int(shape[0])
    w.refuse(node, "len(...) takes a list or a tensor with at least one dim")


def _math(fn: Callable[[float], float]) -> Builtin:
    def call(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> float:
        if len(args) != 1 or not is_number(args[0]):
            w.refuse(node, "math functions take one number here")
        try:
            return fn(args[0])
        except (ValueError, OverflowError) as exc:
            w.refuse(node, f"math error: {exc}")

    return call


def _tensor_builtin(op: str) -> Builtin:
    def call(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if len(args) == 1 and isinstance(args[0], T):
            return w.call_method(args[0], op, [], kwargs, node)
        w.refuse(node, f"{op}(...) takes one tensor here")

    return call


def _builtin_range(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Range:
    if len(args) != 1 or kwargs or not is_int(args[0]) or not 0 <= args[0] <= 64:
        w.refuse(node, "range(...) is supported only as tuple(range(x.ndim)) for dims")
    return Range(args[0])


def _all_dims(as_list: bool) -> Builtin:
    def build(w: Core, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> AllDims:
        if len(args) != 1 or kwargs or not isinstance(args[0], Range):
            w.refuse(node, "tuple(...)/list(...) are supported only around range(x.ndim)")
        return AllDims(args[0].n, as_list)

    return build


BUILTIN_FUNCTIONS: dict[str, Builtin] = {
    "range": _builtin_range,
    "tuple": _all_dims(as_list=False),
    "list": _all_dims(as_list=True),
    "float": _builtin_float,
    "int": _builtin_int,
    "len": _builtin_len,
    "abs": _tensor_builtin("abs"),
    "math.sqrt": _math(math.sqrt),
    "math.exp": _math(math.exp),
    "math.log": _math(math.log),
    "math.sin": _math(math.sin),
    "math.cos": _math(math.cos),
    "math.tanh": _math(math.tanh),
    "numpy.sqrt": _math(math.sqrt),
    "numpy.exp": _math(math.exp),
    "numpy.log": _math(math.log),
}
