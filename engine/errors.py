"""User-facing errors: each names the node it is about, in one line.

Every message the GUI or CLI shows for bad input comes from one of these, so the
wording (``node 'y': ...``) is the same everywhere.
"""

from __future__ import annotations

import json
from typing import Any

#: Quoted values in messages are cut here: a 1 MB id must not make a 1 MB line.
QUOTE_LIMIT = 60


def quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``repr(text)``, cut to ``limit`` characters with an ellipsis."""
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 2] + "…" + r[0]


def printable(text: str) -> str:
    """``text`` with every character that is not printable (controls such as ESC, which
    set a terminal's title or clear it, line breaks, bidi overrides, surrogates) written
    as its backslash escape: user text as it may reach a terminal, a log or a comment."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode()
        for ch in text
    )


#: Unicode's bidirectional controls: the embeddings and overrides (U+202A-U+202E), the
#: isolates (U+2066-U+2069) and the marks (U+200E, U+200F, U+061C). Shown as they are,
#: they reorder the text around them ("Trojan Source"): a title could make a write-up, a
#: page or a terminal read in another order than its characters go. A node id may hold
#: none (:func:`engine.graph.id_problem`); free text shows them as :func:`visible` does.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e" "\u2066\u2067\u2068\u2069" "\u200e\u200f\u061c"
)


def visible(text: str) -> str:
    """``text`` with each bidirectional control written out in its place (``‹U+202E›``),
    reordering nothing: user text as a write-up, a canvas or a web page shows it (a
    terminal or a comment takes :func:`printable`'s backslash escapes)."""
    if BIDI_CONTROLS.isdisjoint(text):
        return text
    return "".join(f"‹U+{ord(ch):04X}›" if ch in BIDI_CONTROLS else ch for ch in text)


def brief(value: Any, limit: int = 40) -> str:
    """A short JSON rendering of any value for a message, cut with an ellipsis."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as Python writes it in a message: ``()``, ``(3,)``, ``(2, 3)``."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class GraphError(Exception):
    """A problem with the graph a user built; ``node`` is the node it is about (or None)."""

    def __init__(self, message: str, node: str | None = None) -> None:
        self.node = node
        self.detail = message
        super().__init__(f"node {quoted(node)}: {message}" if node is not None else message)


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
