"""What the walk passes around: tensors by id, module paths, loss modules, and the error.

Small frozen records, so the evaluator never holds a real torch object or runs code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..fileformat import GraphFile
from ..graph import Graph
from ..train import TrainSpec


class CodeError(Exception):
    """Code outside the subset, or code PyTorch itself would refuse; one line with its place."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        self.line = line
        self.column = column
        self.detail = message.replace("\r", " ").replace("\n", " ")
        super().__init__(f"line {line}, column {column}: {self.detail}")


@dataclass
class Imported:
    """What a snippet builds: the graph, its ``backward(...)`` and what was noted on the way.

    ``warnings`` are things the user should know were skipped or approximated;
    ``notes`` say how spellings outside the table were written; both are
    ``line L: ...`` strings. ``retain_grad`` lists the nodes the code called
    ``.retain_grad()`` on; ``lines`` maps each node to the source line that made it.
    """

    graph: Graph
    output: str | None = None
    gradient: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    retain_grad: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)

    train: TrainSpec | None = None  # a torch.optim loop after the backward (pytorch_train)

    def to_graph_file(self, title: str = "") -> GraphFile:
        return GraphFile(
            graph=self.graph,
            output=self.output,
            gradient=self.gradient,
            title=title,
            train=self.train,
        )


@dataclass
class Node:
    op: str
    inputs: list[str]
    attrs: dict[str, Any]
    value: np.ndarray
    requires_grad: bool
    line: int
    stmt: int  # which statement made it: an assignment names only what it made itself
    random: bool = False  # holds seeded stand-ins for PyTorch's random numbers
    named: bool = False  # was bound to a variable by an assignment
    detached: bool = False  # torch.tensor([...]) of tensors: a copy without history


@dataclass(frozen=True)
class T:
    """A tensor during the walk: the id of the node holding it."""

    id: str


@dataclass
class Slots:
    """A no-grad tensor being written row by row (``y[0] = ...``): a stack in waiting."""

    base: str
    rows: list[str | None]


@dataclass(frozen=True)
class Module:
    path: str


@dataclass(frozen=True)
class Method:
    target: T
    name: str


@dataclass(frozen=True)
class Loss:
    """A loss module (``nn.MSELoss()``): calling it calls its functional form."""

    function: str
    reduction: str


@dataclass(frozen=True)
class Dtype:
    name: str


@dataclass(frozen=True)
class Indices:
    """The indices of a max/min over a dim: refused wherever they are used."""


class ValuesIndices(NamedTuple):
    """What ``torch.max/min(x, dim)`` returns: read ``.values`` or ``[0]``; the indices
    are integers without a gradient, which the graph does not hold."""

    values: T
    indices: Indices


@dataclass(frozen=True)
class Range:
    """``range(n)``: only as ``tuple(range(x.ndim))`` / ``list(range(x.ndim))``, the dims
    the export writes for a logsumexp over all dims (``dim`` null or ``[]``)."""

    n: int


@dataclass(frozen=True)
class AllDims:
    """``tuple(range(n))`` (``as_list`` False) or ``list(range(n))``."""

    n: int
    as_list: bool


COLON = object()  # a ``:`` inside an index


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def all_ints(v: Any) -> bool:
    if isinstance(v, tuple | list):
        return all(all_ints(x) for x in v)
    return is_int(v)


def holds_tensors(v: Any) -> bool:
    if isinstance(v, T):
        return True
    return isinstance(v, tuple | list) and any(holds_tensors(x) for x in v)


def where_of(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1


_CONSTRUCTS = {
    "Lambda": "a lambda",
    "ListComp": "a list comprehension",
    "DictComp": "a dict comprehension",
    "SetComp": "a set comprehension",
    "GeneratorExp": "a generator expression",
    "IfExp": "a conditional expression",
    "Compare": "a comparison",
    "BoolOp": "and/or",
    "Dict": "a dict",
    "Set": "a set",
    "JoinedStr": "an f-string",
    "NamedExpr": "the := operator",
    "Starred": "a starred expression",
    "BinOp": "this operator",
}


def construct(node: ast.AST) -> str:
    """What a refused piece of syntax is called in a message."""
    return _CONSTRUCTS.get(type(node).__name__, type(node).__name__)


def describe(value: Any) -> str:
    """A value as a message names it."""
    if isinstance(value, T):
        return f"tensor {value.id!r}"
    if isinstance(value, Module):
        return value.path
    if isinstance(value, Method):
        return f"method .{value.name}"
    if isinstance(value, Indices):
        return "the indices of max/min (integers without a gradient)"
    if isinstance(value, ValuesIndices):
        return "(values, indices) of max/min: read .values"
    if value is None:
        return "None"
    return type(value).__name__
