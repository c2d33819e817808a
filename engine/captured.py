"""A backward pass captured from PyTorch, as data that needs no PyTorch to replay.

:mod:`engine.capture` fills these from a real ``backward()``;
:mod:`engine.tracefile` saves and loads them. The steps are the engine's own
:class:`~engine.trace.Step`, so the player, the panels and the exports show a
captured pass exactly like one our engine computed. Only the context differs:
a live capture pulls back through PyTorch's node, a loaded one answers from the
Jacobians the file kept (those up to the display limit).

:func:`as_graph` gives the pass the shape every view already draws: a graph (leaves
as inputs, every other node a :data:`~engine.graph.CAPTURED_OP` node), the forward
values that were recorded, and one collapsed :class:`~engine.groups.Group` per module,
checked and played by the same code as a user's groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .autodiff import Forward
from .errors import GraphError, shape_text
from .graph import Graph
from .groups import Group, check_group
from .trace import JACOBIAN_LIMIT, Trace

Shape = tuple[int, ...]


@dataclass(slots=True)
class CapturedNode:
    """One autograd node: ``kind`` is PyTorch's class without ``Backward0``
    (``Addmm``, ``Relu``, ``AccumulateGrad``), ``shapes`` its outputs' shapes (several
    for ``split``/``chunk``), ``inputs`` the ``(operand id, output slot)`` behind each of
    its ``next_functions`` (None: nothing that needs a gradient), ``module`` the dotted
    path of the ``nn.Module`` it belongs to ("" for none), ``value`` the forward value
    when it was recorded."""

    id: str
    kind: str
    shapes: list[Shape]
    inputs: list[tuple[str, int] | None] = field(default_factory=list)
    module: str = ""
    value: np.ndarray | None = None

    @property
    def is_leaf(self) -> bool:
        return self.kind == "AccumulateGrad"


def jacobian_words(node: CapturedNode, operand_shape: Shape) -> str:
    """The local Jacobian in words, the same for a live capture and a loaded file."""
    rows = sum(math.prod(s) for s in node.shapes)
    cols = math.prod(operand_shape)
    outs = " + ".join(shape_text(s) for s in node.shapes)
    return (
        f"PyTorch's {node.kind} backward: d(output {outs}) / d(operand {shape_text(operand_shape)})"
        f", a {rows}×{cols} matrix"
    )


@dataclass(slots=True)
class StoredContext:
    """A loaded step's context: the Jacobian the file kept (None when it was too big)."""

    node: CapturedNode
    operand_shape: Shape
    matrix: np.ndarray | None

    def pullback(self, index: int, g: np.ndarray) -> np.ndarray:
        if self.matrix is None:
            raise ValueError(f"node {self.node.id!r}: the trace file kept no Jacobian here")
        return (np.ravel(g) @ self.matrix).reshape(self.operand_shape)

    def jacobian(self, index: int, upstream_shape: Shape) -> np.ndarray | None:
        return self.matrix

    def describe(self, index: int) -> str:
        return jacobian_words(self.node, self.operand_shape)


@dataclass
class CapturedTrace(Trace):
    """A :class:`~engine.trace.Trace` plus the autograd nodes it ran through.

    ``nodes`` is in forward order (leaves and operands before their consumers).
    """

    replayed: ClassVar[bool] = True
    nodes: dict[str, CapturedNode] = field(default_factory=dict)
    #: Each module path's class name (``"layers.0": "Linear"``), where it is known.
    module_classes: dict[str, str] = field(default_factory=dict)
    #: Each leaf's ``‖value‖₂`` at capture time (not saved: a loaded trace has the
    #: values themselves when the forward was tracked), for the gradient flow's ratio.
    weight_norms: dict[str, float] = field(default_factory=dict)

    def modules(self) -> list[str]:
        """The module paths that hold nodes, in forward order."""
        return list(dict.fromkeys(n.module for n in self.nodes.values() if n.module))


def leaf_shape(trace: CapturedTrace, leaf: str) -> Shape:
    return trace.nodes[leaf].shapes[0]


