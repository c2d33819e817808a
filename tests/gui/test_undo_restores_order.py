"""Undo of a delete gives back the exact document: same playback, same file.

Users rely on a graph playing identically after a save and reopen, and on undo
restoring exactly what was there. The backward steps, the leaves' (end-to-end
columns') order and the saved file all follow the node and link orders, so a
delete undone must put each node back where it stood, not append it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.fileformat import GraphFile, dumps
from gui.commands import RemoveNodes, delete_selection, push
from gui.document import GraphDocument
from gui.model.end_to_end import end_to_end
from support import shuffled_graph


def loaded(seed: int) -> GraphDocument:
    rng = random.Random(seed)
    g = shuffled_graph(rng, 50, complete=True)
    out = list(g.nodes)[-1]
    doc = GraphDocument()
    doc.load(GraphFile(graph=g, output=out, gradient=np.ones(())), None)
    doc.positions = {nid: (40.0 * i, 15.0 * (i % 7)) for i, nid in enumerate(g.nodes)}
    return doc


def playback(doc: GraphDocument) -> tuple:
    """What a user sees and saves: node order, step order, end-to-end columns, file."""
    trace = doc.results.trace
    assert trace is not None
    e2e = end_to_end(doc.graph, doc.results, accumulated=False)
    assert e2e is not None
    return (
        list(doc.graph.nodes),
        [(s.operand, s.consumer, s.operand_index) for s in trace.steps],
        e2e.leaves,
        dumps(doc.to_file()).encode(),
    )


@pytest.mark.parametrize("seed", range(6))
def test_undo_of_deleting_a_random_subset_plays_and_saves_as_before(seed: int) -> None:
    doc = loaded(seed)
    before = playback(doc)
    rng = random.Random(seed)
    for _ in range(3):
        ids = rng.sample(list(doc.graph.nodes), rng.randint(1, len(doc.graph)))
        assert push(doc, RemoveNodes(doc, ids)) is None
        runs = doc.recompute_count
        doc.undo_stack.undo()
        assert doc.recompute_count == runs + 1
        assert playback(doc) == before


def test_undo_of_deleting_everything_and_redo_undo_cycles() -> None:
    doc = loaded(99)
    before = playback(doc)
    ids = list(doc.graph.nodes)
    random.Random(3).shuffle(ids)
    cmd = delete_selection(doc, ids, [])
    assert cmd is not None and push(doc, cmd) is None
    assert len(doc.graph) == 0 and doc.output is None
    for _ in range(3):
        doc.undo_stack.undo()
        assert playback(doc) == before
        doc.undo_stack.redo()
        assert len(doc.graph) == 0
    doc.undo_stack.undo()
    assert playback(doc) == before


def test_undo_of_deleting_with_edges_plays_as_before() -> None:
    """A selection of nodes and edges: the edges' undo and the nodes' together."""
    doc = loaded(5)
    before = playback(doc)
    edges = doc.graph.edges()
    nodes = list(doc.graph.nodes)
    cmd = delete_selection(doc, nodes[10:30:3], edges[5:40:4])
    assert cmd is not None and push(doc, cmd) is None
    doc.undo_stack.undo()
    assert playback(doc) == before
