"""A graph compiled for running: nodes as integer slots in topological order, each op
node one instruction (its op record and its operands' slots).

Forward and backward then loop over plain lists instead of looking nodes, ops and
operands up by id on every run. A program is compiled once per structural edit
(:attr:`~engine.graph.Graph.version` counts them) and cached per graph; values,
attributes and ``requires_grad`` are read from the nodes as each run needs them, so
editing those recompiles nothing.
"""

from __future__ import annotations

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
    leaf nodes and ``instructions`` the op nodes, each in topological order."""

    version: int
    order: tuple[str, ...]
    slot: dict[str, int]
    leaves: tuple[tuple[int, Node], ...]
    instructions: tuple[Instruction, ...]


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
    leaves, instructions = [], []
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
    return Program(graph.version, order, slot, tuple(leaves), tuple(instructions))
