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
from typing import Any, ClassVar, Protocol

import numpy as np

from .collector import collector_paused
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


def accumulate(before: np.ndarray, vjp: np.ndarray) -> np.ndarray:
    """``before + vjp`` as a fresh float64 array (0-d: a Python float add, which
    rounds as numpy's does at a third of a 0-d ufunc's cost)."""
    if before.ndim == 0 and vjp.ndim == 0:
        return np.asarray(float(before) + float(vjp))
    after = before + vjp
    return after if type(after) is np.ndarray else np.asarray(after, dtype=np.float64)


@dataclass(slots=True, eq=False)
class Step:
    """One edge of the backward pass: consumer -> operand, in the order it ran.

    ``before`` is the operand's accumulated gradient before this step (None: nothing
    yet; for a leaf, its ``.grad`` from earlier backward calls) and ``accumulated``
    the same after ``grad += vjp``.

    A step that adds to an earlier gradient may be recorded lazily (``vjp`` and
    ``accumulated`` given as None, ``previous`` the step before it into the same
    operand): backward then sums into one buffer in place, as PyTorch does, instead
    of keeping every partial sum, and the step recomputes its own numbers, with the
    same operations in the same order (so the same bits), only when they are shown.
    """

    consumer: str
    operand: str
    operand_index: int
    upstream: np.ndarray
    _vjp: np.ndarray | None
    _before: np.ndarray | None
    _accumulated: np.ndarray | None
    context: StepContext
    previous: Step | None = None

    @property
    def vjp(self) -> np.ndarray:
        if self._vjp is None:
            with np.errstate(all="ignore"):  # as in the backward pass: inf/NaN are values
                pulled = self.context.pullback(self.operand_index, self.upstream)
            self._vjp = np.asarray(pulled, dtype=np.float64)
        return self._vjp

    @property
    def before(self) -> np.ndarray | None:
        return self.previous.accumulated if self.previous is not None else self._before

    @property
    def accumulated(self) -> np.ndarray:
        if self._accumulated is None:
            chain = [self]  # back to the nearest known sum (a loop: fan-ins can be long)
            while chain[-1].previous is not None and chain[-1].previous._accumulated is None:
                chain.append(chain[-1].previous)
            with np.errstate(all="ignore"):
                for step in reversed(chain):
                    before = step.before
                    step._accumulated = step.vjp if before is None else accumulate(before, step.vjp)
        assert self._accumulated is not None  # the loop above summed it
        return self._accumulated

    def with_sums(self, before: np.ndarray | None, accumulated: np.ndarray) -> Step:
        """This edge with other partial sums around it (played in another order)."""
        return Step(
            self.consumer, self.operand, self.operand_index, self.upstream,
            self._vjp, before, accumulated, self.context,
        )  # fmt: skip

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


@dataclass(eq=False)
class StepRecord:
    """Steps as backward records them: plain tuples, made into :class:`Step` objects
    only when someone reads :attr:`Trace.steps` (a benchmark run never does; the
    player reads them all at once).

    ``steps`` holds ``(consumer, operand, operand index, upstream, vjp, before,
    accumulated, context, previous)`` with consumer and operand as slots into
    ``names``, ``context`` an index into ``contexts`` (one ``(op, xs, out, attrs)``
    per consumer, shared by its steps) and ``previous`` the index of the step before
    into the same operand (-1: none). ``finals`` pairs a step index with the sum it
    ends at, for last steps recorded lazily.
    """

    names: Sequence[str] = ()
    steps: list[tuple] = field(default_factory=list)
    contexts: list[tuple[str, tuple[np.ndarray, ...], np.ndarray, dict[str, Any]]] = field(
        default_factory=list
    )
    finals: list[tuple[int, np.ndarray | None]] = field(default_factory=list)

    def materialise(self) -> list[Step]:
        names = self.names
        contexts = [EdgeContext(*c) for c in self.contexts]
        out: list[Step] = []
        for c, o, i, g, vjp, before, after, ctx, prev in self.steps:
            previous = out[prev] if prev >= 0 else None
            out.append(Step(names[c], names[o], i, g, vjp, before, after, contexts[ctx], previous))
        for k, grad in self.finals:
            if out[k]._accumulated is None:  # noqa: SLF001 - filled in by its maker
                out[k]._accumulated = grad  # noqa: SLF001
        return out


@dataclass
class Trace:
    """A backward pass: the steps in order, and every node's gradient at the end.

    ``grads`` holds, for each node on a path to the output that requires grad, its
    gradient (for leaves: the accumulated ``.grad``); None where no gradient flows.
    ``record``: the steps still in their compact form (see :class:`StepRecord`),
    made into :attr:`steps` when first read.
    """

    output: str
    gradient: np.ndarray
    grads: dict[str, np.ndarray | None] = field(default_factory=dict)
    leaves: list[str] = field(default_factory=list)
    record: StepRecord | None = field(default=None, repr=False, compare=False)
    _steps: list[Step] = field(default_factory=list, repr=False)
    #: A PyTorch pass replayed from its recorded steps (:class:`engine.captured.CapturedTrace`):
    #: nothing here can run it again. A class's fact, so a reader asks without importing
    #: the captured classes.
    replayed: ClassVar[bool] = False

    @property
    def steps(self) -> list[Step]:
        """Every edge's step, in the order backward ran them."""
        if self.record is not None:
            with collector_paused():  # 10k-100k new objects, none freed: no GC passes
                self._steps = self.record.materialise()
            self.record = None
        return self._steps

    @steps.setter
    def steps(self, steps: list[Step]) -> None:
        self._steps, self.record = steps, None

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
        return fan_ins(self.steps)

    def fan_in(self, node: str) -> int:
        return self.fan_ins().get(node, 0)

    def __len__(self) -> int:
        return len(self.record.steps) if self.record is not None else len(self._steps)


def fan_ins(steps: Sequence[Step]) -> dict[str, int]:
    """How many of ``steps`` deliver a gradient into each node (more than one: fan-out)."""
    counts: dict[str, int] = {}
    for s in steps:
        counts[s.operand] = counts.get(s.operand, 0) + 1
    return counts
