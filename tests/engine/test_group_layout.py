"""Layout with groups as boxes (no Qt): whatever is collapsed or expanded, no box or
frame covers one that is not its own; a collapsed group's members share one spot."""

from __future__ import annotations

import numpy as np

from engine.graph import Graph
from engine.group_layout import grouped_layout
from engine.groups import Group

MARGIN, CAPTION = 14.0, 18.0
GAPS = {"layer_gap": 8.0, "node_gap": 6.0}  # tighter than a frame's margin: it must be kept
Rect = tuple[float, float, float, float]  # x0, y0, x1, y1


def blocks(n_outer: int = 3, inner: int = 2, ops: int = 3) -> tuple[Graph, list[Group]]:
    """A chain of outer blocks, each of ``inner`` blocks of ``ops`` ops (a weight leaf
    per inner block, as a module's parameter); outer and inner blocks are groups."""
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    prev, groups = "x", []
    for o in range(n_outer):
        outer: list[str] = []
        for i in range(inner):
            w = f"w{o}_{i}"
            g.add_node(w, "input", value=[0.5, 0.5])
            mine = []
            for k in range(ops):
                nid = f"b{o}_{i}_{k}"
                g.add_node(nid, "mul" if k == 0 else "tanh", [prev, w] if k == 0 else [prev])
                mine.append(nid)
                prev = nid
            groups.append(Group(f"m{o}.{i}", mine, f"m{o}.{i}"))
            outer += mine
        groups.append(Group(f"m{o}", outer, f"m{o}"))
    g.add_node("s", "sum", [prev])
    return g, groups


def frames(groups: list[Group], boxes: dict[str, Rect]) -> dict[str, Rect]:
    """The rule the canvas draws by: a frame is its members' boxes and inner frames,
    MARGIN around, CAPTION more on top; no frame inside a collapsed group."""
    out: dict[str, Rect] = {}
    for g in sorted(groups, key=lambda g: len(g.members)):
        if any(h.collapsed and set(g.members) < set(h.members) for h in groups):
            continue
        parts = [boxes[m] for m in g.members]
        parts += [out[h.id] for h in groups if h.id in out and set(h.members) < set(g.members)]
        x0, y0 = min(p[0] for p in parts), min(p[1] for p in parts)
        x1, y1 = max(p[2] for p in parts), max(p[3] for p in parts)
        out[g.id] = (x0 - MARGIN, y0 - MARGIN - CAPTION, x1 + MARGIN, y1 + MARGIN)
    return out


def test_no_box_or_frame_overlaps_another_in_any_state() -> None:
    rng = np.random.default_rng(4)
    graph, groups = blocks()
    sizes = {n: (float(rng.integers(120, 260)), float(rng.integers(60, 140))) for n in graph.nodes}
    for trial in range(24):
        states = [Group(g.id, g.members, g.title, bool(rng.random() < 0.5)) for g in groups]
        pos = grouped_layout(graph, sizes, states, margin=MARGIN, caption=CAPTION, **GAPS)
        assert set(pos) == set(graph.nodes)
        boxes = {n: (x, y, x + sizes[n][0], y + sizes[n][1]) for n, (x, y) in pos.items()}
        shown = frames(states, boxes)
        under = {m for g in states if g.id in shown and g.collapsed for m in g.members}
        for g in states:
            if g.id in shown and g.collapsed:
                assert len({pos[m] for m in g.members}) == 1  # never laid out inside
        rects = [(f"frame {k}", r) for k, r in shown.items()]
        rects += [(n, b) for n, b in boxes.items() if n not in under]
        own = {(f"frame {g.id}", m) for g in states for m in g.members}
        own |= {(f"frame {g.id}", f"frame {h.id}") for g in states for h in states
                if set(h.members) < set(g.members)}
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[i + 1 :]:
                if (a, b) in own or (b, a) in own:
                    continue
                meet = ra[0] < rb[2] and rb[0] < ra[2] and ra[1] < rb[3] and rb[1] < ra[3]
                assert not meet, (trial, a, b)


def test_every_edge_still_runs_left_to_right_between_the_shown_boxes() -> None:
    graph, groups = blocks()
    sizes = {n: (150.0, 80.0) for n in graph.nodes}
    pos = grouped_layout(graph, sizes, [Group(g.id, g.members, g.title, False) for g in groups],
                         margin=MARGIN, caption=CAPTION)
    for src, dst, _ in graph.edges():
        assert pos[src][0] + 150.0 < pos[dst][0], (src, dst)


def test_a_cached_module_layout_is_the_one_computed_afresh() -> None:
    """Expanding and collapsing modules with one cache lays out exactly what a layout
    without it does, and an inner module's layout is made once for its states."""
    rng = np.random.default_rng(7)
    graph, groups = blocks()
    sizes = {n: (float(rng.integers(120, 260)), float(rng.integers(60, 140))) for n in graph.nodes}
    cache: dict[tuple[object, ...], tuple[dict[str, tuple[float, float]], tuple[float, float]]] = {}
    for trial in range(16):
        states = [Group(g.id, g.members, g.title, bool(rng.random() < 0.5)) for g in groups]
        fresh = grouped_layout(graph, sizes, states, margin=MARGIN, caption=CAPTION, **GAPS)
        cached = grouped_layout(graph, sizes, states, margin=MARGIN, caption=CAPTION, **GAPS,
                                cache=cache)
        assert cached == fresh, trial
    # one entry per (module, states of the modules inside it) met: far fewer than calls
    assert 0 < len(cache) <= 3 * 2 + 3 * 4


def test_the_edges_inside_a_collapsed_group_are_those_between_its_members() -> None:
    from engine.group_layout import inside_collapsed

    edges = [("a", "b", 0), ("b", "c", 0), ("c", "d", 0), ("x", "y", 0), ("d", "x", 0)]
    outer = Group("outer", ["a", "b", "c"], collapsed=True)
    inner = Group("inner", ["a", "b"], collapsed=False)
    other = Group("other", ["x", "y"], collapsed=False)
    assert inside_collapsed([inner, outer, other], edges) == {("a", "b", 0), ("b", "c", 0)}
    inner_only = [inner, Group("outer", ["a", "b", "c"], collapsed=False), other]
    assert inside_collapsed(inner_only, edges) == set()
    shut = Group("other", ["x", "y"], collapsed=True)
    assert inside_collapsed([Group("inner", ["a", "b"]), shut], edges) == {
        ("a", "b", 0), ("x", "y", 0)}
