"""What an op node computes, as one text: boxes, chain-rule write-ups and ``run`` agree."""

from __future__ import annotations

from engine.graph import EMPTY_PORT, Graph


def test_an_empty_port_shows_as_a_question_mark() -> None:
    g = Graph()
    g.add_node("a", "input", value=2.0)
    g.add_node("y", "mul")
    g.connect("a", "y", 0)
    assert g.nodes["y"].computes() == f"a * {EMPTY_PORT}" == "a * ?"
    g.connect("a", "y", 1)
    assert g.nodes["y"].computes() == "a * a"


def test_operand_names_are_written_by_the_caller() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("s", "sum", attrs={"dim": 0})
    g.connect("x", "s", 0)
    assert g.nodes["s"].computes(lambda n: f"<i>{n}</i>") == "sum(<i>x</i>, dim=0)"
