"""Semantic zoom: what a node box says when the canvas shows it too small to read.

Shrinking every glyph with the zoom gives a whole-graph view of unreadable 5 px
text. Below a readable size a box switches to a compact form instead: its name and
its value (and its gradient, when it has one) in a font sized for the screen, no
ports, pills or small print. The decision and the text are plain functions here
(no Qt), so the canvas, the exporters and the tests agree on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

#: In the free view, box text smaller than this on screen (points) goes compact.
MIN_SCREEN_PT = 8.0
#: A value or gradient line smaller than this share of the minimum size is left out.
MIN_EXTRA_SHARE = 0.6
#: With room to spare, a name grows up to this multiple of the minimum size.
NAME_GROW = 1.5
#: Longest compact line (characters) before it is cut with an ellipsis.
MAX_COMPACT_CHARS = 22
#: The shortest cut of the active edge's boxes' gradient line: ``grad [2.098…`` or
#: ``grad → 0.973`` (the word and the first entry, or the value a change ends at). A
#: whole small graph shortens that line to its box rather than the camera closing in
#: on two boxes for the sake of a long vector.
MIN_ACTIVE_GRAD_CHARS = 12
#: The active step's boxes, drawn compact, grow by up to this share of their height so
#: that their names reach the size the other boxes' names grow to (see
#: :func:`name_growth`).
ACTIVE_GROW = 0.5
#: Value and gradient go side by side (freeing a line for the name) only when they
#: keep at least this share of the size they would have stacked.
BESIDE_KEEP = 0.95


class MinZooms(NamedTuple):
    """The smallest zooms at which a box's compact form stays legible (the camera
    asks). ``names``: its name at the canvas's minimum text size (an active edge's
    box: its whole gradient line too); ``whole``: the same, the gradient line
    shortened to the box, as a whole small graph shows it; ``numbers``: its name and
    the line under it."""

    names: float
    whole: float
    numbers: float


@dataclass(frozen=True)
class CompactLine:
    """One line of a compact box: ``kind`` is "name", "value" or "grad" (its colour)."""

    text: str
    kind: str
    #: Drawn after the previous line, on its row (see :func:`compact_rows`).
    beside: bool = False


def is_compact(zoom: float, box_pt: float, min_screen_pt: float) -> bool:
    """True when box text of ``box_pt`` points would show smaller than ``min_screen_pt``."""
    return zoom * box_pt < min_screen_pt - 1e-9


#: The separator of a gradient's change, ``before → after`` (written side by side).
CHANGE = " → "
#: The arrow that starts a change's ``after`` written under its ``before``.
ARROW = CHANGE.lstrip()


def _first_rows(text: str) -> str:
    """``before → after`` written over several rows, side by side (the arrow on the
    middle row) or stacked (``after`` under ``before``, its first row starting with
    the arrow), as the first row of each side joined by the arrow, so a one-line form
    keeps the change; any other text as it is."""
    if "\n" not in text or ARROW not in text:
        return text  # one row, or no change: most texts, and cheap to tell
    lines = text.split("\n")
    under = next((ln for ln in lines[1:] if ln.startswith(ARROW)), None)
    if under is not None:
        left, right = lines[0].strip(), under[len(ARROW) :].strip()
        return f"{left}{CHANGE}{right}\n…"
    at = next((ln.find(CHANGE) for ln in lines[1:] if CHANGE in ln), -1)
    if at < 0:
        return text
    left, right = lines[0][:at].rstrip(), lines[0][at + len(CHANGE) :].strip()
    return f"{left}{CHANGE}{right}\n…"


def _one_line(text: str) -> str:
    """A multi-line tensor text as its first row and an ellipsis."""
    lines = _first_rows(text).split("\n")
    line = lines[0].strip()
    if len(lines) > 1:
        line += " …"
    return line


def cut(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters: cut with an ellipsis when longer."""
    if len(text) <= chars:
        return text
    return text[: chars - 1].rstrip(", ") + "…"


