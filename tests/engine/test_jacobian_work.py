"""The end-to-end Jacobian is computed only up to a stated amount of work (issue 25,
item 12): a small Jacobian over huge intermediates is "too big", not hours."""

from __future__ import annotations

import numpy as np

from engine.autodiff import E2E_WORK_LIMIT, end_to_end_jacobian, forward
from engine.graph import Graph


def _broadcast(rows: int, cols: int) -> Graph:
    """A scalar times a rows x cols const, summed over the columns: rows outputs, 1 leaf."""
    g = Graph()
    g.add_node("x", "input", value=2.0)
    g.add_node("c", "const", value=np.ones((rows, cols)))
    g.add_node("p", "mul", ["x", "c"])
    g.add_node("y", "sum", ["p"], attrs={"dim": 1})
    return g


def test_a_small_jacobian_over_huge_intermediates_is_not_computed() -> None:
    g = _broadcast(4096, 2000)  # J is 4096 x 1, each pass touches ~1.6e7 elements
    fwd = forward(g)
    assert end_to_end_jacobian(g, fwd, "y", ["x"]) is None


def test_the_same_graph_at_a_size_within_the_work_limit_is_computed() -> None:
    g = _broadcast(64, 10)
    fwd = forward(g)
    jac = end_to_end_jacobian(g, fwd, "y", ["x"])
    assert jac is not None
    np.testing.assert_array_equal(jac, np.full((64, 1), 10.0))
    total = sum(v.size for v in fwd.values.values())
    assert end_to_end_jacobian(g, fwd, "y", ["x"], work_limit=64 * total - 1) is None
    assert 64 * total <= E2E_WORK_LIMIT


def test_the_panel_says_the_shape_of_a_jacobian_it_did_not_compute() -> None:
    from gui.model import labels

    text = labels.end_to_end_html("y", "A", ["x"], None, np.ones(4096), [np.zeros(())])
    assert "4096×1, too big to show" in text
