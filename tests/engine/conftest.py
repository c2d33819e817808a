"""Shared helpers for the engine tests: graph builders and the PyTorch reference.

Test modules get them through the ``ref`` fixture (``from conftest import`` is
fragile when several test folders each have a conftest).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.graph import Graph
from engine.trace import Trace

try:
    import torch
except ImportError:  # the torch comparisons skip; everything else still runs
    torch = None


def torch_op(name: str, xs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """The PyTorch counterpart of one op of the table, applied to tensors ``xs``."""
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
        return torch.transpose(a, 0, 1) if a.dim() == 2 else a
    if name == "stack":
        return torch.stack(list(xs), dim=attrs.get("dim", 0))
    if name == "select":
        return torch.select(a, attrs.get("dim", 0), attrs.get("index", 0))
    if name == "reshape":
        return torch.reshape(a, tuple(attrs.get("shape", [-1])))
    raise KeyError(name)


def t64(value: Any, requires_grad: bool = False) -> Any:
    return torch.tensor(np.asarray(value, dtype=np.float64), requires_grad=requires_grad)


def single_op_graph(
    name: str, values: Sequence[np.ndarray], attrs: dict[str, Any] | None = None
) -> Graph:
    """Inputs ``x0, x1, ...`` feeding one op node ``y``."""
    g = Graph()
    ids = []
    for k, v in enumerate(values):
        g.add_node(f"x{k}", "input", value=v)
        ids.append(f"x{k}")
    g.add_node("y", name, ids, attrs=attrs or {})
    return g


def run(graph: Graph, output: str, gradient: Any = None) -> Trace:
    fwd = forward(graph)
    assert not fwd.errors, {k: str(e) for k, e in fwd.errors.items()}
    return backward(graph, fwd, output, gradient)


def close(actual: Any, expected: Any, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """The helpers above plus ``torch`` (None when it is not installed)."""
    return SimpleNamespace(
        torch=torch,
        torch_op=torch_op,
        t64=t64,
        single_op_graph=single_op_graph,
        run=run,
        close=close,
    )


@pytest.fixture(scope="session")
def tref(ref: SimpleNamespace) -> SimpleNamespace:
    """Like ``ref``, but the test is skipped when torch is missing."""
    if torch is None:
        pytest.skip("torch is not installed")
    return ref