def shortened(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters: a change ``grad 1.013 → 2.026`` first
    gives up its starting value (``grad → 2.026``: the step's result stays), then
    any text is :func:`cut`."""
    if len(text) <= chars:
        return text
    if CHANGE in text:
        word = text.split(" ", 1)[0]
        text = word + CHANGE + text.split(CHANGE, 1)[1]
    return cut(text, chars)


def fitting_chars(chars: int, width_per_pt: float, pt: float, room_w: float) -> int:
    """How many of a monospaced line's ``chars`` characters (``width_per_pt`` wide at
    1 pt) fit ``room_w`` at ``pt`` points: all, or fewer but never below
    :data:`MIN_ACTIVE_GRAD_CHARS` (the line then shrinks, see :func:`compact_sizes`)."""
    if chars <= MIN_ACTIVE_GRAD_CHARS or width_per_pt * pt <= room_w:
        return chars
    return max(MIN_ACTIVE_GRAD_CHARS, int(room_w / (pt * width_per_pt / chars)))


def room_chars(room_w: float, char_w_per_pt: float, pt: float) -> int:
    """How many monospaced characters (``char_w_per_pt`` wide at 1 pt) a box's text
    room ``room_w`` holds at ``pt`` points, less the gradient's word ``grad `` so
    that line fits too: a wide box shows a long line whole instead of cutting it at
    :data:`MAX_COMPACT_CHARS`."""
    return max(0, int(room_w / (char_w_per_pt * pt)) - len("grad "))


def compact_lines(
    name: str, value: str, grad: str | None, grad_first: bool = False,
    chars: int = MAX_COMPACT_CHARS, grad_title: str = "grad",
) -> list[CompactLine]:
    """The compact form of a box: name, value, and ``grad`` (written after ``grad_title``:
    "tan" for a tangent) when given. ``grad_first``
    (the active edge's boxes, whose gradient is what the step changes) puts the
    gradient before the value, so it is the line kept when only one fits. ``chars``:
    the longest value (the gradient's after its word); a box with room for more at its
    size passes more (:func:`room_chars`) rather than cutting a line it could show."""
    chars = max(MAX_COMPACT_CHARS, chars)
    extra = [CompactLine(cut(_one_line(value), chars), "value")]
    if grad is not None:
        word = grad_title + " "
        g = CompactLine(shortened(word + _one_line(grad), len(word) + chars), "grad")
        extra = [g, *extra] if grad_first else [*extra, g]
    return [CompactLine(name, "name"), *extra]


def compact_sizes(
    zoom: float,
    min_screen_pt: float,
    widths_per_pt: list[float],
    line_per_pt: float,
    room: tuple[float, float],
) -> list[float]:
    """Scene point size of each compact line. ``widths_per_pt``: each line's width in
    scene units at 1 pt (the name first); ``line_per_pt``: line height at 1 pt;
    ``room``: the box's (width, height) for text.

    The name comes first: ``min_screen_pt`` on screen, less only when the box is too
    small for it, and up to :data:`NAME_GROW` times that in the room the other lines
    leave. The second line (the value, or the active edge's gradient) is always
    shown, in the height left, up to ``min_screen_pt``. Further lines join it when
    every one of them can stay at :data:`MIN_EXTRA_SHARE` of that size or more (they
    shrink together), else they are left out (size 0), the last ones first."""
    floor = min_screen_pt / zoom
    room_w, room_h = room
    height = room_h / line_per_pt  # points of text that fit stacked
    name_w, rest = widths_per_pt[0], widths_per_pt[1:]
    name_pt = min(floor, room_w / name_w if name_w > 0 else floor, height)
    least = MIN_EXTRA_SHARE * floor
    wide = [min(floor, room_w / w if w > 0 else floor) for w in rest]
    left = height - name_pt
    sizes = [0.0] * len(rest)
    if rest:
        sizes[0] = max(0.0, min(wide[0], left))
        others = [i for i in range(1, len(rest)) if wide[i] >= least]
        for k in range(len(others), 0, -1):
            keep = [0, *others[:k]]
            want = [wide[i] for i in keep]
            if sum(want) > left:
                want = [min(pt, left / len(keep)) for pt in want]
            if all(pt >= least for pt in want):
                for i, pt in zip(keep, want, strict=True):
                    sizes[i] = pt
                break
    grown = min(NAME_GROW * name_pt, height - sum(sizes))
    if name_w > 0:
        grown = min(grown, room_w / name_w)
    return [max(name_pt, grown), *sizes]


def compact_rows(
    zoom: float,
    min_screen_pt: float,
    widths_per_pt: list[float],
    line_per_pt: float,
    room: tuple[float, float],
    gap_per_pt: float,
    name_first: bool = False,
) -> tuple[list[float], bool]:
    """:func:`compact_sizes`, or, for a name with two lines under it, those two side by
    side, ``gap_per_pt`` apart (True), when that frees height for the name to grow and
    keeps them at :data:`BESIDE_KEEP` of their stacked size or more.

    Stacked, three lines share a box's height: the name stays at the minimum size
    while a box with two lines grows its name 1.5x. A short value and gradient
    (``0.1006`` and ``grad 3``) fit on one row at about the size they had stacked, and
    the name, what a class looks for first, gets the line they leave.

    ``name_first`` (the active step's boxes): when neither lets the name grow as far
    as a name grows (:data:`NAME_GROW`) and a two-line form grows it more, the third
    line (the value, under the gradient the step changes) is left out for it, so the
    boxes the class looks at keep their names at least as large as the other boxes'."""
    stacked = compact_sizes(zoom, min_screen_pt, widths_per_pt, line_per_pt, room)
    if len(widths_per_pt) != 3:
        return stacked, False
    name_w, first_w, second_w = widths_per_pt
    pair_w = first_w + gap_per_pt + second_w
    name_pt, pair_pt = compact_sizes(zoom, min_screen_pt, [name_w, pair_w], line_per_pt, room)
    shown = min((pt for pt in stacked[1:] if pt > 0), default=0.0)
    if (
        name_pt > stacked[0]
        and pair_pt >= BESIDE_KEEP * shown
        and pair_pt * zoom >= MIN_EXTRA_SHARE * min_screen_pt
    ):
        sizes, beside = [name_pt, pair_pt, pair_pt], True
    else:
        sizes, beside = stacked, False
    if name_first:
        two = compact_sizes(zoom, min_screen_pt, widths_per_pt[:2], line_per_pt, room)
        if sizes[0] < _grown_name(zoom, min_screen_pt, name_w, room[0]) - 1e-9 \
                and two[0] > sizes[0] + 1e-9:
            return [*two, 0.0], False
    return sizes, beside


def _grown_name(zoom: float, min_screen_pt: float, name_w: float, room_w: float) -> float:
    """The largest a name grows (scene points): :data:`NAME_GROW` times the minimum
    size, or as wide as the room."""
    grown = NAME_GROW * min_screen_pt / zoom
    return grown if name_w <= 0 else min(grown, room_w / name_w)


def name_growth(
    zoom: float,
    min_screen_pt: float,
    widths_per_pt: list[float],
    line_per_pt: float,
    room: tuple[float, float],
) -> float:
    """The height (scene units) beyond ``room`` an active step's box needs, drawn
    compact, for its name at :data:`NAME_GROW` times the minimum size (or as wide as
    its room) over the line under it at its full size: the other boxes' names grow so
    in the height their short lines leave, and the active box's, its gradient line at
    full size, used to stay at the minimum exactly when the class looks for it."""
    floor = min_screen_pt / zoom
    room_w, room_h = room
    name = _grown_name(zoom, min_screen_pt, widths_per_pt[0], room_w)
    under = 0.0
    if len(widths_per_pt) > 1:
        w = widths_per_pt[1]
        under = floor if w <= 0 else min(floor, room_w / w)
    return max(0.0, (name + under) * line_per_pt - room_h)


def compact_min_zoom(
    min_screen_pt: float,
    widths_per_pt: list[float],
    line_per_pt: float,
    room: tuple[float, float],
    with_next: bool = False,
) -> float:
    """The smallest zoom at which :func:`compact_sizes` shows the name at
    ``min_screen_pt``; ``with_next``: the next line too (the active edge's boxes, whose
    gradient line must stay in view), at :data:`MIN_EXTRA_SHARE` of that."""
    lines = 1 + (MIN_EXTRA_SHARE if with_next else 0.0)
    need = [widths_per_pt[0] / room[0], line_per_pt * lines / room[1]]
    if with_next and len(widths_per_pt) > 1:
        need.append(MIN_EXTRA_SHARE * widths_per_pt[1] / room[0])
    return min_screen_pt * max(need)
