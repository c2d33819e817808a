"""Results: what the engine said about a document as it is now (no Qt)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from engine.autodiff import Forward
from engine.errors import GraphError
from engine.trace import Trace


@dataclass
class Results:
    """The forward values and, when backward could run, its trace.

    ``trace`` is None while no backward can run; ``backward_error`` then says why
    (no output chosen, a missing ``v``, an error upstream, ...).

    ``changed``, with ``replaced``: what an edit changed, so views redraw only that.
    The edit touched nothing the output depends on (a node added from the palette, a
    value set on a branch backward never reaches): the backward pass came out the same
    numbers, and only the nodes in ``changed`` may show another value or error than
    in the results ``replaced`` (a weak reference: no chain of old results is kept).
    None: anything may differ.
    """

    forward: Forward
    trace: Trace | None = None
    backward_error: GraphError | None = None
    changed: frozenset[str] | None = None
    replaced: weakref.ref[Results] | None = field(default=None, repr=False, compare=False)

    def changed_since(self, earlier: Results | None) -> frozenset[str] | None:
        """The nodes that may read differently than in ``earlier`` (see the class), when
        these results replaced exactly those; None: anything may differ."""
        if earlier is None or self.replaced is None or self.replaced() is not earlier:
            return None
        return self.changed
