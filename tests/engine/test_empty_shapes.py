"""Empty tensors keep their shape in a file (issue 31, item 11): a nested list cannot
spell (0, 3), so such a value or ``v`` gets an explicit ``shape`` (minor version 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.examples import EXAMPLES_DIR
from engine.fileformat import FileFormatError, GraphFile, dumps, load, loads
from engine.graph import Graph


def _empty_graph() -> GraphFile:
    g = Graph()
    g.add_node("x", "input", value=np.zeros((0, 3)), requires_grad=True)
    g.add_node("y", "mul", ["x", "x"])
    return GraphFile(graph=g, output="y", gradient=np.zeros((0, 3)))


def test_an_empty_tensor_and_v_round_trip_with_their_shapes():
    text = dumps(_empty_graph())
    doc = json.loads(text)
    assert doc["minor_version"] == 2
    assert doc["nodes"][0]["value"] == [] and doc["nodes"][0]["shape"] == [0, 3]
    assert doc["backward"]["gradient_shape"] == [0, 3]
    again = loads(text)
    assert again.graph.nodes["x"].value.shape == (0, 3) and again.gradient.shape == (0, 3)
    trace = backward(again.graph, forward(again.graph), "y", again.gradient)
    assert trace.grads["x"].shape == (0, 3)
    assert dumps(again) == text


def test_files_that_need_no_shape_are_written_as_before():
    gf = load(EXAMPLES_DIR / "seed2_stack_vjp.bpgraph")
    assert '"shape"' not in dumps(gf) and "minor_version" not in dumps(gf)
    g = Graph()
    g.add_node("x", "input", value=np.zeros((1, 0)), requires_grad=True)  # [[]] says (1, 0)
    assert '"shape"' not in dumps(GraphFile(graph=g))


@pytest.mark.parametrize(
    "shape, value",
    [([2, 3], []), ([0, 3], [1.0]), ([0, -1], []), ("(0, 3)", [])],
)
def test_a_shape_that_is_not_an_empty_tensors_is_refused_in_one_line(shape, value):
    doc = json.loads(dumps(_empty_graph()))
    doc["nodes"][0]["shape"], doc["nodes"][0]["value"] = shape, value
    with pytest.raises(FileFormatError, match="node 'x'") as info:
        loads(json.dumps(doc))
    assert "\n" not in str(info.value)
