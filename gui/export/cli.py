"""``main.py export``: one frame (``--step K``) or the whole lesson (``--all``), headless.

    python main.py export FILE --step K --out frame.png|.svg [--size WxH] [--view slide|canvas]
    python main.py export FILE --all --out lesson.gif|.apng|.webp|.mp4|.pdf|.html|DIR/
        [--size WxH] [--fps N] [--hold S] [--transition S] [--forward] [--worksheet]
        [--view slide|canvas] [--direction reverse|forward]

FILE is a graph (``.bpgraph``) or a captured PyTorch pass (``.bptrace``, its modules
collapsed). ``K`` counts the backward steps the player plays (a collapsed group is
one): 0 is "forward done, nothing propagated yet", ``end`` is "backward done".
``--direction forward`` plays forward mode's steps instead (J·t from the inputs, with
the tangent e₀ the app starts from), ``K`` counting those. Bad
input exits with status 2 and one line on stderr, ``error: FILE: ...``, never a
traceback; a failed export leaves no file behind.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from PySide6.QtCore import QtMsgType, qInstallMessageHandler

from engine.atomic_write import output_is_input
from engine.errors import GraphError, printable
from engine.fileformat import FileFormatError

from ..document import GraphDocument
from ..model import colours
from ..model.timeline import Direction, timeline_of
from ..player import forward_pass
from ..theme import using
from .atomic import checkpoint, defer_interrupts, ignore_interrupts
from .frame_sheet import save_frame
from .options import (
    DEFAULT_SIZE,
    FPS_RANGE,
    FRAME_SUFFIXES,
    HOLD_RANGE,
    LESSON_SUFFIXES,
    TRANSITION_RANGE,
    VIEWS,
    ExportError,
    Kind,
    LessonOptions,
    Timing,
    View,
    check_folder,
    lesson_kind,
    parse_number,
    parse_size,
    parse_step,
    parse_train_steps,
    read_tangents,
)
from .render import load_document

PROG = "main.py export"
USAGE = (
    f"usage: main.py export FILE (--step K --out frame.png | --all --out "
    f"lesson{'|'.join(LESSON_SUFFIXES)}|DIR/) [--size 1280x720]"
)
_VALUED = (
    "--step", "--out", "--size", "--fps", "--hold", "--transition", "--view", "--train",
    "--direction", "--tangents",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ExportError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Render a graph's or a captured trace's backward pass: one frame, or the whole "
        "lesson as an animation, a PNG folder, a PDF or a web page.",
    )
    parser.add_argument("file", metavar="FILE")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--step",
        metavar="K",
        help="one frame: backward steps applied, 0 (forward done) .. n, or 'end'",
    )
    which.add_argument("--all", action="store_true", help="every step: the whole lesson")
    parser.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="--step: .png or .svg; --all: .gif .apng .webp .mp4 .pdf .html, "
        "or a folder ending in / for numbered PNGs",
    )
    w, h = DEFAULT_SIZE
    base = Timing()
    for flag, metavar, text in (
        ("--size", "WxH", f"image size in pixels (default {w}x{h})"),
        ("--fps", "N", f"frames per second of the step transitions (default {base.fps:g})"),
        ("--hold", "S", f"seconds each step stays on screen (default {base.hold:g})"),
        ("--transition", "S", "seconds of the travelling pulse between steps "
         f"(default {base.transition:g}; 0: cut)"),
    ):
        parser.add_argument(flag, metavar=metavar, help=text)
    for flag, text in (
        ("--forward", "play the forward pass, node by node, before backward"),
        ("--worksheet", "PDF: blank boxes for each step's numbers, answer key at the back"),
    ):
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument(
        "--view",
        default=View.SLIDE.value,
        choices=VIEWS,
        help="slide: canvas and chain-rule text (default); canvas: canvas alone",
    )
    parser.add_argument(
        "--train",
        metavar="N",
        help="a graph with a train block: end with the update, then the loss over N steps",
    )
    parser.add_argument(
        "--theme",
        default=colours.DEFAULT,
        choices=list(colours.THEMES),
        help=f"colours (default {colours.DEFAULT}; projector: high contrast)",
    )
    parser.add_argument(
        "--direction",
        default=Direction.REVERSE.value,
        choices=[d.value for d in Direction],
        help="reverse: the backward pass, vᵀJ (default); forward: forward mode, J·t from "
        "the inputs (tangent e₀), its steps played the same way",
    )
    parser.add_argument("--progress", action="store_true", help=argparse.SUPPRESS)
    # the Export Animation dialog's hand-over of the player's tangents (write_tangents)
    parser.add_argument("--tangents", help=argparse.SUPPRESS)
    return parser


def _lesson_options(args: argparse.Namespace, kind: Kind) -> LessonOptions:
    timing = Timing(**{  # the defaults where a flag is not given
        name: parse_number(text, f"--{name}", limits, unit)
        for name, limits, unit in (("hold", HOLD_RANGE, "seconds"), ("fps", FPS_RANGE, ""),
                                   ("transition", TRANSITION_RANGE, "seconds"))
        if (text := getattr(args, name)) is not None
    })
    if args.worksheet and kind != Kind.PDF:
        raise ExportError("--worksheet is for a .pdf handout")
    train = 0 if args.train is None else parse_train_steps(args.train)
    direction = Direction(args.direction)
    if direction is Direction.FORWARD and (args.worksheet or train):
        raise ExportError(
            "--direction forward plays forward mode: --worksheet and --train are for "
            "the backward pass"
        )
    return LessonOptions(
        direction=direction,
        tangents=None if args.tangents is None else read_tangents(args.tangents),
        kind=kind,
        size=parse_size(args.size),
        timing=timing,
        forward=args.forward,
        worksheet=args.worksheet,
        view=View(args.view),
        train=train,
    )


def lesson_options(out: str, **options: object) -> LessonOptions:
    """The options of ``--all --out OUT`` from keywords named after the flags (``size="640x360"``
    or ``(640, 360)``, ``fps=``, ``hold=``, ``transition=``, ``forward=True``, ``worksheet=True``,
    ``view="canvas"``, ``train=``), read by the command line's own parser so the two can never
    differ; raises ExportError (an unknown keyword included) with the reason."""
    argv = ["FILE", "--all", "--out", out]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False and value is not None:
            text = "x".join(map(str, value)) if isinstance(value, tuple) else str(value)
            argv += [flag, text]
    return _lesson_options(_parser().parse_args(argv), lesson_kind(out))


def main(argv: list[str]) -> int:
    """Entry point of ``main.py export``; returns the exit status (0 ok, 2 bad input, 1 failed)."""
    qInstallMessageHandler(_quiet_messages)
    if any(a in ("-h", "--help") for a in argv):
        _parser().print_help()
        return 0
    name = _file_argument(argv)
    try:
        args = _parser().parse_args(argv)
        name = args.file
        out = Path(args.out)
        if args.all:
            options: LessonOptions | None = _lesson_options(args, lesson_kind(args.out))
            step = None
        else:
            options = None
            step = parse_step(args.step)
            if out.suffix.lower() not in FRAME_SUFFIXES:
                raise ExportError(
                    f"--out must end in .png or .svg, got {args.out!r} "
                    f"(use --all for a whole lesson)"
                )
            check_folder(out)
        size = parse_size(args.size)
        problem = output_is_input(out, args.file)
        if problem:
            raise ExportError(problem)
    except ExportError as exc:
        return _fail(name, f"{exc} ({USAGE})", 2)
    try:
        with using(args.theme):  # in-process callers (tests) get their theme back
            if options is not None:
                status = _export_lesson(args.file, out, options, args.progress)
            else:
                view, direction = View(args.view), Direction(args.direction)
                status = _export_frame(args.file, step, out, size, view, direction)
        for line in _held:
            print(line, file=sys.stderr)
        return status
    except ExportError as exc:
        return _fail(name, str(exc), 2)
    except KeyboardInterrupt:
        return _fail(name, "export cancelled, nothing written", 1)
    except OSError as exc:
        return _fail(name, f"cannot write {out}: {exc.strerror or exc}", 1)
    except Exception as exc:  # a bug, not the user's fault: still one line, never a traceback
        return _fail(name, f"internal error: {type(exc).__name__}: {exc}", 1)


def _fail(name: str, reason: str, status: int) -> int:
    """Say why on the one line the command promises, ``error: FILE: ...``; ``status``."""
    print(f"error: {_one_line(name)}: {_one_line(reason)}", file=sys.stderr)
    return status


def _file_argument(argv: list[str]) -> str:
    """FILE as typed (for the error line), even when parsing fails; else ``export``."""
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in _VALUED:
            skip = True
        elif not a.startswith("-"):
            return a
    return "export"


#: Qt's warnings during an export, printed only if it succeeds: a failed export
#: says one line, the error, and nothing before it.
_held: list[str] = []


def _quiet_messages(kind: QtMsgType, _context: object, message: str) -> None:
    """Keep stderr for what matters: the offscreen platform's harmless chatter is dropped."""
    if "propagateSizeHints" in message or kind == QtMsgType.QtDebugMsg:
        return
    _held.append(_one_line(message))


