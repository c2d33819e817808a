"""Undoing a removal puts every node back where it stood.

The node order and each node's consumer order decide the topological order, so
the backward steps, the end-to-end columns and the saved file. An undo that
appended the nodes (or restored them in reverse) gave a graph with the same
gradients that played in another order; these tests remove random subsets in
random order and check that restoring them, last first, gives back every order.
"""

from __future__ import annotations

import random

import pytest

from engine.graph import Graph, Removed
from support import shuffled_graph


def state(g: Graph) -> tuple:
    """Everything whose order a user can see, directly or through the steps."""
    return (
        list(g.nodes),
        [(n.id, list(n.inputs)) for n in g.nodes.values()],
        [(n, g.consumers(n)) for n in g.nodes],
        [(n, list(g._dag.pred[n])) for n in g.nodes],
        g.topological_order(),
        g.edges(),
    )


@pytest.mark.parametrize("seed", range(12))
def test_restoring_a_random_removal_gives_back_every_order(seed: int) -> None:
    rng = random.Random(seed)
    g = shuffled_graph(rng)
    before = state(g)
    ids = list(g.nodes)
    for _ in range(4):
        gone = rng.sample(ids, rng.randint(1, len(ids)))
        removed = g.remove_nodes(gone)
        assert not set(gone) & set(g.nodes)
        g.restore_nodes(reversed(removed))
        assert state(g) == before


@pytest.mark.parametrize("seed", range(4))
def test_removing_everything_and_restoring_gives_back_every_order(seed: int) -> None:
    rng = random.Random(100 + seed)
    g = shuffled_graph(rng)
    before = state(g)
    ids = list(g.nodes)
    rng.shuffle(ids)
    g.restore_nodes(reversed(g.remove_nodes(ids)))
    assert state(g) == before


def test_one_at_a_time_as_well_as_in_bulk() -> None:
    rng = random.Random(7)
    g = shuffled_graph(rng)
    before = state(g)
    gone = rng.sample(list(g.nodes), 15)
    removed = [g.remove_node(nid) for nid in gone]
    for r in reversed(removed):
        g.restore(r)
    assert state(g) == before


def test_a_node_from_elsewhere_joins_at_the_end() -> None:
    g = Graph()
    g.add_node("a", "input", value=1.0)
    g.add_node("b", "tanh", ["a"])
    pasted = g.add_node("c", "mul", ["a", "a"])
    g.remove_node("c")
    g.restore_nodes([Removed(pasted, [])])
    assert list(g.nodes) == ["a", "b", "c"]
    assert g.consumers("a") == ["b", "c"]
    assert g.nodes["c"].inputs == ["a", "a"]
