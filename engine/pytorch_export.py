"""Graph -> a runnable PyTorch script that stays inside the import subset.

One line per node in topological order, float64 leaves holding their values, the
``backward(...)`` call with its v and a ``print`` of each leaf's ``.grad``. Node ids
that are not Python names are made into names, with the original id in a
``# id: "..."`` comment the importer reads back, so ``import_code(export_script(G))``
gives G again. The script needs PyTorch to run; writing it does not.
"""

from __future__ import annotations

import json
import keyword
import re
import unicodedata

import numpy as np

from .errors import printable
from .graph import Graph, Node
from .ops import LEAF_OPS, OPS
from .ops.torch_source import expression, literal
from .pytorch_train import training_lines
from .train import TrainSpec, params_of

#: Names the script itself uses (and the Check with PyTorch footer's ``json``), so no
#: node may take them.
RESERVED = frozenset({"torch", "print", "float", "list", "tuple", "range", "json", "None"})

#: The script's first two lines, fixed: Python reads an encoding cookie there
#: (``# coding: utf-7`` in a title would make it decode the rest differently).
HEADER = ("# -*- coding: utf-8 -*-", "# PyTorch script exported by Backprop Studio")

_FLOAT64 = "dtype=torch.float64"


def python_names(graph: Graph) -> dict[str, str]:
    """Each node id -> the variable that holds it in the script (the id itself when it can).

    Only ASCII names are written: Python folds identifiers with NFKC, so ``ｘ`` (U+FF58)
    would be the same variable as ``x`` and ``ｔｏｒｃｈ`` would rebind ``torch``.
    """
    names: dict[str, str] = {}
    taken = {nid for nid in graph.nodes if _usable(nid)}
    for nid in graph.nodes:
        if _usable(nid):
            names[nid] = nid
            continue
        folded = unicodedata.normalize("NFKD", nid)
        base = re.sub(r"[^A-Za-z0-9_]", "_", folded)
        if not base or base[0].isdigit():
            base = "n_" + base
        if not _usable(base):
            base += "_"
        candidate, k = base, 1
        while candidate in taken:
            k += 1
            candidate = f"{base}_{k}"
        taken.add(candidate)
        names[nid] = candidate
    return names


def _usable(name: str) -> bool:
    return (
        name.isascii()
        and name.isidentifier()
        and not keyword.iskeyword(name)
        and name not in RESERVED
    )


def id_comment(nid: str) -> str:
    """The ``# id: "..."`` comment the importer reads back (JSON, unprintables escaped)."""
    text = json.dumps(nid, ensure_ascii=False)
    return "  # id: " + "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)


def export_order(graph: Graph) -> list[str]:
    """The graph's own node order when it already puts every operand before its consumers
    (a graph built or loaded in order: the script reads back with the same node order),
    else the engine's one topological order (:meth:`Graph.topological_order`)."""
    seen: set[str] = set()
    for nid, node in graph.nodes.items():
        if any(s is not None and s not in seen for s in node.inputs):
            return graph.topological_order()
        seen.add(nid)
    return list(graph.nodes)


def requires_grad(graph: Graph) -> set[str]:
    """The nodes PyTorch would mark ``requires_grad`` (from the graph's structure alone)."""
    out: set[str] = set()
    for nid in export_order(graph):
        node = graph.nodes[nid]
        if node.wants_grad or (not node.is_leaf and any(s in out for s in node.inputs)):
            out.add(nid)
    return out


def tensor_literal(value: np.ndarray | float) -> str:
    """A nested list literal the importer reads back bit for bit (``float("nan")`` included)."""
    return literal(np.asarray(value, dtype=np.float64).tolist())


def _leaf_line(node: Node) -> str:
    grad = ", requires_grad=True" if node.requires_grad else ", requires_grad=False"
    if node.op == "const":
        grad = ""
    value = node.value
    if value is not None and value.size == 0:
        sizes = ", ".join(str(n) for n in value.shape)
        return f"torch.zeros({sizes}, {_FLOAT64}{grad})"
    assert value is not None  # a leaf holds its value
    return f"torch.tensor({tensor_literal(value)}, {_FLOAT64}{grad})"


def export_script(
    graph: Graph,
    output: str | None = None,
    gradient: np.ndarray | None = None,
    *,
    retain_grads: bool = False,
    title: str = "",
    train: TrainSpec | None = None,
) -> str:
    """The graph as a PyTorch script (see the module docstring).

    ``retain_grads`` adds ``.retain_grad()`` for every non-leaf that requires grad and
    prints their ``.grad`` too. A node with an empty operand port is written as a
    comment: the script shows it, but that line does not run. ``train`` (a file's
    train block) adds its ``torch.optim`` loop (:mod:`engine.pytorch_train`).
    """
    if train is not None and output is None:
        output = train.loss  # the loop follows a backward: the importer stops there
    names = python_names(graph)
    needs_grad = requires_grad(graph)
    lines: list[str] = []
    if title:
        lines += HEADER
        for text in title.splitlines()[:3]:
            lines.append(f"# {printable(text)}".rstrip())
    lines += ["import torch", ""]
    retained = []
    op_lines = []
    for nid in export_order(graph):
        node = graph.nodes[nid]
        name = names[nid]
        comment = "" if name == nid else id_comment(nid)
        if node.op in LEAF_OPS:
            lines.append(f"{name} = {_leaf_line(node)}{comment}")
            continue
        missing = [i for i, s in enumerate(node.inputs) if s is None]
        arity = OPS[node.op].arity
        if missing or not node.inputs or (arity is not None and len(node.inputs) < arity):
            lines.append(f"# {name} = {node.op}(...): an operand port is not connected")
            continue
        args = [names[s] for s in node.inputs if s is not None]  # all connected (above)
        lines.append(f"{name} = {expression(OPS[node.op], args, node.attrs)}{comment}")
        op_lines.append(lines[-1])
        if retain_grads and nid in needs_grad:
            lines.append(f"{name}.retain_grad()")
            retained.append(nid)
    if output is not None and output in graph.nodes:
        lines.append("")
        if gradient is None:
            lines.append(f"{names[output]}.backward()")
        else:
            v = tensor_literal(gradient)
            lines.append(f"{names[output]}.backward(gradient=torch.tensor({v}, {_FLOAT64}))")
        shown = [n for n in graph.nodes if graph.nodes[n].wants_grad] + retained
        for nid in shown:
            lines.append(f'print("{names[nid]}.grad =", {names[nid]}.grad)')
    if train is not None and output is not None:
        lines += training_lines(train, names, op_lines, params_of(graph, train))
    return "\n".join(lines) + "\n"


__all__ = [
    "HEADER",
    "RESERVED",
    "export_order",
    "export_script",
    "python_names",
    "requires_grad",
]
