"""The backward pass recorded as data: an ordered list of steps, one per edge.

The GUI only plays this list back, so stepping back, seeking and exporting a
frame are indexing. A step's local Jacobian is derived from the very VJP that
produced the propagated gradient (row ``r`` is the pull-back of basis vector
``e_r``), so the two can never disagree, and it is built only when asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .ops import OPS

#: The largest Jacobian (in entries) built unless a caller insists.
JACOBIAN_LIMIT = 4096


@dataclass(slots=True, eq=False)
class EdgeContext:
    """What one consumer's VJPs need; shared by the steps into all its operands.

    Not frozen: backward makes one per node, and a frozen dataclass costs four times
    as much to construct (nothing assigns to one after it is made)."""

    op: str
    xs: Sequence[np.ndarray]
    out: np.ndarray
    attrs: dict[str, Any]

    def pullback(self, index: int, g: np.ndarray) -> np.ndarray:
        return np.asarray(OPS[self.op].vjp(index, g, self.xs, self.out, self.attrs))

    def jacobian(self, index: int, upstream_shape: tuple[int, ...]) -> np.ndarray | None:
        """Row ``r`` is the pull-back of basis vector ``e_r`` into operand ``index``."""
        m = math.prod(upstream_shape)
        rows = []
        basis = np.zeros(m)
        with np.errstate(all="ignore"):  # as in the backward pass: inf/NaN are values here
            for r in range(m):
                basis[r] = 1.0
                rows.append(self.pullback(index, basis.reshape(upstream_shape)).ravel().copy())
                basis[r] = 0.0
        return np.array(rows).reshape(m, -1) if rows else np.empty((0, 0))

    def describe(self, index: int) -> str:
        shapes = [x.shape for x in self.xs]
        return OPS[self.op].jacobian_words(index, shapes, self.out.shape, self.attrs)


class StepContext(Protocol):
    """What a step needs from whoever computed it: the engine's op table
    (:class:`EdgeContext`), PyTorch's own autograd node, or a saved trace."""

    def pullback(self, index: int, g: np.ndarray) -> np.ndarray: ...

    def jacobian(self, index: int, upstream_shape: tuple[int, ...]) -> np.ndarray | None: ...

    def describe(self, index: int) -> str: ...


@dataclass(slots=True)
class Step:
    """One edge of the backward pass: consumer -> operand, in the order it ran.

    ``before`` is the operand's accumulated gradient before this step (None: nothing
    yet; for a leaf, its ``.grad`` from earlier backward calls) and ``accumulated``
    the same after ``grad += vjp``.
    """

    consumer: str
    operand: str
    operand_index: int
    upstream: np.ndarray
    vjp: np.ndarray
    before: np.ndarray | None
    accumulated: np.ndarray
    context: StepContext

    @property
    def jacobian_size(self) -> int:
        return int(self.upstream.size) * int(self.vjp.size)

    def jacobian(self, limit: int = JACOBIAN_LIMIT, force: bool = False) -> np.ndarray | None:
        """d(consumer)/d(operand) as a 2-D matrix (rows: consumer elements, row-major).

        Returns None when it would exceed ``limit`` entries, unless ``force``, or when
        the context cannot build it (a saved trace keeps only the small ones).
        """
        if self.jacobian_size > limit and not force:
            return None
        return self.context.jacobian(self.operand_index, self.upstream.shape)

    def structure(self) -> str:
        """The Jacobian's structure in words, for when it is too big to print."""
        return self.context.describe(self.operand_index)


@dataclass
class Trace:
    """A backward pass: the steps in order, and every node's gradient at the end.

    ``grads`` holds, for each node on a path to the output that requires grad, its
    gradient (for leaves: the accumulated ``.grad``); None where no gradient flows.
    """

    output: str
    gradient: np.ndarray
    steps: list[Step] = field(default_factory=list)
    grads: dict[str, np.ndarray | None] = field(default_factory=dict)
    leaves: list[str] = field(default_factory=list)

    @property
    def leaf_grads(self) -> dict[str, np.ndarray | None]:
        """``.grad`` of each input that requires grad, as PyTorch would report it."""
        return {leaf: self.grads.get(leaf) for leaf in self.leaves}

    @property
    def held_grads(self) -> dict[str, np.ndarray]:
        """The ``.grad`` each leaf holds after this call (None-free): what the next
        ``backward(..., prior=)`` adds to, as a second ``.backward()`` in PyTorch."""
        return {leaf: g for leaf, g in self.leaf_grads.items() if g is not None}

    def fan_ins(self) -> dict[str, int]:
        """How many steps deliver a gradient into each node (more than one: fan-out)."""
        counts: dict[str, int] = {}
        for s in self.steps:
            counts[s.operand] = counts.get(s.operand, 0) + 1
        return counts

    def fan_in(self, node: str) -> int:
        return self.fan_ins().get(node, 0)

    def __len__(self) -> int:
        return len(self.steps)
