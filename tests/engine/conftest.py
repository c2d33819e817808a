"""Shared helpers for the engine tests: graph builders and the PyTorch reference.

Test modules get them through the ``ref`` fixture (``from conftest import`` is
fragile when several test folders each have a conftest). ``torch_op`` and ``close``
live in tests/support.py, shared with tests that do not use the fixture.
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
from support import close, torch, torch_op


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


@pytest.fixture(scope="session")
def ref() -> SimpleNamespace:
    """The helpers above with ``torch_op``, ``close`` and ``torch`` (None if not installed)."""
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
