"""Semantic zoom: what a node box says when the canvas shows it too small to read.

Shrinking every glyph with the zoom gives a whole-graph view of unreadable 5 px
text. Below a readable size a box switches to a compact form instead: its name and
its value (and its gradient, when it has one) in a font sized for the screen, no
ports, pills or small print. The decision and the text are plain functions here
(no Qt), so the canvas, the exporters and the tests agree on them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: In the free view, box text smaller than this on screen (points) goes compact.
MIN_SCREEN_PT = 8.0
#: A third compact line smaller than this share of the name's size is left out.
MIN_EXTRA_SHARE = 0.7
#: Longest compact line (characters) before it is cut with an ellipsis.
MAX_COMPACT_CHARS = 22


@dataclass(frozen=True)
class CompactLine:
    """One line of a compact box: ``kind`` is "name", "value" or "grad" (its colour)."""

    text: str
    kind: str


def is_compact(zoom: float, box_pt: float, min_screen_pt: float) -> bool:
    """True when box text of ``box_pt`` points would show smaller than ``min_screen_pt``."""
    return zoom * box_pt < min_screen_pt - 1e-9


def _one_line(text: str) -> str:
    """A multi-line tensor text as its first row and an ellipsis; long lines cut."""
    lines = text.split("\n")
    line = lines[0].strip()
    if len(lines) > 1:
        line += " …"
    if len(line) > MAX_COMPACT_CHARS:
        line = line[: MAX_COMPACT_CHARS - 1].rstrip(", ") + "…"
    return line


def compact_lines(name: str, value: str, grad: str | None) -> list[CompactLine]:
    """The compact form of a box: name, value, and ``grad`` when given (the canvas
    passes the gradient of the box receiving the active step)."""
    out = [CompactLine(name, "name"), CompactLine(_one_line(value), "value")]
    if grad is not None:
        out.append(CompactLine("grad " + _one_line(grad), "grad"))
    return out


def compact_sizes(
    zoom: float,
    min_screen_pt: float,
    widths_per_pt: list[float],
    line_per_pt: float,
    room: tuple[float, float],
) -> list[float]:
    """Scene point size of each compact line: ``min_screen_pt`` on screen, unless the
    line would not fit the box's ``room`` (width, height). ``widths_per_pt``: each
    line's width in scene units at 1 pt; ``line_per_pt``: line height at 1 pt.

    The name and value come first: they get the height they need, and a third line
    (the gradient) shrinks into what is left rather than shrinking them, and is left
    out (size 0) when that would make it much smaller than they are."""
    want = min_screen_pt / zoom
    main = widths_per_pt[:2]
    if line_per_pt > 0:
        want = min(want, room[1] / (line_per_pt * len(main)))
    sizes = [min(want, room[0] / w) if w > 0 else want for w in main]
    left = room[1] - line_per_pt * sum(sizes)
    rest = widths_per_pt[2:]
    for w in rest:
        pt = min(want, left / (line_per_pt * len(rest))) if line_per_pt > 0 else want
        pt = min(pt, room[0] / w) if w > 0 else pt
        sizes.append(pt if pt >= MIN_EXTRA_SHARE * min(sizes) else 0.0)
    return sizes
