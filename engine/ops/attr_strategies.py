"""Hypothesis strategies of the attribute kinds: what a random-graph test draws for an
attribute of each kind, given the record's :class:`~engine.ops.record.Attr` and its
first operand's shape. Values are often but not always valid (the op's ``check``
refuses the rest), so the tests see the refusals too.

Hypothesis is a test dependency: it is imported when a strategy is asked for, never
when the engine loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hypothesis.strategies import SearchStrategy

Shape = tuple[int, ...]


class Attr(Protocol):
    """What a strategy reads of a record's attribute (:class:`engine.ops.record.Attr`,
    which imports this module)."""

    @property
    def default(self) -> Any: ...


def _dim(shape: Shape) -> SearchStrategy[int]:
    """A dim of the operand, sometimes one past either end."""
    from hypothesis import strategies as st

    nd = max(len(shape), 1)
    return st.integers(-nd - 1, nd)


def integer(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    return _dim(shape)


def integer_or_null(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    from hypothesis import strategies as st

    return st.one_of(st.none(), _dim(shape))


def dims(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    """None, one dim, or a list of distinct dims (``[]`` on a 0-D operand)."""
    from hypothesis import strategies as st

    some = st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape))
    return st.one_of(st.none(), _dim(shape), some if shape else st.just([]))


def boolean(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    from hypothesis import strategies as st

    return st.booleans()


def target_shape(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    """Targets the operand's elements fit, and some that need not."""
    from hypothesis import strategies as st

    n = int(np.prod(shape))
    targets = [[-1], [n], [1, -1], [-1, 1], list(shape[::-1]), [2, -1]]
    return st.sampled_from(targets + ([[]] if n == 1 else []))


def number(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    """The default, or a number of either sign near it."""
    from hypothesis import strategies as st

    return st.one_of(st.just(attr.default), st.floats(-3.0, 3.0))


def number_or_null(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    from hypothesis import strategies as st

    return st.one_of(st.none(), st.floats(-1.0, 1.0))


def bool_tensor(attr: Attr, shape: Shape) -> SearchStrategy[Any]:
    """A mask that broadcasts against the operand: over a suffix of its shape."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    suffix = st.integers(0, len(shape)).map(lambda k: shape[k:])
    return suffix.flatmap(lambda s: hnp.arrays(np.bool_, s)).map(lambda a: a.tolist())
