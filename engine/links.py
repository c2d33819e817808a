"""The graph's adjacency index (:class:`Links`): distinct operand -> consumer links in
insertion order, with the engine's one topological order (:meth:`Links.generations`),
and :func:`topological_sort`, that order for a graph given as node -> operands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass


def topological_sort(operands: Mapping[str, Iterable[str | None]]) -> list[str]:
    """The topological order, by the one rule every part of the engine uses
    (:meth:`Links.generations`), of a graph given as node -> operands in ``operands``'
    order: the order forward values are computed in, the reverse of the order backward
    steps run in, the order the file loader adds nodes in and the PyTorch export writes
    lines in. Nodes on a cycle (and those waiting on one) are left out: the caller
    compares lengths to find one."""
    links = Links()
    for n in operands:
        links.add_node(n)
    for n, ins in operands.items():
        for s in dict.fromkeys(s for s in ins if s is not None):
            links.add_edge(s, n)
    return links.topological_order()


class Links:
    """Distinct operand -> consumer links, in insertion order, with a cached topological order.

    The order is the engine's one topological rule (:meth:`generations`, as networkx's
    ``topological_sort`` gives for the same insertions), so step orders users have seen
    stay the same. Any structural change drops the cached order.
    """

    def __init__(self) -> None:
        self.succ: dict[str, dict[str, None]] = {}
        self.pred: dict[str, dict[str, None]] = {}
        self._order: list[str] | None = None

    def __iter__(self) -> Iterator[str]:
        return iter(self.succ)

    def copy(self) -> Links:
        other = Links()
        other.succ = {n: dict(d) for n, d in self.succ.items()}
        other.pred = {n: dict(d) for n, d in self.pred.items()}
        return other

    def add_node(self, n: str) -> None:
        if n not in self.succ:
            self.succ[n], self.pred[n] = {}, {}
            self._order = None

    def add_edge(self, u: str, v: str) -> None:
        self.add_node(u)
        self.add_node(v)
        self.succ[u][v] = None
        self.pred[v][u] = None
        self._order = None

    def remove_edge(self, u: str, v: str) -> None:
        del self.succ[u][v]
        del self.pred[v][u]
        self._order = None

    def remove_node(self, n: str) -> None:
        for v in self.succ.pop(n):
            del self.pred[v][n]
        for u in self.pred.pop(n):
            del self.succ[u][n]
        self._order = None

    def place(self, n: str, index: int) -> Place:
        """Where ``n`` stands in every order this index keeps (``index``: its position
        in the node order), so :meth:`insert_node` can put it back exactly there."""
        return Place(
            index=index,
            operands=tuple((u, _position(self.succ[u], n)) for u in self.pred[n]),
            consumers=tuple((v, _position(self.pred[v], n)) for v in self.succ[n]),
        )

    def insert_node(self, n: str, place: Place) -> None:
        """Undo :meth:`remove_node` exactly: ``n`` and its links come back at their old
        positions in each consumer's and operand's order (the node order itself is the
        caller's: see :meth:`reorder`)."""
        self.succ[n] = dict.fromkeys(v for v, _ in place.consumers)
        self.pred[n] = dict.fromkeys(u for u, _ in place.operands)
        for u, at in place.operands:
            self.succ[u] = _inserted(self.succ[u], n, at)
        for v, at in place.consumers:
            self.pred[v] = _inserted(self.pred[v], n, at)
        self._order = None

    def reorder(self, order: list[str]) -> None:
        """Put the nodes in ``order`` (the same nodes, another order)."""
        self.succ = {n: self.succ[n] for n in order}
        self.pred = {n: self.pred[n] for n in order}
        self._order = None

    def relabel(self, old: str, new: str) -> None:
        """``old`` becomes ``new`` where it stands: a rename keeps the node's place in
        every order, so steps and Jacobian columns do not move (creation order, not
        names, decides them)."""

        def swap(d: dict[str, None]) -> dict[str, None]:
            return {(new if k == old else k): v for k, v in d.items()}

        self.succ = {(new if k == old else k): swap(v) for k, v in self.succ.items()}
        self.pred = {(new if k == old else k): swap(v) for k, v in self.pred.items()}
        self._order = None

    def topological_order(self) -> list[str]:
        if self._order is None:
            self._order = [n for generation in self.generations() for n in generation]
        return self._order

    def generations(self) -> list[list[str]]:
        """Kahn's algorithm by generations, the engine's one topological rule: first the
        nodes with no operands, in insertion order; then each next generation, the nodes
        whose last operand was in the one before, in the order they become ready, that is
        scanning the previous generation in its order and each node's consumers in the
        order their links were made. Everything that walks the graph in order (forward,
        backward steps, the file loader, the PyTorch export, layout layers) reads it."""
        indegree = {v: len(p) for v, p in self.pred.items() if p}
        generation = [v for v, p in self.pred.items() if not p]
        out: list[list[str]] = []
        succ = self.succ
        while generation:
            out.append(generation)
            following = []
            for node in generation:
                for child in succ[node]:
                    indegree[child] -= 1
                    if not indegree[child]:
                        following.append(child)
                        del indegree[child]
            generation = following
        return out

    def edges(self) -> list[tuple[str, str]]:
        return [(u, v) for u, targets in self.succ.items() for v in targets]

    def weak_components(self) -> list[set[str]]:
        """Groups of nodes linked to each other, ignoring direction."""
        seen: set[str] = set()
        out = []
        for start in self.succ:
            if start in seen:
                continue
            comp, stack = {start}, [start]
            while stack:
                n = stack.pop()
                for m in (*self.succ[n], *self.pred[n]):
                    if m not in comp:
                        comp.add(m)
                        stack.append(m)
            seen |= comp
            out.append(comp)
        return out

    def has_path(self, a: str, b: str) -> bool:
        if a == b:
            return True
        return b in self._reach([a], self.succ)

    def ancestors(self, n: str) -> set[str]:
        return self._reach([n], self.pred)

    def downstream(self, nodes: Iterable[str]) -> set[str]:
        """``nodes`` and every node they reach (one walk for all of them)."""
        starts = set(nodes)
        return starts | self._reach(starts, self.succ)

    @staticmethod
    def _reach(starts: Iterable[str], adj: dict[str, dict[str, None]]) -> set[str]:
        """Every node one or more links from any of ``starts`` (acyclic: never a start
        itself, unless another start reaches it)."""
        seen: set[str] = set()
        stack = list(starts)
        while stack:
            for m in adj[stack.pop()]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return seen


def _position(d: dict[str, None], key: str) -> int:
    for i, k in enumerate(d):
        if k == key:
            return i
    raise KeyError(key)


def _inserted(d: dict[str, None], key: str, at: int) -> dict[str, None]:
    """``d`` with ``key`` at position ``at`` (at the end when ``at`` is past it)."""
    if at >= len(d):
        d[key] = None
        return d
    keys = list(d)
    keys.insert(at, key)
    return dict.fromkeys(keys)


@dataclass(frozen=True)
class Place:
    """Where a removed node stood: its position in the node order, and its position in
    each operand's consumer order and each consumer's operand order. The topological
    order (and so the backward steps users watch) follows these orders, so an undo
    must restore them, not append."""

    index: int
    operands: tuple[tuple[str, int], ...]
    consumers: tuple[tuple[str, int], ...]