def _one_line(text: str) -> str:
    return printable(" ".join(text.split()))


def _load(file: str) -> GraphDocument:
    try:
        return load_document(file)
    except FileFormatError as exc:
        raise ExportError(str(exc)) from None


def _export_frame(
    file: str, step: int | None, out: Path, size: tuple[int, int], view: View,
    direction: Direction,
) -> int:
    doc = _load(file)
    tangents = None
    if direction is Direction.FORWARD:
        try:
            tangents = forward_pass(doc)
        except GraphError as exc:
            raise ExportError(f"--direction forward: {exc}") from None
    timeline = timeline_of(doc.graph, doc.results, doc.live_groups(), tangents)
    n = len(timeline.steps)
    steps = "backward steps" if tangents is None else "forward-mode steps"
    if step is None:
        position = timeline.end
    elif doc.results.trace is None and tangents is None:
        if step > 0:
            reason = doc.results.backward_error
            raise ExportError(f"no backward pass to step through: {reason}")
        position = timeline.end  # forward done
    elif step > n:
        raise ExportError(
            f"--step {step} is past the end: this graph has {n} {steps} "
            f"(use 0..{n} or 'end')"
        )
    else:
        position = timeline.position_of_step(step)
    save_frame(doc, position, out, size, view, direction)
    return 0


def _export_lesson(file: str, out: Path, options: LessonOptions, progress: bool) -> int:
    # Lazy: the writers load the image and video libraries, which a frame export,
    # --help and a refused argument should not wait for.
    from .writers import write_lesson

    defer_interrupts()
    doc = _load(file)
    if options.train and doc.train is None:
        raise ExportError("--train needs a graph with a train block (Teach > Train)")

    def report(done: int, total: int) -> None:
        checkpoint()
        if progress:
            print(f"progress: {done}/{total}", flush=True)

    try:
        write_lesson(doc, out, options, report)
    finally:
        ignore_interrupts()
    return 0
