"""Sizes a small graph file may not make the app spend, checked by the loader before
any work: the length of every string, and the elements (and bytes) of all values and
intermediates together.

Each tensor already has a cap (``fileformat.MAX_ELEMENTS``), but a 40 KB chain of
large intermediates took 3.2 GB, and a 1,000,000-character group title froze File >
Open for minutes: these limits bound the whole file instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import GraphError, quoted

#: A graph's title and a group's title: one line a person reads.
MAX_TITLE_LENGTH = 1_000
#: Any other string (the description, notes, keys a later version wrote).
MAX_TEXT_LENGTH = 1_000_000
#: All values and intermediates of one forward pass together (float64: 8 bytes each).
MAX_TOTAL_ELEMENTS = 30_000_000


def string_problem(doc: dict[str, Any]) -> str | None:
    """The first string of the document over its limit, in words, or None."""
    for where, text, limit in _strings(doc):
        if len(text) > limit:
            return (
                f"{where} has {len(text):,} characters; it may have at most {limit:,} "
                f"({quoted(text)})"
            )
    return None


def _strings(doc: dict[str, Any]) -> Iterator[tuple[str, str, int]]:
    """(where, string, limit) for the titles, then for every string and key."""
    title = doc.get("title")
    if isinstance(title, str):
        yield '"title"', title, MAX_TITLE_LENGTH
    groups = doc.get("groups")
    for i, group in enumerate(groups if isinstance(groups, list) else ()):
        title = group.get("title") if isinstance(group, dict) else None
        if isinstance(title, str):
            yield f'groups[{i}]: "title"', title, MAX_TITLE_LENGTH
    stack: list[tuple[str, Any]] = [("the file", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value, MAX_TEXT_LENGTH
        elif isinstance(value, dict):
            for key, item in value.items():
                yield f"a key in {where}", key, MAX_TEXT_LENGTH
                if key not in _TENSORS or not isinstance(item, list):  # parse_tensor checks
                    stack.append((f"{where} > {key}", item))
        elif isinstance(value, list) and not _NUMBERS.issuperset(map(type, value)):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(value))


_NUMBERS = frozenset((int, float))
_TENSORS = frozenset(("value", "gradient"))


class ElementBudget:
    """Counts the elements of every value as shapes are inferred, and refuses the node
    where the total would pass :data:`MAX_TOTAL_ELEMENTS` (before anything is allocated)."""

    def __init__(self, limit: int = MAX_TOTAL_ELEMENTS) -> None:
        self.limit = limit
        self.total = 0

    def add(self, nid: str, count: int) -> None:
        self.total += count
        if self.total > self.limit:
            raise GraphError(
                f"the graph's values would reach {self.total:,} elements "
                f"({self.total * 8 / 2**20:,.0f} MB) at this node; all values and "
                f"intermediates together may have at most {self.limit:,} "
                f"({self.limit * 8 / 2**20:,.0f} MB)",
                nid,
            )


__all__ = [
    "MAX_TEXT_LENGTH",
    "MAX_TITLE_LENGTH",
    "MAX_TOTAL_ELEMENTS",
    "ElementBudget",
    "string_problem",
]
