"""The optional keys the GUI reads from a graph file, checked when the file is loaded.

The format keeps keys it does not know (docs/graph-format.md), and the GUI keeps
its own there: a node's ``"position"``, the top-level ``"view"`` (zoom and
centre) and, in an autosave copy, ``"autosave"`` (which file and which process).
A wrong type, NaN, infinity or an absurd coordinate in one of them used to get as
far as Qt (a crash, or a view transform that stays NaN); checking them with the
rest of the file means a bad one is refused in one line before the open
document is touched, and everything the GUI reads is known to be sane.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import brief

#: Scene coordinates beyond this are no layout anyone drew (the canvas is ~10^4 wide);
#: the canvas indexes edges in a grid, and an edge 10^6 long would fill memory.
MAX_COORD = 1e5


class LayoutKeyError(ValueError):
    """One GUI key is wrong; ``str`` says which and why (the loader adds the node)."""


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def point(value: Any, what: str) -> tuple[float, float]:
    """Two finite numbers within ±:data:`MAX_COORD`, as floats; else LayoutKeyError."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(_is_number(c) and math.isfinite(c) and abs(c) <= MAX_COORD for c in value)
    ):
        return float(value[0]), float(value[1])
    raise LayoutKeyError(
        f"{what} must be two finite numbers within ±{MAX_COORD:,.0f}, got {brief(value)}"
    )


def clamp(c: float) -> float:
    """``c`` brought within ±:data:`MAX_COORD` (what the GUI writes always reloads)."""
    return min(max(c, -MAX_COORD), MAX_COORD)


def check_node_keys(extra: dict[str, Any]) -> None:
    """A node's GUI keys: ``position``."""
    if "position" in extra:
        point(extra["position"], "position")


def check_file_keys(extra: dict[str, Any]) -> None:
    """The file's top-level GUI keys: ``view`` and ``autosave``."""
    view = extra.get("view")
    if view is not None:
        if not isinstance(view, dict):
            raise LayoutKeyError(f"view must be an object, got {brief(view)}")
        zoom = view.get("zoom")
        if zoom is not None and not (_is_number(zoom) and math.isfinite(zoom) and zoom > 0):
            raise LayoutKeyError(f"view.zoom must be a positive number, got {brief(zoom)}")
        if view.get("center") is not None:
            point(view["center"], "view.center")
    record = extra.get("autosave")
    if record is not None:
        if not isinstance(record, dict):
            raise LayoutKeyError(f"autosave must be an object, got {brief(record)}")
        if not isinstance(record.get("source"), str | None):
            raise LayoutKeyError("autosave.source must be a file name or null")
        pid = record.get("pid")
        if pid is not None and (not isinstance(pid, int) or isinstance(pid, bool)):
            raise LayoutKeyError("autosave.pid must be an integer")


__all__ = ["MAX_COORD", "LayoutKeyError", "check_file_keys", "check_node_keys", "clamp", "point"]
