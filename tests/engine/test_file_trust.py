"""What the loader bounds and what it reads back (issue 25, items 7, 11, 13)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import file_limits
from engine.fileformat import FileFormatError, GraphFile, dumps, loads
from engine.graph import Graph
from engine.ops import OPS


def _doc(**top: object) -> dict:
    doc = {
        "format": "backprop-studio-graph",
        "version": 1,
        "nodes": [
            {"id": "x", "op": "input", "value": [1.0, 2.0], "requires_grad": True},
            {"id": "y", "op": "sum", "inputs": ["x"]},
        ],
    }
    doc.update(top)
    return doc


NUMBER_ATTRS = [
    (name, a.name) for name, spec in OPS.items() for a in spec.attrs if a.kind == "number-or-null"
]


@settings(max_examples=60, deadline=None)
@given(
    which=st.sampled_from(NUMBER_ATTRS),
    value=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_every_number_attribute_round_trips_non_finite_values(which, value) -> None:
    op, attr = which
    g = Graph()
    g.add_node("x", "input", value=[1.0, -2.0])
    g.add_node("n", op, ["x"], attrs={attr: value})
    back = loads(dumps(GraphFile(graph=g))).graph.nodes["n"].attrs[attr]
    if value is None or not math.isnan(value):
        assert back == value
    else:
        assert math.isnan(back)


def test_a_nan_clamp_bound_saves_and_opens() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, -2.0])
    g.add_node("c", "clamp", ["x"], attrs={"min": float("nan"), "max": float("inf")})
    text = dumps(GraphFile(graph=g))
    attrs = loads(text).graph.nodes["c"].attrs
    assert math.isnan(attrs["min"]) and attrs["max"] == math.inf


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        (_doc(title="t" * 20_000_000), '"title"'),
        (_doc(groups=[{"id": "g", "members": ["y"], "title": "g" * 1_000_000}]), "groups[0]"),
        (_doc(description="d" * (file_limits.MAX_TEXT_LENGTH + 1)), "description"),
        (_doc(notes={"k": "n" * (file_limits.MAX_TEXT_LENGTH + 1)}), "notes > k"),
    ],
)
def test_every_string_has_a_length_limit(doc, where) -> None:  # noqa: ANN001
    text = json.dumps(doc)
    start = time.perf_counter()
    with pytest.raises(FileFormatError) as info:
        loads(text)
    message = str(info.value)
    assert where in message and "characters; it may have at most" in message
    assert "\n" not in message and len(message) < 300
    assert time.perf_counter() - start < 5  # refused, not worked through


def test_a_title_at_the_limit_still_opens() -> None:
    gf = loads(json.dumps(_doc(title="t" * file_limits.MAX_TITLE_LENGTH)))
    assert len(gf.title) == file_limits.MAX_TITLE_LENGTH


def test_a_chain_of_large_intermediates_is_refused_before_allocating() -> None:
    """~40 KB of chained exp nodes over a 10^6-element input: each alone is allowed."""
    nodes = [{"id": "x", "op": "const", "value": [[0.0] * 1000] * 1000}]
    for k in range(400):
        nodes.append({"id": f"e{k}", "op": "exp", "inputs": [nodes[-1]["id"]]})
    doc = _doc()
    doc["nodes"] = nodes
    with pytest.raises(FileFormatError) as info:
        loads(json.dumps(doc))
    message = str(info.value)
    assert message.startswith("node 'e29': the graph's values would reach 31,000,000 elements")
    assert "MB" in message


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 60), min_size=1, max_size=8), limit=st.integers(1, 200))
def test_the_budget_refuses_exactly_where_the_running_total_passes(sizes, limit) -> None:
    budget = file_limits.ElementBudget(limit)
    total = 0
    for k, n in enumerate(sizes):
        total += n
        if total > limit:
            with pytest.raises(Exception, match=f"node 'n{k}'"):
                budget.add(f"n{k}", n)
            return
        budget.add(f"n{k}", n)
    assert np.sum(sizes) <= limit
