"""A variadic op's empty trailing ports go; a fixed-arity op keeps its empty ports."""

from engine.graph import Node


def test_a_variadic_op_drops_its_empty_trailing_ports_only() -> None:
    node = Node("s", "stack", ["a", None, "b", None, None])
    node.trim_empty_ports()
    assert node.inputs == ["a", None, "b"]


def test_a_fixed_arity_op_keeps_its_empty_ports() -> None:
    node = Node("m", "mul", ["a", None])
    node.trim_empty_ports()
    assert node.inputs == ["a", None]


def test_a_leaf_is_left_alone() -> None:
    node = Node("x", "input")
    node.trim_empty_ports()
    assert node.inputs == []
