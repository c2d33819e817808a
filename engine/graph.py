"""The computation graph a user builds: nodes with ordered operand ports, kept acyclic.

Each node's ``inputs`` list is the truth about its operands (a port may be empty:
``None``); a small adjacency index (:class:`Links`) mirrors the distinct operand ->
consumer links for cycle checks, ancestors and the topological order, which is
computed once per structural edit and cached (every run reads it).
"""

from __future__ import annotations

import copy
from bisect import bisect_left, insort
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import BIDI_CONTROLS, AttrError, CycleError, GraphError
from .links import Links, Place
from .ops import LEAF_OPS, OP_NAMES, OPS, validate_attrs

#: Limits where a bigger graph stops being a diagram and starts being a hang; the file
#: loader refuses files beyond them, so an edit must not make a graph that cannot reopen.
#: (Captured PyTorch models run to thousands of nodes; the GUI keeps 5,000 interactive.)
MAX_NODES = 10_000
MAX_OPERANDS = 256
MAX_ID_LENGTH = 200


def id_problem(id: Any) -> str | None:
    """Why ``id`` cannot name a node, or None."""
    if not isinstance(id, str) or not id:
        return "a node id must be a non-empty string"
    if len(id) > MAX_ID_LENGTH:
        return f"an id may have at most {MAX_ID_LENGTH} characters, not {len(id):,}"
    if not id.isascii():
        problem = bidi_problem(id)
        if problem is not None:
            return problem
        try:
            id.encode("utf-8")
        except UnicodeEncodeError as exc:
            # what the loader refuses too: such an id could never be saved
            return f"the id holds a lone surrogate ({id[exc.start]!a}), which is not a character"
    return None


def bidi_problem(id: str) -> str | None:
    """Why ``id`` (a graph's node id, or a captured trace's) cannot name a node for the
    bidirectional control it holds (:data:`~engine.errors.BIDI_CONTROLS`), or None."""
    control = next((ch for ch in id if ch in BIDI_CONTROLS), None)
    if control is None:
        return None
    return (
        f"the id holds the bidirectional control U+{ord(control):04X}, which would reorder "
        f"the text around it wherever the id is shown"
    )


def arity_problem(op: str, inputs: list[str | None], *, complete: bool = True) -> str | None:
    """What is wrong with ``op``'s operand list, in words, or None if nothing is.

    The one copy of the rule: the forward pass badges a node with it, and the file
    loader refuses a file with it. ``complete=False`` (a graph still being built)
    only refuses more operands than the op has ports.
    """
    arity = OPS[op].arity
    connected = sum(1 for s in inputs if s is not None)
    if arity is not None and len(inputs) > arity:
        return f"{op} takes {_plural(arity, 'operand')}, {len(inputs)} given"
    if not complete:
        return None
    if arity is None and connected == 0:
        return f"{op} needs at least 1 operand, none connected"
    need = arity if arity is not None else len(inputs)
    if connected < need:
        empty = next((i for i, s in enumerate(inputs) if s is None), None)
        port = "" if empty is None else f" (operand {empty} is empty)"
        return f"{op} needs {_plural(need, 'operand')}, {connected} connected{port}"
    return None


def fresh_id(base: str, taken: Container[str]) -> str:
    """``base`` if free, else ``base2``, ``base3``, ... (names users can read)."""
    base = base or "n"
    if base not in taken:
        return base
    stem = base.rstrip("0123456789") or base
    k = 2
    while f"{stem[: MAX_ID_LENGTH - len(str(k))]}{k}" in taken:
        k += 1
    return f"{stem[: MAX_ID_LENGTH - len(str(k))]}{k}"


#: An unplugged input port in an op's title (``y = a * ?``).
EMPTY_PORT = "?"

