"""A graph compiled for running: nodes as integer slots in topological order, each op
node one instruction (its op record and its operands' slots).

Forward and backward then loop over plain lists instead of looking nodes, ops and
operands up by id on every run. A program is compiled once per structural edit
(:attr:`~engine.graph.Graph.version` counts them) and cached per graph; values,
attributes and ``requires_grad`` are read from the nodes as each run needs them, so
editing those recompiles nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from .graph import Graph, Node, arity_problem
from .ops import LEAF_OPS, OPS
from .ops.record import Op

#: One op node: (its slot, the node, its op record, its operands' slots, how many, and
#: what is wrong with its operand list in words, None when nothing is; then it has no
#: slots).
Instruction = tuple[int, Node, Op, tuple[int, ...], int, str | None]


@dataclass(frozen=True, eq=False)
class Program:
    """``order[s]`` is the id in slot ``s``; ``slot`` maps back. ``leaves`` are the
    leaf nodes and ``instructions`` the op nodes, each in topological order.

    Both are kept as columns (a tuple per field) and zipped when walked: a tuple per
    node holding the node stayed tracked by the collector, one object per node
    (5,000 per 5,000-node open), where tuples of numbers and strings are not."""

    version: int
    order: tuple[str, ...]
    slot: dict[str, int]
    leaf_slots: tuple[int, ...]
    leaf_nodes: tuple[Node, ...]
    op_slots: tuple[int, ...]
    op_nodes: tuple[Node, ...]
    ops: tuple[Op, ...]
    operands: tuple[tuple[int, ...], ...]
    counts: tuple[int, ...]
    problems: tuple[str | None, ...]

    @property
    def leaves(self) -> Iterator[tuple[int, Node]]:
        """(slot, node) of each leaf, in topological order."""
        return zip(self.leaf_slots, self.leaf_nodes, strict=True)

    @property
    def instructions(self) -> Iterator[Instruction]:
        """Each op node's :data:`Instruction`, in topological order."""
        return zip(self.op_slots, self.op_nodes, self.ops, self.operands, self.counts,
                   self.problems, strict=True)

    def instructions_reversed(self) -> Iterator[Instruction]:
        """:attr:`instructions` from the last to the first (the backward walk)."""
        return zip(reversed(self.op_slots), reversed(self.op_nodes), reversed(self.ops),
                   reversed(self.operands), reversed(self.counts), reversed(self.problems),
                   strict=True)


_compiled: WeakKeyDictionary[Graph, Program] = WeakKeyDictionary()


def program_of(graph: Graph) -> Program:
    """The graph's program, compiled now only if its structure changed since the last."""
    program = _compiled.get(graph)
    if program is None or program.version != graph.version:
        program = _compiled[graph] = compile_graph(graph)
    return program


def compile_graph(graph: Graph) -> Program:
    """The program for the graph as it stands (use :func:`program_of`, which caches)."""
    order = tuple(graph.topological_order())
    slot = {nid: s for s, nid in enumerate(order)}
    leaves: list[tuple[int, Node]] = []
    instructions: list[Instruction] = []
    for s, nid in enumerate(order):
        node = graph.nodes[nid]
        if node.op in LEAF_OPS:
            leaves.append((s, node))
            continue
        op = OPS[node.op]
        inputs = node.inputs
        problem = None
        if not inputs or None in inputs or (op.arity is not None and len(inputs) != op.arity):
            problem = arity_problem(node.op, inputs)
        operands = () if problem else tuple(slot[i] for i in inputs if i is not None)
        instructions.append((s, node, op, operands, len(operands), problem))
    leaf_slots, leaf_nodes = _columns(leaves, 2)
    return Program(graph.version, order, slot, leaf_slots, leaf_nodes,
                   *_columns(instructions, 6))


def _columns(rows: list, width: int) -> list[tuple]:
    """``rows`` as one tuple per field (``width`` of them, even with no rows)."""
    return [tuple(c) for c in zip(*rows, strict=True)] if rows else [()] * width
