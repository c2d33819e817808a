"""Auto-layout (no Qt): columns left to right, no overlapping boxes, few crossings."""

from __future__ import annotations

import numpy as np
import pytest

from engine.graph import Graph
from engine.layout import DEFAULT_SIZE, layered_layout
from support import seed2_graph


def random_dag(n: int, seed: int = 0) -> Graph:
    """Leaves, then binary and unary ops on random earlier nodes; a few separate parts."""
    rng = np.random.default_rng(seed)
    g = Graph()
    ids: list[str] = []
    for k in range(n):
        nid = f"n{k}"
        if k < max(3, n // 10) or rng.random() < 0.05:
            g.add_node(nid, "input" if rng.random() < 0.7 else "const", value=1.0)
        elif rng.random() < 0.6:
            a, b = rng.choice(len(ids), 2)
            g.add_node(nid, "add" if rng.random() < 0.5 else "mul", [ids[a], ids[b]])
        else:
            g.add_node(nid, "tanh", [ids[int(rng.integers(max(0, len(ids) - 30), len(ids)))]])
        ids.append(nid)
    return g


def sizes_for(g: Graph, seed: int = 1) -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    return {nid: (float(rng.integers(120, 260)), float(rng.integers(60, 140))) for nid in g.nodes}


def assert_good(g: Graph, pos: dict[str, tuple[float, float]], sizes: dict) -> None:
    assert set(pos) == set(g.nodes)
    for src, dst, _ in g.edges():
        w = sizes.get(src, DEFAULT_SIZE)[0]
        assert pos[src][0] + w < pos[dst][0], (src, dst)
    boxes = [(pos[n][0], pos[n][1], *sizes.get(n, DEFAULT_SIZE)) for n in g.nodes]
    boxes.sort()
    for i, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1:]:
            if x2 >= x + w:
                break
            overlap = x < x2 + w2 and x2 < x + w and y < y2 + h2 and y2 < y + h
            assert not overlap, ((x, y, w, h), (x2, y2, w2, h2))


def test_seed_example_left_to_right_in_columns() -> None:
    g = seed2_graph()
    pos = layered_layout(g)
    assert_good(g, pos, {})
    assert pos["x1"][0] == pos["x2"][0] == pos["x3"][0] < pos["a"][0]
    assert pos["a"][0] == pos["b"][0] == pos["c"][0] < pos["y1"][0] < pos["y"][0]
    # operands in port order: y1, y2, y3 feed stack ports 0, 1, 2 from top to bottom
    assert pos["y1"][1] < pos["y2"][1] < pos["y3"][1]


def test_operand_order_follows_ports() -> None:
    g = Graph()
    g.add_node("p", "input", value=1.0)
    g.add_node("q", "input", value=2.0)
    g.add_node("d", "sub", ["q", "p"])
    pos = layered_layout(g)
    assert pos["q"][1] < pos["p"][1]  # q plugs into port 0 (top)


@pytest.mark.parametrize("n", [1, 2, 40, 300])
def test_random_graphs_layered_without_overlap(n: int) -> None:
    g = random_dag(n, seed=n)
    sizes = sizes_for(g)
    assert_good(g, layered_layout(g, sizes), sizes)


def test_constant_sits_next_to_its_consumer() -> None:
    g = Graph()
    g.add_node("x", "input", value=1.0)
    g.add_node("h1", "tanh", ["x"])
    g.add_node("h2", "tanh", ["h1"])
    g.add_node("k", "const", value=2.0)
    g.add_node("y", "mul", ["h2", "k"])
    pos = layered_layout(g)
    assert_good(g, pos, {})
    assert pos["h1"][0] < pos["k"][0] == pos["h2"][0] < pos["y"][0]


def test_components_stacked_and_empty_graph() -> None:
    assert layered_layout(Graph()) == {}
    g = Graph()
    g.add_node("a", "input", value=1.0)
    g.add_node("b", "neg", ["a"])
    g.add_node("c", "input", value=1.0)
    g.add_node("d", "neg", ["c"])
    pos = layered_layout(g)
    assert_good(g, pos, {})
    assert pos["c"][1] >= pos["a"][1] + DEFAULT_SIZE[1]


def test_barycenter_removes_avoidable_crossings() -> None:
    g = Graph()
    for nid in ("a", "b", "c"):
        g.add_node(nid, "input", value=1.0)
    g.add_node("pc", "neg", ["c"])
    g.add_node("pb", "neg", ["b"])
    g.add_node("pa", "neg", ["a"])
    g.add_node("out", "stack", ["pa", "pb", "pc"])
    pos = layered_layout(g)
    assert pos["pa"][1] < pos["pb"][1] < pos["pc"][1]
    assert pos["a"][1] < pos["b"][1] < pos["c"][1]


def test_thousand_nodes_lay_out_well() -> None:
    # Speed is a benchmark figure (auto_layout_5000_s), not a timed test.
    g = random_dag(1000, seed=3)
    sizes = sizes_for(g)
    pos = layered_layout(g, sizes)
    assert_good(g, pos, sizes)