#: The op of a node PyTorch computed in a captured trace (``attrs["kind"]``: its autograd
#: class, ``Addmm``): drawn and played back from the trace's steps, never run here, so it
#: has no record in the op table and no graph file holds one.
CAPTURED_OP = "captured"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass
class Node:
    """One node: a leaf (``input``/``const`` with a value) or an op with operands."""

    id: str
    op: str
    inputs: list[str | None] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    value: np.ndarray | None = None
    requires_grad: bool = True

    @property
    def is_leaf(self) -> bool:
        return self.op in LEAF_OPS

    @property
    def wants_grad(self) -> bool:
        """True for a leaf whose ``.grad`` PyTorch would fill (an input requiring grad)."""
        return self.op == "input" and self.requires_grad

    def computes(self, name: Callable[[str], str] = str) -> str:
        """What an op node computes, as its op's title over its operands: ``a * ?``.

        An empty input port shows as ``?`` (:data:`EMPTY_PORT`); ``name`` writes each
        operand's id (the chain-rule HTML escapes and styles them).
        """
        names = [EMPTY_PORT if s is None else name(s) for s in self.inputs]
        if self.op == CAPTURED_OP:
            return f"{self.attrs['kind']}({', '.join(names)})"
        return OPS[self.op].title(names, self.attrs)

    def copy(self) -> Node:
        """A deep copy (operands, attributes and value its own), made field by field:
        ``copy.deepcopy``'s generic walk was most of the time a duplicate, a paste or
        an undone delete of many nodes spent copying them."""
        value = self.value
        return Node(
            id=self.id,
            op=self.op,
            inputs=list(self.inputs),
            attrs=copy.deepcopy(self.attrs) if self.attrs else {},
            value=value.copy() if isinstance(value, np.ndarray) else copy.deepcopy(value),
            requires_grad=self.requires_grad,
        )

    def trim_empty_ports(self) -> None:
        """Drop a variadic op's empty trailing ports (``stack(a, ?, ?)`` -> ``stack(a)``).

        A variadic op (arity None) has as many ports as operands plus the free one the
        canvas draws; a fixed-arity op keeps its empty ports, which are its arity.
        """
        if self.op in OPS and OPS[self.op].arity is None:
            while self.inputs and self.inputs[-1] is None:
                self.inputs.pop()


@dataclass(frozen=True)
class Removed:
    """What :meth:`Graph.remove_node` took away, so an undo can put it all back.

    ``place`` is None for a node that never stood in this graph (a paste): it joins
    at the end of every order.
    """

    node: Node
    consumers: list[tuple[str, int]]
    place: Place | None = None


def as_tensor(value: Any) -> np.ndarray:
    """A float64 array from a number or nested list (a copy: the graph owns it)."""
    return np.array(value, dtype=np.float64)


