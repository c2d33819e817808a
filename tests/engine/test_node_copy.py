"""Copied nodes share nothing with their originals (``Node.copy`` copies field by field,
not through ``copy.deepcopy``'s generic walk; the clipboard and undo rely on it)."""

from __future__ import annotations

import numpy as np

from engine.graph import Graph


def test_a_copied_node_owns_its_operands_attributes_and_value() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0, 3.0])
    g.add_node("s", "sum", ["x"], attrs={"dim": 0})
    for original in g.nodes.values():
        copy = original.copy()
        assert vars(copy).keys() == vars(original).keys()
        for name, value in vars(original).items():
            twin = getattr(copy, name)
            if isinstance(value, np.ndarray):
                assert twin is not value and np.array_equal(twin, value)
            else:
                assert twin == value
                if isinstance(value, (list, dict)):
                    assert twin is not value
        copy.inputs.append("y")
        copy.attrs["extra"] = 1
        if copy.value is not None:
            copy.value[0] = 99.0
        assert "y" not in original.inputs and "extra" not in original.attrs
        assert original.value is None or original.value[0] == 1.0
