"""The autograd graph a capture walks, as PyTorch left it at backward time: every node
reachable over ``next_functions`` (iteratively: deep models must not hit the recursion
limit), the order the forward made them, their names (parameters by name, the rest by
kind and number) and the module each belongs to.
"""

from __future__ import annotations

import re
from typing import Any

from .captured import CapturedNode

#: PyTorch's node classes are the op plus ``Backward`` and an overload number.
_BACKWARD_SUFFIX = re.compile(r"(?<=.)Backward\d*$")


def kind_of(node: Any) -> str:
    """A node's kind as a step names it: ``MulBackward0`` -> ``Mul``."""
    return _BACKWARD_SUFFIX.sub("", type(node).__name__)



def walk(root: Any) -> list[Any]:
    """Every node reachable from ``root`` over ``next_functions``, without recursion."""
    seen = {root}
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _slot in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return order


def forward_order(nodes: list[Any]) -> list[Any]:
    """The order the forward pass made the nodes (PyTorch numbers them as it creates
    them, so operands come before consumers), each leaf just before its first user."""
    order: list[Any] = []
    placed: set[Any] = set()
    for n in sorted((n for n in nodes if not hasattr(n, "variable")), key=_sequence):
        for src, _slot in n.next_functions:
            if src is not None and hasattr(src, "variable") and src not in placed:
                placed.add(src)
                order.append(src)
        order.append(n)
    return order


def _sequence(node: Any) -> int:
    return node._sequence_nr()


def name_nodes(order: list[Any], params: dict[int, str]) -> dict[Any, str]:
    """Leaves by parameter name, the rest by kind plus a number in forward order."""
    ids: dict[Any, str] = {}
    taken: set[str] = set()

    def unique(base: str) -> str:
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    for n in order:
        if hasattr(n, "variable") and id(n.variable) in params:
            ids[n] = unique(params[id(n.variable)])
    counts: dict[str, int] = {}
    for n in order:
        if n not in ids:
            kind = "leaf" if hasattr(n, "variable") else kind_of(n)
            counts[kind] = counts.get(kind, 0) + 1
            ids[n] = unique(f"{kind}{counts[kind]}")
    return ids


def modules(infos: dict[str, CapturedNode], order: list[str]) -> None:
    """Module paths: a parameter's module; a node built from parameters only (``T`` of a
    weight) takes theirs; any other node the one module its parameter operands share."""
    from_params: set[str] = set()
    for nid in order:
        info = infos[nid]
        if info.is_leaf:
            if info.module:
                from_params.add(nid)
            continue
        ops = [pair[0] if pair is not None else None for pair in info.inputs]
        mods = {infos[s].module for s in ops if s in from_params}
        if len(mods) == 1:
            info.module = mods.pop()
            if all(s in from_params for s in ops):  # None (a constant, an input) is not
                from_params.add(nid)


def inner_modules(infos: dict[str, CapturedNode], labelled: set[str]) -> None:
    """Nodes a tracked call made but did not return (the ``T`` inside ``F.linear``, the
    ``LogSoftmax`` inside ``cross_entropy``) belong where their consumer does."""
    for nid in reversed(list(infos)):  # consumers before their operands
        info = infos[nid]
        for pair in info.inputs:
            if pair is not None and pair[0] not in labelled and not infos[pair[0]].is_leaf:
                infos[pair[0]].module = info.module
                labelled.add(pair[0])
