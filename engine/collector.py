"""Pausing Python's cyclic garbage collector around work that allocates a lot and frees
little: a walk over a big graph, opening a file of thousands of nodes.

Such work only grows the heap, so every collection the allocations trigger rescans
everything allocated so far and finds nothing to free: 25-40 % of a 40,000-node
engine run, 10-15 % of opening a 5,000-node file in the app.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block (nested blocks are fine: the outermost
    one turns the collector back on, and only if it was on).

    ``freeze``: what the block built is kept for long (an opened document), so it
    leaves the collector's sight at the end (:func:`gc.freeze`); else the first
    collection after the block walked every object it had allocated (7 % of opening
    5,000 nodes). What an earlier freeze kept comes back into sight at the start: a
    document replaced may leave cycles to free."""
    enabled = gc.isenabled()
    gc.disable()
    if freeze:
        gc.unfreeze()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
