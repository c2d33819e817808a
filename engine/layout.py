"""Automatic placement of a graph's node boxes: layered, left to right (no Qt).

A graph read left to right (inputs, then what is computed from them, then the
output) is how a teacher draws it on the board, so the layout is the classic
Sugiyama pipeline, kept small:

1. layers by longest path (topological generations), constants pulled
   right next to their first consumer so they do not drag long edges across;
2. long edges split by virtual nodes, then barycenter sweeps (port-aware, so
   operand 0 sits above operand 1) keep the order with the fewest crossings;
3. each column is placed vertically by isotonic regression (pool adjacent
   violators): every box as close as possible to its neighbours' centres, never
   closer to the box above than the gap. That gives straight edges where it can.

Weakly connected components are laid out separately and stacked top to bottom.
Positions are the top-left corners of the boxes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterable, Mapping
from typing import cast

from .graph import CAPTURED_OP, Graph, Links

Size = tuple[float, float]
Point = tuple[float, float]

DEFAULT_SIZE: Size = (180.0, 90.0)
#: Horizontal space between columns (room for the bezier edges and edge labels).
LAYER_GAP = 110.0
#: Vertical space between boxes in one column.
NODE_GAP = 44.0
#: Vertical space between two weakly connected components.
COMPONENT_GAP = 90.0
#: Barycenter sweeps (down + up) tried; the best ordering found is kept.
SWEEPS = 6
#: Vertical placement passes (forward + backward over the columns).
PLACEMENT_PASSES = 4
#: Height a virtual (long-edge) node reserves in its column.
VIRTUAL_HEIGHT = 12.0
#: Virtual nodes allowed per real node (long edges past this budget are not split).
VIRTUAL_BUDGET = 2


def layered_layout(
    graph: Graph,
    sizes: Mapping[str, Size] | None = None,
    *,
    layer_gap: float = LAYER_GAP,
    node_gap: float = NODE_GAP,
) -> dict[str, Point]:
    """Top-left positions for every node of ``graph``; ``sizes`` maps id -> (w, h)
    (missing ids get :data:`DEFAULT_SIZE`). Every edge goes from a smaller x to a
    larger x, and no two boxes overlap."""
    sizes = dict(sizes or {})
    dag = Links()
    for nid in graph.nodes:
        dag.add_node(nid)
    ports: dict[tuple[str, str], float] = {}
    for src, dst, index in graph.edges():
        dag.add_edge(src, dst)
        n_ports = max(len(graph.nodes[dst].inputs), 1)
        ports.setdefault((src, dst), (index + 0.5) / n_ports - 0.5)
    order = {nid: k for k, nid in enumerate(graph.nodes)}
    components = sorted(
        (sorted(c, key=order.__getitem__) for c in dag.weak_components()),
        key=lambda c: order[c[0]],
    )
    positions: dict[str, Point] = {}
    top = 0.0
    for comp in components:
        sub = dag if len(components) == 1 else _component_links(dag, comp)
        consts = _beside_consumers(graph, sub.topological_order())
        placed = _layout_component(sub, order, consts, sizes, ports, layer_gap, node_gap)
        ys = [y for _, y in placed.values()]
        bottom = max(y + _size(sizes, n)[1] for n, (_, y) in placed.items())
        shift = top - min(ys)
        for nid, (x, y) in placed.items():
            positions[nid] = (x, y + shift)
        top += bottom - min(ys) + COMPONENT_GAP
    return positions


# --------------------------------------------------------------------------- one component


def _component_links(dag: Links, comp: list[str]) -> Links:
    """The links among a weak component listed in ``dag``'s order, in time proportional
    to the component (scanning the whole graph per component took quadratic time on a
    file of many small components)."""
    sub = Links()
    for n in comp:
        sub.add_node(n)
    for u in comp:
        for v in dag.succ[u]:  # a successor is in the same component
            sub.add_edge(u, v)
    return sub


def _size(sizes: Mapping[str, Size], nid: Hashable) -> Size:
    if isinstance(nid, str):
        return sizes.get(nid, DEFAULT_SIZE)
    return (0.0, VIRTUAL_HEIGHT)


def _beside_consumers(graph: Graph, order: list[str]) -> list[str]:
    """The nodes drawn just before their first consumer, in topological order: constants,
    and in a captured model its parameters and every node computed from them alone (the
    weights of a 1,000-layer model, and their transposes, in the first columns would each
    draw an edge across the whole model)."""
    out: list[str] = []
    chosen: set[str] = set()
    for n in order:
        node = graph.nodes[n]
        if node.op == "const":
            pulled = True
        elif node.is_leaf:
            pulled = any(graph.nodes[c].op == CAPTURED_OP for c in graph.consumers(n))
        else:
            ins = [s for s in node.inputs if s is not None]
            pulled = node.op == CAPTURED_OP and bool(ins) and all(s in chosen for s in ins)
        if pulled:
            chosen.add(n)
            out.append(n)
    return out


def _layers(dag: Links, consts: list[str]) -> dict[Hashable, int]:
    """Longest-path layering; a constant (a node of ``consts``, in topological order, whose
    operands are all in it too) moves to just before its first consumer."""
    layer: dict[Hashable, int] = {n: k for k, gen in enumerate(dag.generations()) for n in gen}
    pulled = set(consts)
    for n in reversed(consts):  # consumers first: a chain of them moves as one
        succ = [layer[s] for s in dag.succ[n]]
        if succ and all(p in pulled for p in dag.pred[n]):
            layer[n] = min(succ) - 1
    return layer


def _layout_component(
    dag: Links,
    order: Mapping[str, int],
    consts: list[str],
    sizes: Mapping[str, Size],
    ports: Mapping[tuple[str, str], float],
    layer_gap: float,
    node_gap: float,
) -> dict[str, Point]:
    layer = _layers(dag, consts)
    # Split long edges with virtual nodes (tuples, so they never clash with ids).
    preds: dict[Hashable, list[tuple[Hashable, float]]] = {n: [] for n in dag}
    succs: dict[Hashable, list[tuple[Hashable, float]]] = {n: [] for n in dag}
    # Short edges first: when a few edges span many columns, splitting all of them
    # would cost more than the rest of the graph, so past a budget they stay whole
    # (they then take no part in the ordering, which the short edges decide anyway).
    budget = VIRTUAL_BUDGET * len(dag.succ) + 64
    for src, dst in sorted(dag.edges(), key=lambda e: layer[e[1]] - layer[e[0]]):
        port = ports.get((src, dst), 0.0)
        chain: list[Hashable] = [src]
        span = layer[dst] - layer[src] - 1
        if span > budget:
            continue
        budget -= span
        chain += [("virtual", src, dst, k) for k in range(layer[src] + 1, layer[dst])]
        chain.append(dst)
        for k, v in enumerate(chain[1:-1], start=1):
            layer[v] = layer[src] + k
            preds.setdefault(v, [])
            succs.setdefault(v, [])
        for a, b in zip(chain, chain[1:], strict=False):
            p = port if b == dst else 0.0
            succs[a].append((b, p))
            preds[b].append((a, p))
    n_layers = max(layer.values()) + 1
    columns: list[list[Hashable]] = [[] for _ in range(n_layers)]
    for n in sorted(layer, key=lambda n: _initial_key(n, order)):
        columns[layer[n]].append(n)
    # Big graphs get fewer refinement passes: the first ones gain the most.
    effort = 1.0 if len(layer) <= 600 else 0.5
    columns = _order_columns(columns, preds, succs, max(2, round(SWEEPS * effort)))
    xs = _column_x(columns, sizes, layer_gap)
    ys = _place_vertically(columns, preds, succs, sizes, node_gap,
                           max(2, round(PLACEMENT_PASSES * effort)))
    return {
        n: (xs[k], ys[n] - _size(sizes, n)[1] / 2)
        for k, col in enumerate(columns)
        for n in col
        if isinstance(n, str)
    }


def _initial_key(n: Hashable, order: Mapping[str, int]) -> tuple[int, int]:
    if isinstance(n, str):
        return (order[n], 0)
    _, src, _dst, k = cast(tuple[Hashable, str, str, int], n)  # a dummy node of a long edge
    return (order[src], k)


# --------------------------------------------------------------------------- ordering


def _order_columns(
    columns: list[list[Hashable]],
    preds: Mapping[Hashable, list[tuple[Hashable, float]]],
    succs: Mapping[Hashable, list[tuple[Hashable, float]]],
    sweeps: int = SWEEPS,
) -> list[list[Hashable]]:
    """Barycenter sweeps, down then up; keep the ordering with the fewest crossings."""
    best = [list(c) for c in columns]
    best_cross = _crossings(best, succs)
    current = [list(c) for c in columns]
    stale = 0
    for _ in range(sweeps):
        if best_cross == 0 or stale >= 2:
            break
        for k in range(1, len(current)):
            current[k] = _sorted_by_barycenter(current[k], current[k - 1], preds, sign=-1.0)
        for k in range(len(current) - 2, -1, -1):
            current[k] = _sorted_by_barycenter(current[k], current[k + 1], succs, sign=1.0)
        cross = _crossings(current, succs)
        if cross < best_cross:
            best, best_cross, stale = [list(c) for c in current], cross, 0
        else:
            stale += 1
    return best


def _sorted_by_barycenter(
    column: list[Hashable],
    fixed: list[Hashable],
    neighbours: Mapping[Hashable, list[tuple[Hashable, float]]],
    sign: float,
) -> list[Hashable]:
    """Order ``column`` by the mean position of its neighbours in ``fixed``.

    ``sign`` says on which side the port offset lives: an operand (sweeping up)
    is ranked by the port it plugs into, so ``a - b`` keeps ``a`` above ``b``.
    """
    index = {n: k for k, n in enumerate(fixed)}
    keyed = []
    for k, n in enumerate(column):
        nbrs = neighbours.get(n)
        if nbrs:
            if sign > 0:
                bary = sum([index[m] + p for m, p in nbrs]) / len(nbrs)
            else:
                bary = sum([index[m] for m, _ in nbrs]) / len(nbrs)
        else:
            bary = float(k) * len(fixed) / max(len(column), 1)
        keyed.append((bary, k, n))
    keyed.sort()  # by barycenter, then place (k is unique: n is never compared)
    return [n for _, _, n in keyed]


def _crossings(
    columns: list[list[Hashable]], succs: Mapping[Hashable, list[tuple[Hashable, float]]]
) -> int:
    total = 0
    for upper, lower in zip(columns, columns[1:], strict=False):
        index = {n: k for k, n in enumerate(lower)}
        pairs = sorted(
            (k, index[m] + p) for k, n in enumerate(upper) for m, p in succs.get(n, [])
        )
        total += _inversions([b for _, b in pairs])
    return total


def _inversions(values: list[float]) -> int:
    """Pairs i < j with values[i] > values[j] (edge crossings between two columns)."""
    seen: list[float] = []
    count = 0
    for v in reversed(values):
        pos = bisect_right(seen, v - 1e-12)
        count += pos
        seen.insert(pos, v)
    return count


# --------------------------------------------------------------------------- coordinates


def _column_x(
    columns: list[list[Hashable]], sizes: Mapping[str, Size], layer_gap: float
) -> list[float]:
    xs, x = [], 0.0
    for col in columns:
        xs.append(x)
        width = max((_size(sizes, n)[0] for n in col), default=0.0)
        x += (width + layer_gap) if width > 0 else layer_gap / 2
    return xs


def _place_vertically(
    columns: list[list[Hashable]],
    preds: Mapping[Hashable, list[tuple[Hashable, float]]],
    succs: Mapping[Hashable, list[tuple[Hashable, float]]],
    sizes: Mapping[str, Size],
    node_gap: float,
    passes: int = PLACEMENT_PASSES,
) -> dict[Hashable, float]:
    """Centre y of every (real or virtual) node: near its neighbours, never overlapping."""
    height = {n: _size(sizes, n)[1] for col in columns for n in col}
    offsets = [_offsets(col, height, node_gap) for col in columns]
    y: dict[Hashable, float] = {}
    for col, offs in zip(columns, offsets, strict=True):
        for n, o in zip(col, offs, strict=True):
            y[n] = o - offs[-1] / 2
    # Targets: (neighbour, where that neighbour wants me relative to its centre).
    # A port offset lines an operand up with the port it plugs into.
    up = {n: [(m, -p * height[n] * 0.6) for m, p in preds.get(n, [])] for n in height}
    down = {n: [(m, p * height[m] * 0.6) for m, p in succs.get(n, [])] for n in height}
    both = {n: up[n] + down[n] for n in height}
    k_all = range(len(columns))
    for _ in range(passes):
        for k in k_all[1:]:
            _align(columns[k], offsets[k], y, up)
        for k in reversed(k_all[:-1]):
            _align(columns[k], offsets[k], y, down)
    for k in k_all:  # a last pass looking both ways settles the middle columns
        _align(columns[k], offsets[k], y, both)
    return y


def _offsets(col: list[Hashable], height: Mapping[Hashable, float], gap: float) -> list[float]:
    """Cumulative minimum centre-to-centre distances down a column (first: 0)."""
    out = [0.0]
    for a, b in zip(col, col[1:], strict=False):
        virtual = not (isinstance(a, str) and isinstance(b, str))
        out.append(out[-1] + (height[a] + height[b]) / 2 + (gap / 3 if virtual else gap))
    return out


def _align(
    col: list[Hashable],
    offsets: list[float],
    y: dict[Hashable, float],
    targets: Mapping[Hashable, list[tuple[Hashable, float]]],
) -> None:
    """Move the column's nodes toward their targets' mean, keeping order and spacing."""
    want: list[float] = []
    weight: list[float] = []
    for n, o in zip(col, offsets, strict=True):
        t = targets[n]
        if t:
            want.append(sum([y[m] + d for m, d in t]) / len(t) - o)
            weight.append(float(len(t)))
        else:
            want.append(y[n] - o)
            weight.append(0.25)
    for n, q, o in zip(col, _isotonic(want, weight), offsets, strict=True):
        y[n] = q + o


def _isotonic(values: Iterable[float], weights: Iterable[float]) -> list[float]:
    """Weighted least-squares non-decreasing fit (pool adjacent violators)."""
    means: list[float] = []  # the blocks so far: mean, weight and length of each
    totals: list[float] = []
    counts: list[int] = []
    for m, w in zip(values, weights, strict=True):
        c = 1
        while means and means[-1] > m:  # pool with the block before
            m1, w1 = means.pop(), totals.pop()
            c += counts.pop()
            wt = w1 + w
            m, w = (m1 * w1 + m * w) / wt, wt
        means.append(m)
        totals.append(w)
        counts.append(c)
    out: list[float] = []
    for mean, count in zip(means, counts, strict=True):
        out.extend([mean] * count)
    return out
