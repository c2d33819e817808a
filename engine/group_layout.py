"""Layout with groups as boxes: a collapsed group is one box, an expanded one a frame
around its own layout (no Qt).

As in Google's Model Explorer, only what is shown is laid out: a collapsed group's
members all sit at one spot under its box (their layout is never computed), and an
expanded group's members are laid out among themselves, inside a frame that the level
around it places as one box. So no frame ever covers a box that is not its own, and a
5,000-node model with its modules collapsed lays out a graph of a few dozen boxes.

A frame is its content's bounding box (member boxes and inner frames) plus ``margin``
on every side and ``caption`` more on top: ``gui.canvas.group_frames`` draws it with
the same two numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence

from .graph import Graph, Links
from .groups import Group, collapsed_roots
from .layout import DEFAULT_SIZE, LAYER_GAP, NODE_GAP, Point, Size, layered_layout

#: Expanded groups' own layouts (positions inside the frame, and its content's size).
LayoutCache = MutableMapping[tuple[object, ...], tuple[dict[str, Point], Size]]

#: Prefix of a group's stand-in node (a character no node id may hold).
_GROUP = "\x00group:"


def holders(groups: Sequence[Group]) -> dict[str, list[Group]]:
    """Each group's strict holders, smallest first (groups nest or stay apart, so the
    groups holding its first member are the ones holding all of it)."""
    sets = {g.id: frozenset(g.members) for g in groups}
    holder: dict[str, list[Group]] = {}
    for g in groups:
        for m in g.members:
            holder.setdefault(m, []).append(g)
    out: dict[str, list[Group]] = {}
    for g in groups:
        mine = sets[g.id]
        first = g.members[0] if g.members else None
        held = [h for h in holder.get(first, []) if mine < sets[h.id]] if first else []
        out[g.id] = sorted(held, key=lambda h: len(sets[h.id]))
    return out


def inside_collapsed(
    groups: Sequence[Group], edges: Iterable[tuple[str, str, int]]
) -> set[tuple[str, str, int]]:
    """The edges whose two ends lie in one collapsed group: drawn nowhere, the group's
    box stands for them (drawn under it, a curve bowing out of the box poked out of
    its sides). Groups nest or stay apart, so two ends share a collapsed group exactly
    when the outermost collapsed groups holding them are the same."""
    outermost: dict[str, str] = {}
    for g in sorted((g for g in groups if g.collapsed), key=lambda g: len(g.members)):
        for m in g.members:
            outermost[m] = g.id  # a bigger (holding) group comes later and wins
    return {e for e in edges
            if (held := outermost.get(e[0])) is not None and outermost.get(e[1]) == held}


def shown_groups(groups: Sequence[Group]) -> list[Group]:
    """The groups with a frame on screen: those inside no collapsed group."""
    around = holders(groups)
    return [g for g in groups if not any(h.collapsed for h in around[g.id])]


def grouped_layout(
    graph: Graph,
    sizes: Mapping[str, Size],
    groups: Sequence[Group],
    *,
    margin: float,
    caption: float,
    rooms: Mapping[str, Size] | None = None,
    layer_gap: float = LAYER_GAP,
    node_gap: float = NODE_GAP,
    cache: LayoutCache | None = None,
) -> dict[str, Point]:
    """Top-left positions for every node: each level (the whole graph, then each expanded
    group) is :func:`~engine.layout.layered_layout` over its free boxes and its child
    groups as single boxes of their frames' size; a collapsed group's members share
    one position, in a box at least ``rooms[group id]`` big (its caption's room). Boxes
    and frames never overlap, at any level.

    ``cache`` (kept by the caller for one graph) holds each expanded group's own layout,
    keyed by what it depends on (its members' sizes, its inner groups' states and rooms,
    the gaps): expanding a module again, or another one around it, reuses it."""
    rooms = rooms or {}
    shown = shown_groups(groups)
    sets = {g.id: frozenset(g.members) for g in shown}
    around = holders(shown)
    children: dict[str | None, list[Group]] = {}
    for g in shown:
        children.setdefault(around[g.id][0].id if around[g.id] else None, []).append(g)
    gaps = (layer_gap, node_gap)

    def level(scope: frozenset[str] | None, inner: list[Group]) -> tuple[dict[str, Point], Size]:
        """Positions relative to the level's top-left corner, and its size."""
        unit_of: dict[str, str] = {}  # node -> the unit (itself or a child group) it is in
        rel: dict[str, dict[str, Point]] = {}
        unit_size: dict[str, Size] = {}
        for g in inner:
            key = _GROUP + g.id
            if g.collapsed:
                least = rooms.get(g.id, (0.0, 0.0))
                w = max(least[0], *(sizes.get(m, DEFAULT_SIZE)[0] for m in g.members))
                h = max(least[1], *(sizes.get(m, DEFAULT_SIZE)[1] for m in g.members))
                content: dict[str, Point] = {m: (0.0, 0.0) for m in g.members}
            else:
                content, (w, h) = inner_level(g)
            rel[key] = {m: (x + margin, y + margin + caption) for m, (x, y) in content.items()}
            unit_size[key] = (w + 2 * margin, h + 2 * margin + caption)
            for m in g.members:
                unit_of[m] = key
        nodes = list(graph.nodes) if scope is None else [n for n in graph.nodes if n in scope]
        for n in nodes:
            unit_of.setdefault(n, n)
        placed = layered_layout(_quotient(graph, nodes, unit_of), _sizes(sizes, unit_size),
                                layer_gap=gaps[0], node_gap=gaps[1])
        x0 = min(x for x, _ in placed.values())
        y0 = min(y for _, y in placed.values())
        out: dict[str, Point] = {}
        right = bottom = 0.0
        for unit, (x, y) in placed.items():
            x, y = x - x0, y - y0
            w, h = unit_size.get(unit) or sizes.get(unit, DEFAULT_SIZE)
            right, bottom = max(right, x + w), max(bottom, y + h)
            for m, (dx, dy) in rel.get(unit, {unit: (0.0, 0.0)}).items():
                out[m] = (x + dx, y + dy)
        return out, (right, bottom)

    def inner_level(g: Group) -> tuple[dict[str, Point], Size]:
        if cache is None:
            return level(sets[g.id], children.get(g.id, []))
        inside = [(h.id, h.collapsed, rooms.get(h.id)) for h in shown if sets[h.id] < sets[g.id]]
        key = (g.id, tuple(sizes.get(m) for m in g.members), tuple(inside), gaps, margin, caption)
        if key not in cache:
            cache[key] = level(sets[g.id], children.get(g.id, []))
        return cache[key]

    if not graph.nodes:
        return {}
    return level(None, children.get(None, []))[0]


def _sizes(sizes: Mapping[str, Size], units: Mapping[str, Size]) -> dict[str, Size]:
    out = dict(sizes)
    out.update(units)
    return out


def _quotient(graph: Graph, nodes: Sequence[str], unit_of: Mapping[str, str]) -> Graph:
    """The level's graph: one node per unit (a box, or a child group standing in for its
    members), an edge wherever a member's operand is in another unit of the level.
    Leaves stay leaves (the layout pulls parameters beside their consumers)."""
    links = Links()
    inputs: dict[str, list[str | None]] = {}
    for n in nodes:
        u = unit_of[n]
        links.add_node(u)
        ins = inputs.setdefault(u, [])
        for s in graph.nodes[n].inputs:
            su = unit_of.get(s) if s is not None else None
            if su is not None and su != u and su not in ins:
                ins.append(su)
                links.add_edge(su, u)
    out = Graph(max_nodes=None)
    for u in links.topological_order():  # groups are convex: the quotient has no cycle
        node = graph.nodes.get(u)
        if node is not None and node.is_leaf:
            out.add_node(u, node.op, value=0.0)
        else:
            out.add_captured(u, "group", inputs[u])
    return out


#: A box as its corners: x0, y0, x1, y1.
Box = tuple[float, float, float, float]


def collapsed_box(
    positions: Mapping[str, Point], sizes: Mapping[str, Size], members: Sequence[str],
    *, margin: float, caption: float,
) -> Box | None:
    """A collapsed group's box where its members are, as ``gui.canvas.group_frames``
    draws it: their bounding box, ``margin`` around and ``caption`` more on top (None
    when no member has a position)."""
    placed = [m for m in members if m in positions]
    if not placed:
        return None
    x0 = min(positions[m][0] for m in placed)
    y0 = min(positions[m][1] for m in placed)
    x1 = max(positions[m][0] + sizes.get(m, DEFAULT_SIZE)[0] for m in placed)
    y1 = max(positions[m][1] + sizes.get(m, DEFAULT_SIZE)[1] for m in placed)
    return (x0 - margin, y0 - margin - caption, x1 + margin, y1 + margin)


def clear_of_collapsed(
    positions: Mapping[str, Point],
    sizes: Mapping[str, Size],
    groups: Sequence[Group],
    *,
    margin: float,
    caption: float,
    gap: float = NODE_GAP,
    first: str | None = None,
) -> dict[str, Point]:
    """New top-left positions for the boxes to move so that no collapsed group's box
    covers a box that is not its own: a user's boxes stay where they were laid out,
    except the few a collapsed box would hide, pushed the least distance out of its way.

    The outermost collapsed groups are settled one by one (``first``, the one the user
    just collapsed, first: it stays where its members are); a later one whose box meets
    an earlier one's moves, members and all, to the nearest clear spot. Then each box
    outside them that a collapsed box covers moves to the nearest spot ``gap`` clear of
    every collapsed box and every other box. Returns only the boxes that move."""
    roots = sorted(collapsed_roots(groups), key=lambda g: g.id != first)
    pos = dict(positions)
    settled: list[Box] = []
    inside: set[str] = set()
    for g in roots:
        box = collapsed_box(pos, sizes, g.members, margin=margin, caption=caption)
        if box is None:
            continue
        dx, dy = _nearest_clear(box, settled, gap)
        for m in g.members:
            if m in pos:
                pos[m] = (pos[m][0] + dx, pos[m][1] + dy)
        settled.append((box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy))
        inside.update(g.members)
    free = [n for n in pos if n not in inside]

    def box_of(n: str) -> Box:
        w, h = sizes.get(n, DEFAULT_SIZE)
        return (pos[n][0], pos[n][1], pos[n][0] + w, pos[n][1] + h)

    for n in free:
        mine = box_of(n)
        if not any(_meet(mine, s) for s in settled):
            continue
        others = [box_of(o) for o in free if o != n]
        dx, dy = _nearest_clear(mine, settled + others, gap)
        pos[n] = (pos[n][0] + dx, pos[n][1] + dy)
    return {n: p for n, p in pos.items() if p != positions.get(n)}


#: Overlaps thinner than this (scene units) are rounding, not cover: a box pushed to touch
#: another lands at ``pos + (edge - pos)``, which floats may put 1e-14 past the edge.
TOUCH = 1e-9


def _meet(a: Box, b: Box) -> bool:
    """Whether two boxes share an area (touching sides, within :data:`TOUCH`, do not)."""
    return (a[0] < b[2] - TOUCH and b[0] < a[2] - TOUCH
            and a[1] < b[3] - TOUCH and b[1] < a[3] - TOUCH)


def _nearest_clear(box: Box, obstacles: Sequence[Box], gap: float) -> tuple[float, float]:
    """A short shift (dx, dy) after which ``box`` meets none of ``obstacles``, with
    ``gap`` between it and those it is pushed past: the shortest of the shifts that put
    it ``gap`` beyond a side of one of the :data:`_NEAR` nearest obstacles on each axis
    (or leave that axis be), else just past the rightmost obstacle, which is clear."""
    if not any(_meet(box, o) for o in obstacles):
        return (0.0, 0.0)
    cx, cy = box[0] + box[2], box[1] + box[3]  # twice the centre, as in the key
    near = sorted(obstacles, key=lambda o: abs(o[0] + o[2] - cx) + abs(o[1] + o[3] - cy))
    xs = {0.0}
    ys = {0.0}
    for o in near[:_NEAR]:
        xs.update((o[0] - gap - box[2], o[2] + gap - box[0]))
        ys.update((o[1] - gap - box[3], o[3] + gap - box[1]))
    for dx, dy in sorted(((x, y) for x in xs for y in ys), key=lambda d: d[0] ** 2 + d[1] ** 2):
        moved = (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)
        if not any(_meet(moved, o) for o in obstacles):
            return (dx, dy)
    return (max(o[2] for o in obstacles) + gap - box[0], 0.0)


#: How many obstacles nearest a box give the shifts tried (the rest are only checked).
_NEAR = 12