class Graph:
    """A DAG of :class:`Node`; every mutation keeps it acyclic and well-formed."""

    def __init__(self, max_nodes: int | None = MAX_NODES) -> None:
        """``max_nodes`` defaults to what a graph file may hold, so an edit never makes a
        document that cannot reopen; None lifts it for a graph built in code and never
        saved (the engine benchmark's 100,000-node DAG)."""
        self.nodes: dict[str, Node] = {}
        self.max_nodes = max_nodes
        self._dag = Links()
        #: Counts structural edits (nodes, links, ports, ids); what is compiled from the
        #: structure (:func:`engine.program.program_of`) is redone when it moves.
        self.version = 0

    # ------------------------------------------------------------------ building

    def add_node(
        self,
        id: str,
        op: str,
        inputs: list[str | None] | None = None,
        attrs: dict[str, Any] | None = None,
        value: Any = None,
        requires_grad: bool = True,
    ) -> Node:
        """Add a node; its operand ports are connected in order (``None`` leaves one empty)."""
        problem = id_problem(id)
        if problem is not None:
            raise GraphError(problem)
        if self.max_nodes is not None and len(self.nodes) >= self.max_nodes:
            raise GraphError(f"a graph may have at most {self.max_nodes:,} nodes")
        if id in self.nodes:
            raise GraphError("this id is used twice", id)
        if op not in OP_NAMES:
            raise GraphError(f"unknown op {op!r}", id)
        try:
            full_attrs = validate_attrs(op, dict(attrs or {}))
        except ValueError as exc:
            raise AttrError(str(exc), id) from None
        if op in LEAF_OPS:
            if inputs:
                raise GraphError(f"{op} takes no operands", id)
            value = as_tensor(0.0 if value is None else value)
        node = Node(
            id=id,
            op=op,
            attrs=full_attrs,
            value=value,
            requires_grad=bool(requires_grad) and op == "input",
        )
        arity = OPS[op].arity if op in OPS else 0
        node.inputs = [None] * (arity or 0)
        self.nodes[id] = node
        self._dag.add_node(id)
        self.version += 1
        try:
            for index, src in enumerate(inputs or []):
                if src is not None:
                    self.connect(src, id, index)
        except GraphError:
            self.remove_node(id)
            raise
        return node

    def add_captured(self, id: str, kind: str, inputs: list[str | None]) -> Node:
        """Add a node of a captured PyTorch pass (:data:`CAPTURED_OP`); its operands first."""
        node = Node(id=id, op=CAPTURED_OP, inputs=[None] * len(inputs), attrs={"kind": kind})
        self.nodes[id] = node
        self._dag.add_node(id)
        self.version += 1
        for index, src in enumerate(inputs):
            if src is not None:
                self.connect(src, id, index)
        return node

    def remove_node(self, id: str) -> Removed:
        """Remove a node and every edge touching it; return what an undo needs."""
        return self.remove_nodes([id])[0]

    def remove_nodes(self, ids: Iterable[str]) -> list[Removed]:
        """Remove nodes one after another; each :class:`Removed` records where its node
        stood at its turn, so :meth:`restore_nodes` of them, last first, gives back
        exactly this graph (same orders, so the same steps and the same file)."""
        position: dict[str, int] | None = None
        gone: list[int] = []  # original positions of the nodes removed so far, sorted
        out = []
        for id in ids:
            node = self._get(id)
            if position is None:
                position = {n: i for i, n in enumerate(self.nodes)}
            was = position[id]
            place = self._dag.place(id, was - bisect_left(gone, was))
            insort(gone, was)
            nodes = self.nodes
            consumers = [
                (c, i) for c in self._dag.succ[id] for i, s in enumerate(nodes[c].inputs) if s == id
            ]
            for c, i in consumers:
                self.disconnect(c, i)
            del self.nodes[id]
            self._dag.remove_node(id)
            self.version += 1
            out.append(Removed(node.copy(), consumers, place))
        return out

    def restore(self, removed: Removed) -> None:
        """Undo :meth:`remove_node`: the node, its operands and its consumers come back."""
        self.restore_nodes([removed])

    def restore_nodes(self, removed: Iterable[Removed]) -> None:
        """Put removed nodes back, last removed first, each where it stood (see
        :class:`Place`); a node without a place (a paste) joins at the end and its
        consumer links are checked as :meth:`connect` checks them."""
        order: list[str] | None = None  # the node order, once a node goes mid-way
        self.version += 1
        for r in removed:
            node = r.node.copy()
            place = r.place
            at = len(self.nodes) if place is None else min(place.index, len(self.nodes))
            if order is None and at < len(self.nodes):
                order = list(self.nodes)
            if order is not None:
                order.insert(at, node.id)
            self.nodes[node.id] = node
            if place is None:
                self._dag.add_node(node.id)
                for src in dict.fromkeys(s for s in node.inputs if s is not None):
                    self._dag.add_edge(src, node.id)
                for c, i in r.consumers:
                    self.connect(node.id, c, i)
                continue
            for c, i in r.consumers:
                inputs = self.nodes[c].inputs
                inputs.extend([None] * (i + 1 - len(inputs)))
                inputs[i] = node.id
            self._dag.insert_node(node.id, place)
        if order is not None:
            self.nodes = {n: self.nodes[n] for n in order}
            self._dag.reorder(order)

    def check_connect(self, src: str, dst: str, index: int) -> None:
        """Raise the GraphError that :meth:`connect` would raise, changing nothing."""
        self._get(src)
        node = self._get(dst)
        if node.is_leaf:
            raise GraphError(f"{node.op} takes no operands", dst)
        arity = OPS[node.op].arity if node.op in OPS else None
        if index < 0 or (arity is not None and index >= arity):
            raise GraphError(f"{node.op} has no operand port {index}", dst)
        if index >= MAX_OPERANDS:
            raise GraphError(f"a node may have at most {MAX_OPERANDS} operands", dst)
        if index < len(node.inputs) and node.inputs[index] is not None:
            raise GraphError(
                f"operand port {index} is already taken by {node.inputs[index]!r}", dst
            )
        if src == dst or self._dag.has_path(dst, src):
            raise CycleError(f"connecting {src!r} -> {dst!r} would make a cycle", dst)

    def connect(self, src: str, dst: str, index: int) -> None:
        """Plug ``src``'s output into operand port ``index`` of ``dst``."""
        self.check_connect(src, dst, index)
        node = self.nodes[dst]
        while len(node.inputs) <= index:
            node.inputs.append(None)
        node.inputs[index] = src
        self._dag.add_edge(src, dst)
        self.version += 1

    def disconnect(self, dst: str, index: int) -> str | None:
        """Empty operand port ``index`` of ``dst``; return the operand it held."""
        node = self._get(dst)
        if not 0 <= index < len(node.inputs):
            return None
        src = node.inputs[index]
        if src is None:
            return None
        node.inputs[index] = None
        node.trim_empty_ports()
        self.version += 1
        if src not in node.inputs:
            self._dag.remove_edge(src, dst)
        return src

    # ------------------------------------------------------------------ editing

    def rename(self, old: str, new: str) -> None:
        """Give a node a new id, keeping every edge."""
        self._get(old)
        if old == new:
            return
        problem = id_problem(new)
        if problem is not None:
            raise GraphError(problem, old)
        if new in self.nodes:
            raise GraphError(f"the id {new!r} is already used", old)
        self.nodes[old].id = new
        self.version += 1
        self.nodes = {(new if k == old else k): v for k, v in self.nodes.items()}
        for n in self.nodes.values():
            n.inputs = [new if s == old else s for s in n.inputs]
        self._dag.relabel(old, new)

    def set_value(self, id: str, value: Any) -> None:
        node = self._get(id)
        if not node.is_leaf:
            raise GraphError(f"{node.op} has no value to set; it is computed", id)
        node.value = as_tensor(value)

    def set_attrs(self, id: str, attrs: dict[str, Any]) -> None:
        node = self._get(id)
        try:
            node.attrs = validate_attrs(node.op, {**node.attrs, **attrs})
        except ValueError as exc:
            raise AttrError(str(exc), id) from None

    def set_requires_grad(self, id: str, flag: bool) -> None:
        node = self._get(id)
        if node.op != "input":
            raise GraphError("only inputs can require grad", id)
        node.requires_grad = bool(flag)

    # ------------------------------------------------------------------ queries

    def topological_order(self) -> list[str]:
        return list(self._dag.topological_order())

    def ancestors(self, id: str) -> set[str]:
        return self._dag.ancestors(id)

    def consumers(self, id: str) -> list[str]:
        return list(self._dag.succ[id])

    def downstream(self, ids: Iterable[str]) -> set[str]:
        """``ids`` and every node that reads one of them, directly or not."""
        return self._dag.downstream(ids)

    def edges(self) -> list[tuple[str, str, int]]:
        """Every connected port as (operand, consumer, operand index)."""
        return [(s, n.id, i) for n in self.nodes.values() for i, s in enumerate(n.inputs) if s]

    def outputs(self) -> list[str]:
        """Nodes nothing consumes: the natural candidates for ``backward``."""
        return [n for n in self.nodes if not self._dag.succ[n]]

    def copy(self) -> Graph:
        other = Graph(self.max_nodes)
        other.nodes = copy.deepcopy(self.nodes)
        other._dag = self._dag.copy()
        return other

    def __contains__(self, id: object) -> bool:
        return id in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def _get(self, id: str) -> Node:
        try:
            return self.nodes[id]
        except KeyError:
            raise GraphError(f"no node named {id!r}") from None
