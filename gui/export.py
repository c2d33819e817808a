"""Render one frame of playback to an image, headless: ``main.py export`` and File > Export Image.

The image is made by the very widgets the window shows (a CanvasView wired to a
Player with :func:`gui.player.connect_canvas`, and the ChainRulePanel), laid out
off screen at the requested size and painted with ``QWidget.render``: an exported
frame cannot disagree with the screen. The pulse rests at mid-edge since a still
image has no animation. SVG goes through QtSvg's QSvgGenerator (part of
PySide6-Essentials), so the canvas and the formulas stay vector graphics.

    python main.py export FILE --step K --out frame.png [--size 1280x720] [--view slide|canvas]

``--view slide`` (the default) shows the canvas beside the chain-rule text under a
header; ``--view canvas`` the canvas alone. Either way the canvas camera follows
the step (:mod:`gui.model.camera`), as presentation mode does.
``K`` counts backward steps: 0 is "forward done, nothing propagated yet", ``end``
is "backward done". Bad input exits with status 2 and one line on stderr,
``error: FILE: ...``, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from PySide6.QtCore import (
    QBuffer,
    QIODevice,
    QPoint,
    QRect,
    QSize,
    Qt,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QBoxLayout, QLabel, QVBoxLayout, QWidget

from engine.atomic_write import write_atomic
from engine.errors import quoted

from .application import ensure_app
from .document import GraphDocument
from .theme import THEME

PROG = "main.py export"
USAGE = ("usage: main.py export FILE --step K --out frame.png [--size 1280x720] "
         "[--view slide|canvas]")
VIEWS = ("slide", "canvas")
DEFAULT_SIZE = (1280, 720)
MIN_SIDE, MAX_SIDE = 200, 8192
MAX_STEP_DIGITS = 9
#: Where the pulse sits on the active edge in a still image.
STILL_PULSE = 0.5
#: Share of the width (landscape) or height (portrait) given to the chain-rule panel.
PANEL_SHARE = 0.38


class ExportError(Exception):
    """Bad input for an export; ``str`` is one line for ``error: FILE: ...``."""


def _app() -> QApplication:
    """The running QApplication, or an offscreen one for a headless export.

    Goes through ``gui.application.ensure_app`` so the application name and settings
    are the app's own.
    """
    app = QApplication.instance()
    if app is not None:
        return app  # type: ignore[return-value]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return ensure_app([])


class _FrameSheet(QWidget):
    """The canvas and the chain-rule panel side by side (or stacked), with a status line.

    Built, shown off screen (``WA_DontShowOnScreen``) so every layout is real, and
    thrown away after painting.
    """

    def __init__(self, doc: GraphDocument, position: int | None, size: tuple[int, int],
                 view: str = "slide") -> None:
        super().__init__()
        from .canvas.view import CanvasView
        from .panels.chain_rule import ChainRulePanel
        from .player import Player, connect_canvas

        self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(self.backgroundRole(), QColor("#ffffff"))
        self.setPalette(pal)
        w, h = size
        self.player = Player(doc, self)
        if position is not None:
            self.player.seek(position)
        self.canvas = CanvasView(doc)
        self.canvas.animations_enabled = False
        self.canvas.follow_step = True
        connect_canvas(self.player, self.canvas)
        self.panel = ChainRulePanel(self.player)
        self.panel.browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.panel.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        title = doc.title or doc.display_name
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setText(f"{title}   ·   {self.player.status_text()}")
        self.header.setFont(THEME.font(12, bold=True))
        self.header.setContentsMargins(12, 6, 12, 6)
        self.header.setWordWrap(True)  # a long title must not widen the image
        self.header.setStyleSheet("background:#eef1f6; color:#1d2230;")

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        if view == "canvas":
            self.header.hide()
            self.panel.hide()
            outer.addWidget(self.canvas, 1)
        else:
            landscape = w >= h
            body = QBoxLayout(QBoxLayout.Direction.LeftToRight if landscape
                              else QBoxLayout.Direction.TopToBottom)
            body.setContentsMargins(0, 0, 0, 0)
            body.setSpacing(1)
            body.addWidget(self.canvas, int(round(100 * (1 - PANEL_SHARE))))
            body.addWidget(self.panel, int(round(100 * PANEL_SHARE)))
            outer.addWidget(self.header)
            outer.addLayout(body, 1)
        self.setFixedSize(w, h)
        self.show()
        outer.activate()
        _app().processEvents()
        self.canvas.frame_step(animate=False)
        self.canvas.set_pulse_progress(STILL_PULSE)

    def paint_into(self, painter: QPainter) -> None:
        """Render the sheet with the active ``painter``, then end it (also on an error)."""
        try:
            self.render(painter, QPoint(0, 0))
        finally:
            painter.end()


@contextmanager
def _frame_sheet(doc: GraphDocument, position: int | None, size: tuple[int, int],
                 view: str = "slide") -> Iterator[_FrameSheet]:
    """A sheet for one painting, thrown away after the ``with`` block.

    Needs (and if missing creates) a QApplication.
    """
    _app()
    sheet = _FrameSheet(doc, position, size, view)
    try:
        yield sheet
    finally:
        sheet.close()
        sheet.deleteLater()


def render_frame(doc: GraphDocument, position: int | None,
                 size: tuple[int, int] = DEFAULT_SIZE, view: str = "slide") -> QImage:
    """The frame at timeline ``position`` (None: backward done, everything live) as an image.

    ``size`` is (width, height) in pixels; ``view`` is ``slide`` (canvas, chain rule,
    header) or ``canvas`` (the canvas alone). Needs (and if missing creates) a QApplication.
    """
    with _frame_sheet(doc, position, size, view) as sheet:
        image = QImage(QSize(*size), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor("#ffffff"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        sheet.paint_into(painter)
    return image


def save_frame(doc: GraphDocument, position: int | None, path: str | os.PathLike[str],
               size: tuple[int, int] = DEFAULT_SIZE, view: str = "slide") -> None:
    """Save the frame at ``position`` as PNG or SVG (chosen by the suffix).

    The image is encoded in memory and written with ``write_atomic``, which checks
    every write: a full disk or a read-only folder is an ExportError and leaves no
    partial file (a PNG without its end chunk used to be reported as a success).
    Raises ExportError for an unknown suffix or a file that cannot be written.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        with _frame_sheet(doc, position, size, view) as sheet:
            gen = QSvgGenerator()
            gen.setOutputDevice(buffer)
            gen.setSize(QSize(*size))
            gen.setViewBox(QRect(0, 0, *size))
            gen.setResolution(96)  # CSS pixels: a browser shows the SVG at WxH
            gen.setTitle(doc.title or doc.display_name)
            gen.setDescription(f"Backprop Studio: {sheet.player.status_text()}")
            painter = QPainter()
            if not painter.begin(gen):
                raise ExportError(f"cannot write {p.name}")
            sheet.paint_into(painter)
    elif suffix == ".png":
        if not render_frame(doc, position, size, view).save(buffer, "PNG"):
            raise ExportError(f"cannot encode {p.name} as PNG")
    else:
        raise ExportError(f"cannot export to {suffix or 'a file without suffix'}: use .png or .svg")
    data = bytes(buffer.data().data())
    if not data:
        raise ExportError(f"cannot write {p.name}: nothing was drawn")
    try:
        write_atomic(p, data)
    except OSError as exc:
        raise ExportError(f"cannot write {p}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ExportError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, add_help=True,
                     description="Render one frame of a graph file's backward pass to an image.")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--step", required=True, metavar="K",
                        help="backward steps applied: 0 (forward done) .. n, or 'end'")
    parser.add_argument("--out", required=True, metavar="PATH", help="a .png or .svg file")
    parser.add_argument("--size", default=None, metavar="WxH",
                        help="image size in pixels (default 1280x720)")
    parser.add_argument("--view", default="slide", choices=VIEWS,
                        help="slide: canvas and chain-rule text (default); canvas: the canvas "
                             "alone")
    return parser


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
        raise ExportError(f"--step must be a number of backward steps (0, 1, ...) or 'end', "
                          f"got {quoted(text)}")
    if len(t) > MAX_STEP_DIGITS:  # int() refuses thousands of digits; no graph is that long
        raise ExportError(f"--step {quoted(t)} is past the end of any graph")
    return int(t)


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
        step = parse_step(args.step)
        size = parse_size(args.size)
        out = Path(args.out)
        if out.suffix.lower() not in (".png", ".svg"):
            raise ExportError(f"--out must end in .png or .svg, got {args.out!r}")
        if not out.parent.exists():
            raise ExportError(f"--out folder {str(out.parent)!r} does not exist")
    except ExportError as exc:
        print(f"error: {_one_line(name)}: {_one_line(str(exc))} ({USAGE})", file=sys.stderr)
        return 2
    try:
        status = _export(args.file, step, out, size, args.view)
        for line in _held:
            print(line, file=sys.stderr)
        return status
    except ExportError as exc:
        print(f"error: {_one_line(name)}: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not the user's fault: still one line, never a traceback
        print(f"error: {_one_line(name)}: internal error: {type(exc).__name__}: "
              f"{_one_line(str(exc))}", file=sys.stderr)
        return 1


def _file_argument(argv: list[str]) -> str:
    """FILE as typed (for the error line), even when parsing fails; else ``export``."""
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--step", "--out", "--size", "--view"):
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
    return " ".join(text.split())


def _export(file: str, step: int | None, out: Path, size: tuple[int, int],
            view: str = "slide") -> int:
    from engine.fileformat import FileFormatError, load

    try:
        gf = load(file, partial=True)
    except FileFormatError as exc:
        raise ExportError(str(exc)) from None
    _app()
    from .model.timeline import Timeline

    doc = GraphDocument()
    doc.load(gf, Path(file))
    timeline = Timeline(doc.results)
    n = len(timeline.steps)
    if step is None:
        position = timeline.end
    elif doc.results.trace is None:
        if step > 0:
            reason = doc.results.backward_error
            raise ExportError(f"no backward pass to step through: {reason}")
        position = timeline.end  # forward done
    elif step > n:
        raise ExportError(f"--step {step} is past the end: this graph has {n} backward steps "
                          f"(use 0..{n} or 'end')")
    else:
        position = timeline.position_of_step(step)
    save_frame(doc, position, out, size, view)
    return 0
