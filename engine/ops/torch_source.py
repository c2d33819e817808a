"""How a node is written in PyTorch, from its record: one Python expression per node.

The script export (:mod:`engine.pytorch_export`) writes it and the tests' PyTorch
oracle runs it, so the spellings the table publishes are the ones tested against the
engine. The generic rule: an operator where the record lists one, else its first
``torch.*`` function (a ``Tensor.*`` method if it has none) with the attributes as
keywords; a record whose call reads otherwise gives its own ``torch_call``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .record import Attr, Attrs, Op

INFIX = ("+", "-", "*", "/", "**", "@")


def expression(op: Op, args: Sequence[str], attrs: Attrs) -> str:
    """The node ``op(args)`` with ``attrs`` (defaults filled in) as PyTorch source."""
    attrs = {**op.defaults, **attrs}
    if op.torch_call is not None:
        return op.torch_call(op, args, attrs)
    infix = next((s for s in op.torch if s in INFIX), None)
    if len(args) == 2 and infix is not None:
        return f"{args[0]} {infix} {args[1]}"
    if op.arity == 1 and infix == "-":
        return f"-{args[0]}"
    return function_call(op, args, written_attrs(op.attrs, attrs))


def function_call(op: Op, args: Sequence[str], attrs: Attrs) -> str:
    """``torch.f(args, k=v, ...)`` (operands in a list for a variadic op), or the method
    ``args[0].f(k=v, ...)`` when the record lists no function."""
    keywords = "".join(f", {k}={literal(v)}" for k, v in attrs.items())
    function = next((s for s in op.torch if s.startswith("torch.")), None)
    if function is None:
        method = next(s for s in op.torch if s.startswith("Tensor."))
        return f"{args[0]}.{method.removeprefix('Tensor.')}({keywords.removeprefix(', ')})"
    operands = f"[{', '.join(args)}]" if op.arity is None else ", ".join(args)
    return f"{function}({operands}{keywords})"


def written_attrs(specs: Sequence[Attr], attrs: Attrs) -> dict[str, Any]:
    """Attributes worth writing: all but trailing ones left at a None/False default
    (``torch.sum(x, dim=None, keepdim=True)``: PyTorch wants dim with keepdim)."""
    names = [a.name for a in specs]
    quiet = {a.name for a in specs if _unset(a.default) and attrs.get(a.name) is a.default}
    last = max((k for k, n in enumerate(names) if n not in quiet), default=-1)
    return {n: attrs.get(n) for n in names[: last + 1]}


def _unset(default: Any) -> bool:
    """A None/False default (not 0, which equals False: unsqueeze's dim=0 must be written)."""
    return default is None or default is False


def number(x: float) -> str:
    """A float as source that reads back bit for bit (``float("nan")``, not ``nan``)."""
    if math.isnan(x):
        return 'float("nan")'
    if math.isinf(x):
        return 'float("inf")' if x > 0 else '-float("inf")'
    return repr(float(x))


def literal(value: Any) -> str:
    """An attribute as Python source: ``repr``, but a float as :func:`number`."""
    if isinstance(value, float):
        return number(value)
    if isinstance(value, list | tuple):
        items = [literal(v) for v in value]
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    return repr(value)


class Source(str):
    """Python source written as it is (its repr is itself), for an attribute PyTorch
    spells as an expression (``tuple(range(x.ndim))``)."""

    def __repr__(self) -> str:
        return str(self)
