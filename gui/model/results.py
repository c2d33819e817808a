"""Results: what the engine said about a document as it is now (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.autodiff import Forward
from engine.errors import GraphError
from engine.trace import Trace


@dataclass
class Results:
    """The forward values and, when backward could run, its trace.

    ``trace`` is None while no backward can run; ``backward_error`` then says why
    (no output chosen, a missing ``v``, an error upstream, ...).
    """

    forward: Forward
    trace: Trace | None = None
    backward_error: GraphError | None = None