def end_to_end_jacobian(trace: CapturedTrace, limit: int = JACOBIAN_LIMIT) -> np.ndarray | None:
    """``∂output/∂leaves`` (columns leaf by leaf, row-major): each output basis vector
    pulled back through the steps' own contexts in the order they ran. None above
    ``limit`` entries, or when a loaded step kept no Jacobian to pull back through."""
    out_shape = trace.gradient.shape
    m = math.prod(out_shape)
    sizes = [math.prod(leaf_shape(trace, x)) for x in trace.leaves]
    if m * sum(sizes) > limit:
        return None
    rows = []
    for r in range(m):
        basis = np.zeros(m)
        basis[r] = 1.0
        # by (node, output slot): a split's or an LSTM's unbind's slots arrive apart
        grads = {(trace.output, 0): basis.reshape(out_shape)}
        try:
            for s in trace.steps:
                upstream = _received(trace.nodes[s.consumer], grads)
                if upstream is not None:
                    v = np.asarray(s.context.pullback(s.operand_index, upstream))
                    key = trace.nodes[s.consumer].inputs[s.operand_index]
                    assert key is not None  # a step runs along an edge
                    grads[key] = v if key not in grads else grads[key] + v
        except ValueError:
            return None
        pairs = zip(trace.leaves, sizes, strict=True)
        rows.append(np.concatenate([np.ravel(grads.get((x, 0), np.zeros(n))) for x, n in pairs]))
    return np.array(rows).reshape(m, -1)


def _received(
    node: CapturedNode, grads: dict[tuple[str, int], np.ndarray]
) -> np.ndarray | None:
    """What ``node`` has received so far, its output slots end to end as PyTorch hands
    a multi-output node's backward (zeros for a slot nothing reached); None: nothing."""
    parts = [grads.get((node.id, k)) for k in range(len(node.shapes))]
    if all(p is None for p in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    pairs = zip(parts, node.shapes, strict=True)
    return np.concatenate([np.zeros(math.prod(s)) if p is None else np.ravel(p) for p, s in pairs])


@dataclass
class CapturedGraph:
    """A captured pass as the player shows it: ``graph`` and ``forward`` stand in for
    a graph the engine ran (nothing here runs again), ``groups`` are its modules."""

    graph: Graph
    forward: Forward
    groups: list[Group]


def as_graph(trace: CapturedTrace) -> CapturedGraph:
    """The trace's nodes as a graph, its recorded values and its modules as groups."""
    graph = Graph(max_nodes=None)
    fwd = Forward(order=list(trace.nodes), requires_grad=set(trace.nodes))
    for nid, info in trace.nodes.items():
        if info.is_leaf:
            graph.add_node(nid, "input", value=info.value)
        else:
            graph.add_captured(nid, info.kind, [p[0] if p else None for p in info.inputs])
        if info.value is not None:
            fwd.values[nid] = np.asarray(info.value)
    return CapturedGraph(graph, fwd, module_groups(trace, graph))


def module_title(trace: CapturedTrace, path: str) -> str:
    """``layers.0 · Linear``: the path, and the class when the capture knew it."""
    cls = trace.module_classes.get(path)
    return f"{path} · {cls}" if cls else path


def module_groups(trace: CapturedTrace, graph: Graph) -> list[Group]:
    """One collapsed group per module path (outer modules hold their inner ones) of the
    nodes it computed; its parameters stay outside as the group's inputs. A module whose
    nodes cannot play as one step (a path leaves it and comes back) stays ungrouped, and
    a module holding exactly what its only child holds is that child's group."""
    members: dict[str, list[str]] = {}
    for nid, info in trace.nodes.items():
        if info.is_leaf or not info.module:
            continue
        parts = info.module.split(".")
        for i in range(1, len(parts) + 1):
            members.setdefault(".".join(parts[:i]), []).append(nid)
    groups: list[Group] = []
    held: set[frozenset[str]] = set()
    for path in sorted(members, key=lambda p: -p.count(".")):  # inner modules first
        key = frozenset(members[path])
        if key in held:
            continue
        try:  # paths nest, so modules never partly overlap: only the detour is checked
            check_group(graph, members[path])
        except GraphError:
            continue
        held.add(key)
        groups.append(Group(path, members[path], module_title(trace, path)))
    order = {p: i for i, p in enumerate(members)}
    return sorted(groups, key=lambda g: order[g.id])
