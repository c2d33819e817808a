"""What an export is asked to make: the output kind, size and timing, checked up front.

Qt-free so the command line, the Export Animation dialog and the tests share one
reading of ``--size``, ``--step`` and the output path, and one list of formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import quoted
from engine.train import MAX_STEPS

from ..model.lesson import Timing
from ..model.timeline import Direction

DEFAULT_SIZE = (1280, 720)
MIN_SIDE, MAX_SIDE = 200, 8192
MAX_STEP_DIGITS = 9

FRAME_SUFFIXES = (".png", ".svg")


class Kind(StrEnum):
    """What a whole-lesson export writes (``LessonOptions.kind``)."""

    GIF = "gif"
    APNG = "apng"
    WEBP = "webp"
    MP4 = "mp4"
    PDF = "pdf"
    HTML = "html"
    PNG_SEQUENCE = "png-sequence"


@dataclass(frozen=True)
class Format:
    """One whole-lesson format: the suffix of ``--out`` that selects it ("/": a folder),
    its name in File > Export Animation…, any further arguments it implies, and what
    its default file name adds to the graph's (a handout and a worksheet are both .pdf:
    their names differ so that one never replaces the other)."""

    kind: Kind
    suffix: str
    label: str
    extra: tuple[str, ...] = ()
    tag: str = ""


#: Every whole-lesson format, in the order the export dialog lists them.
FORMATS: tuple[Format, ...] = (
    Format(Kind.GIF, ".gif", "Animated GIF"),
    Format(Kind.APNG, ".apng", "Animated PNG (APNG)"),
    Format(Kind.WEBP, ".webp", "Animated WebP"),
    Format(Kind.MP4, ".mp4", "Video, MP4 (H.264)"),
    Format(Kind.PDF, ".pdf", "PDF handout", tag="-handout"),
    Format(
        Kind.PDF, ".pdf", "PDF worksheet (answer key at the back)", ("--worksheet",), "-worksheet"
    ),
    Format(Kind.HTML, ".html", "Web page player (HTML)"),
    Format(Kind.PNG_SEQUENCE, "/", "Folder of numbered PNGs", tag="-frames"),
)
#: The kind ``--out``'s suffix selects; a folder (a path ending in ``/`` or an existing
#: directory) gets a numbered PNG sequence.
KIND_OF_SUFFIX = {f.suffix: f.kind for f in FORMATS if f.suffix != "/"}
LESSON_SUFFIXES = tuple(KIND_OF_SUFFIX)


class View(StrEnum):
    """What a frame shows (``--view``): the canvas with the chain-rule text, or the canvas."""

    SLIDE = "slide"
    CANVAS = "canvas"


#: The ``--view`` choices, as the command line spells them.
VIEWS = tuple(v.value for v in View)


class ExportError(Exception):
    """Bad input for an export; ``str`` is one line for ``error: FILE: ...``."""


@dataclass(frozen=True)
class LessonOptions:
    """One whole-lesson export: every step of the backward pass (and optionally forward)."""

    kind: Kind
    size: tuple[int, int] = DEFAULT_SIZE
    timing: Timing = Timing()
    forward: bool = False
    worksheet: bool = False
    view: View = View.SLIDE
    train: int = 0  # --train N: the update act over N training steps (0: none)
    direction: Direction = Direction.REVERSE  # --direction forward: forward mode's steps
    # forward mode's tangents per input (None: e₀, as the command line plays it); the
    # Export Animation dialog hands over the player's, so the export shows what the window does
    tangents: Mapping[str, Any] | None = field(default=None, compare=False)


def parse_size(text: str | None) -> tuple[int, int]:
    """``1280x720`` -> (1280, 720); raises ExportError with the reason."""
    if text is None:
        return DEFAULT_SIZE
    m = re.fullmatch(r"\s*(\d{1,9})\s*[xX×]\s*(\d{1,9})\s*", text)
    if not m:
        raise ExportError(f"--size must look like 1280x720, got {quoted(text)}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (MIN_SIDE <= w <= MAX_SIDE and MIN_SIDE <= h <= MAX_SIDE):
        raise ExportError(f"--size {w}x{h} is out of range: each side {MIN_SIDE}..{MAX_SIDE}")
    return w, h


def parse_step(text: str) -> int | None:
    """``end`` -> None; a non-negative integer -> itself; else ExportError."""
    t = text.strip().lower()
    if t == "end":
        return None
    if not re.fullmatch(r"\d+", t):
        raise ExportError(
            f"--step must be a number of backward steps (0, 1, ...) or 'end', got {quoted(text)}"
        )
    if len(t) > MAX_STEP_DIGITS:  # int() refuses thousands of digits; no graph is that long
        raise ExportError(f"--step {quoted(t)} is past the end of any graph")
    return int(t)


#: What ``--hold`` and ``--transition`` (seconds) and ``--fps`` may be; the Export
#: Animation dialog's boxes take the same ranges.
HOLD_RANGE, TRANSITION_RANGE, FPS_RANGE = (0.0, 60.0), (0.0, 10.0), (1, 60)


def parse_number(text: str, flag: str, limits: tuple[float, float], unit: str = "") -> float:
    """``flag``'s number within ``limits``; ``unit`` is what it counts ("seconds", or
    nothing named). Raises ExportError with the reason."""
    counted = f" of {unit}" if unit else ""
    try:
        value = float(text)
    except ValueError:
        raise ExportError(f"{flag} must be a number{counted}, got {quoted(text)}") from None
    lo, hi = limits
    if not lo <= value <= hi:
        raise ExportError(f"{flag} {value:g} is out of range: {lo:g}..{hi:g} {unit}".rstrip())
    return value


def parse_train_steps(text: str) -> int:
    """``--train N``: 1..MAX_STEPS training steps for the update act."""
    if not re.fullmatch(r"\s*\d{1,9}\s*", text) or not 1 <= int(text) <= MAX_STEPS:
        raise ExportError(
            f"--train must be a number of steps, 1..{MAX_STEPS:,}, got {quoted(text)}"
        )
    return int(text)


def lesson_kind(out: str) -> Kind:
    """The output kind of ``--out`` for ``--all``: a suffix in LESSON_SUFFIXES, or a folder.

    Raises ExportError naming the accepted suffixes, or a missing parent folder.
    """
    p = Path(out)
    folder = out.endswith(("/", "\\")) or p.is_dir()
    kind = Kind.PNG_SEQUENCE if folder else KIND_OF_SUFFIX.get(p.suffix.lower())
    if kind is None:
        shown = "|".join(LESSON_SUFFIXES)
        raise ExportError(
            f"--out must end in {shown} or '/' (a folder of PNGs) with --all, got {quoted(out)}"
        )
    check_folder(p)
    return kind


def check_folder(out: Path) -> None:
    """Raise ExportError unless the folder ``--out`` writes into exists."""
    if not out.parent.exists():
        raise ExportError(f"--out folder {str(out.parent)!r} does not exist")


def write_tangents(path: Path, tangents: Mapping[str, Any]) -> None:
    """Save forward mode's tangents for a child ``main.py export --tangents FILE`` (the
    Export Animation dialog's hand-over: JSON, whose floats read back bit for bit)."""
    path.write_text(json.dumps({x: np.asarray(u).tolist() for x, u in tangents.items()}))


def read_tangents(path: str) -> dict[str, np.ndarray]:
    """The tangents :func:`write_tangents` saved; ExportError when the file is not such."""
    try:
        data = json.loads(Path(path).read_text())
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return {str(x): np.asarray(u, dtype=np.float64) for x, u in data.items()}
    except (OSError, ValueError, TypeError) as exc:
        raise ExportError(f"--tangents {quoted(path)}: {exc}".splitlines()[0]) from None
