"""Test support shared by the engine and GUI tests: seed graphs and the PyTorch reference.

On the import path through ``pythonpath = ["tests"]`` (pyproject.toml):
``import support`` / ``from support import seed2_graph``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.graph import Graph

try:
    import torch
except ImportError:  # the torch comparisons skip; everything else still runs
    torch = None


# --------------------------------------------------------------------------- seed graphs


def seed2_graph() -> Graph:
    """Seed example 2: y = [x1·x2·x3, x1+x2+x3, x1+x2·x3], as a stack of three scalars.

    x1, x2, x3 = 1, 2, 3; a = x1·x2, y1 = a·x3; b = x1+x2, y2 = b+x3; c = x2·x3,
    y3 = x1+c; y = stack(y1, y2, y3).
    """
    g = Graph()
    for name, v in (("x1", 1.0), ("x2", 2.0), ("x3", 3.0)):
        g.add_node(name, "input", value=v)
    g.add_node("a", "mul", ["x1", "x2"])
    g.add_node("y1", "mul", ["a", "x3"])
    g.add_node("b", "add", ["x1", "x2"])
    g.add_node("y2", "add", ["b", "x3"])
    g.add_node("c", "mul", ["x2", "x3"])
    g.add_node("y3", "add", ["x1", "c"])
    g.add_node("y", "stack", ["y1", "y2", "y3"])
    return g


def seed3_graph() -> Graph:
    """Seed example 3: x=ones(2,2), y=x+2, z=y*y, out=z.mean()."""
    g = Graph()
    g.add_node("x", "input", value=np.ones((2, 2)))
    g.add_node("two", "const", value=2.0)
    g.add_node("y", "add", ["x", "two"])
    g.add_node("z", "mul", ["y", "y"])
    g.add_node("out", "mean", ["z"])
    return g


# --------------------------------------------------------------------------- PyTorch reference


def torch_op(name: str, xs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """The PyTorch counterpart of one engine op, applied to tensors ``xs``."""
    a = xs[0]
    if name == "add":
        return a + xs[1]
    if name == "sub":
        return a - xs[1]
    if name == "mul":
        return a * xs[1]
    if name == "div":
        return a / xs[1]
    if name == "pow":
        return torch.pow(a, xs[1])
    if name == "neg":
        return -a
    if name in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu"):
        return getattr(torch, name)(a)
    if name in ("sum", "mean"):
        return getattr(torch, name)(a, dim=attrs.get("dim"), keepdim=bool(attrs.get("keepdim")))
    if name == "matmul":
        return torch.matmul(a, xs[1])
    if name == "transpose":
        return a.t()  # like the engine: at most 2 dims, 0-D and 1-D unchanged
    if name == "stack":
        return torch.stack(list(xs), dim=attrs.get("dim", 0))
    if name == "select":
        return torch.select(a, attrs.get("dim", 0), attrs.get("index", 0))
    if name == "reshape":
        return torch.reshape(a, tuple(attrs.get("shape", [-1])))
    raise KeyError(name)


def close(actual: Any, expected: Any, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    """Same shape and the same numbers within the tolerances (NaN equals NaN)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
