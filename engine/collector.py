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
def collector_paused(settle: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block (nested blocks are fine: the outermost
    one turns the collector back on, and only if it was on).

    ``settle``: the block's objects stay (a file's); the outermost block then collects
    the young generations once, as it turns the collector back on. Left to itself, the
    collector scanned them all twice soon after: once as the youngest generation, and
    again as the middle one (two ~30 ms passes after opening 5,000 nodes); collected
    together, they are scanned once and go straight to the oldest."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            if settle:
                gc.collect(1)
