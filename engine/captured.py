"""A backward pass captured from PyTorch, as data that needs no PyTorch to replay.

:mod:`engine.capture` fills these from a real ``backward()``;
:mod:`engine.tracefile` saves and loads them. The steps are the engine's own
:class:`~engine.trace.Step`, so the player, the panels and the exports show a
captured pass exactly like one our engine computed. Only the context differs:
a live capture pulls back through PyTorch's node, a loaded one answers from the
Jacobians the file kept (those up to the display limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import shape_text
from .trace import Trace

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

    nodes: dict[str, CapturedNode] = field(default_factory=dict)

    def modules(self) -> list[str]:
        """The module paths that hold nodes, in forward order."""
        return list(dict.fromkeys(n.module for n in self.nodes.values() if n.module))
