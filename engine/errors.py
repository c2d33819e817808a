"""User-facing errors: each names the node it is about, in one line.

Every message the GUI or CLI shows for bad input comes from one of these, so the
wording (``node 'y': ...``) is the same everywhere.
"""

from __future__ import annotations


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as Python writes it in a message: ``()``, ``(3,)``, ``(2, 3)``."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class GraphError(Exception):
    """A problem with the graph a user built; ``node`` is the node it is about (or None)."""

    def __init__(self, message: str, node: str | None = None) -> None:
        self.node = node
        self.detail = message
        super().__init__(f"node {node!r}: {message}" if node is not None else message)


class CycleError(GraphError):
    """Connecting these nodes would make the graph cyclic."""


class ArityError(GraphError):
    """An op has the wrong number of operands connected."""


class ShapeError(GraphError):
    """Operand shapes do not fit the op (broadcast, matmul, stack, ...)."""


class AttrError(GraphError):
    """An op attribute (dim, index, shape, ...) is invalid."""


class GradientError(GraphError):
    """The backward gradient ``v`` is missing or has the wrong shape."""
