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
import math
import re
import unicodedata
from typing import Any

import numpy as np

from .errors import printable
from .graph import Graph, Node, topological_sort
from .ops import LEAF_OPS, OPS
from .pytorch_train import training_lines
from .train import TrainSpec, params_of

#: Names the script itself uses (and the Check with PyTorch footer's ``json``), so no
#: node may take them.
RESERVED = frozenset({"torch", "print", "float", "list", "tuple", "range", "json", "None"})

#: The script's first two lines, fixed: Python reads an encoding cookie there
#: (``# coding: utf-7`` in a title would make it decode the rest differently).
HEADER = ("# -*- coding: utf-8 -*-", "# PyTorch script exported by Backprop Studio")

_INFIX = ("+", "-", "*", "/", "**", "@")
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
    """Topological order that keeps the graph's own node order wherever it can."""
    return topological_sort({nid: n.inputs for nid, n in graph.nodes.items()})


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
    a = np.asarray(value, dtype=np.float64)

    def number(x: float) -> str:
        if math.isnan(x):
            return 'float("nan")'
        if math.isinf(x):
            return 'float("inf")' if x > 0 else '-float("inf")'
        return repr(float(x))

    def walk(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(walk(y) for y in x) + "]"
        return number(x)

    return walk(a.tolist())


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


def _op_expression(node: Node, args: list[str]) -> str:
    """The node as PyTorch writes it, in the op table's preferred readable spelling:
    an operator where the table lists one, else its first ``torch.*`` function."""
    spec = OPS[node.op]
    spellings = spec.torch
    if len(args) == 2 and any(s in _INFIX for s in spellings):
        sym = next(s for s in spellings if s in _INFIX)
        return f"{args[0]} {sym} {args[1]}"
    if spec.arity == 1 and "-" in spellings:
        return f"-{args[0]}"
    if "[]" in spellings and node.attrs.get("dim", 0) >= 0:
        dim, index = node.attrs.get("dim", 0), node.attrs.get("index", 0)
        return f"{args[0]}[{':, ' * dim}{index}]"
    if node.op == "where":
        condition = node.attrs.get("condition", True)
        return f"torch.where(torch.tensor({condition!r}), {args[0]}, {args[1]})"
    attrs = _written_attrs(spec.attrs, node.attrs)
    if node.op == "logsumexp" and attrs.get("dim") in (None, []):
        # PyTorch's logsumexp has no "all dims" value; these two spellings read back as null / []
        whole = "list" if attrs["dim"] == [] else "tuple"
        attrs["dim"] = _Source(f"{whole}(range({args[0]}.ndim))")
    keywords = "".join(f", {k}={_literal(v)}" for k, v in attrs.items())
    function = next((s for s in spellings if s.startswith("torch.")), None)
    if function is None:
        method = next(s for s in spellings if s.startswith("Tensor."))
        return f"{args[0]}.{method.removeprefix('Tensor.')}({keywords.removeprefix(', ')})"
    operands = f"[{', '.join(args)}]" if spec.arity is None else ", ".join(args)
    call = f"{function}({operands}{keywords})"
    if node.op in ("max", "min") and node.attrs.get("dim") is not None:
        return call + ".values"  # over a dim PyTorch returns (values, indices)
    return call


def _literal(value: Any) -> str:
    """An attribute as Python source: ``repr``, but a non-finite float as ``float("nan")``
    (``repr`` gives ``nan``, a NameError in the script)."""
    if isinstance(value, float):
        return tensor_literal(value)
    if isinstance(value, list | tuple):
        items = [_literal(v) for v in value]
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    return repr(value)


class _Source(str):
    """Python source written as it is (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)


def _written_attrs(specs: tuple, attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes worth writing: all but trailing ones left at a None/False default
    (``torch.sum(x, dim=None, keepdim=True)``: PyTorch wants dim with keepdim)."""
    names = [a.name for a in specs]
    quiet = {a.name for a in specs if _unset(a.default) and attrs.get(a.name) is a.default}
    last = max((k for k, n in enumerate(names) if n not in quiet), default=-1)
    return {n: attrs.get(n) for n in names[: last + 1]}


def _unset(default: Any) -> bool:
    """A None/False default (not 0, which equals False: unsqueeze's dim=0 must be written)."""
    return default is None or default is False


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
        lines.append(f"{name} = {_op_expression(node, args)}{comment}")
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
