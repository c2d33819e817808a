"""The printable handout: a PDF through Qt's QPdfWriter, every text vector text.

Pages: a title page (the title card: graph, inputs, the backward call with its v;
and the graph itself); each backward step on half a page (the canvas at that
step, then the chain-rule write-up the panel shows); an end page (``vᵀ J`` and
the leaves' ``.grad``, with the final graph). The ``--worksheet`` variant shows
each step as a question (:mod:`gui.model.worksheet`): the graph as it stood
before the step, the givens, and empty boxes for the vjp and the accumulated
gradient; the answer key and then the end page (the final result) are at the back.

Pictures are the canvas painted straight into the PDF (QGraphicsView.render), so
boxes, edges and numbers stay sharp at any zoom and their text can be selected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QRectF
from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument

from engine import app_signature
from engine.atomic_write import write_atomic
from engine.groups import PlayStep

from ..document import GraphDocument
from ..model import worksheet
from ..model.lesson import ShotKind
from ..panels.chain_rule import Choice, fitted_html
from .animation import Progress
from .flow_page import write_flow_page
from .render import LessonRenderer
from .train_page import write_train_page

#: Picture size the canvas is laid out at (its aspect ratio is the picture's).
PICTURE = (1200, 640)
#: Points: cards, and the write-up under each step.
CARD_PT, STEP_PT = 12.0, 9.5
#: A step's write-up keeps its numbers shrunk to this share of STEP_PT (7.6 pt: a page is
#: read close, and zoomed) before it is shortened to fit its half page.
STEP_MIN_FIT = 0.8
#: A worksheet's question keeps its body text at 10 pt or more (its sub- and superscripts
#: are set at :data:`~gui.model.worksheet.WORKSHEET_SUB_PT` whatever the fit)...
QUESTION_MIN_FIT = 10.0 / worksheet.WORKSHEET_PT
#: ...and may take the room of its step's picture down to this share of the half page
#: (the graph before the step, smaller) rather than be shrunk below that or cut.
QUESTION_PICTURE_SHARE = 0.3
MARGIN_MM = 14.0
GAP = 14.0  # between blocks, in page units (1/96 inch)


class _Pages:
    """A QPdfWriter with a painter, in units of 1/96 inch inside the margins."""

    def __init__(self, title: str) -> None:
        # Into memory: QPdfWriter ignores a failed write (a full disk gave a truncated
        # PDF and status 0); write_atomic reports it and keeps the old file.
        self.buffer = QBuffer()
        self.buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        self.writer = QPdfWriter(self.buffer)
        self.writer.setTitle(title)
        self.writer.setCreator(app_signature())
        self.writer.setResolution(96)
        self.writer.setPageLayout(
            QPageLayout(
                QPageSize(QPageSize.PageSizeId.A4),
                QPageLayout.Orientation.Portrait,
                QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
                QPageLayout.Unit.Millimeter,
            )
        )
        self.painter = QPainter()
        if not self.painter.begin(self.writer):
            raise OSError("cannot start the PDF")
        self.painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = self.writer.pageLayout().paintRectPixels(96)
        self.width, self.height = float(rect.width()), float(rect.height())
        self.started = False

    def new_page(self) -> None:
        if self.started:
            self.writer.newPage()
        self.started = True

    def text(self, html: str, rect: QRectF) -> float:
        """Lay ``html`` out in ``rect`` (shrunk to fit its height); the height used."""
        doc = QTextDocument(documentMargin=0)
        doc.setHtml(html)
        doc.setTextWidth(rect.width())
        height = doc.size().height()
        scale = min(1.0, rect.height() / height) if height > 0 else 1.0
        p = self.painter
        p.save()
        p.translate(rect.topLeft())
        p.scale(scale, scale)
        doc.setTextWidth(rect.width() / scale)
        doc.drawContents(p, QRectF(0, 0, rect.width() / scale, rect.height() / scale))
        p.restore()
        return min(height, doc.size().height() * scale)

    def picture(self, renderer: LessonRenderer, rect: QRectF) -> None:
        """The canvas as it stands, painted into ``rect`` (aspect kept and centred, vector)."""
        canvas = renderer.sheet.canvas
        view = canvas.viewport().rect()
        width = min(rect.width(), rect.height() * view.width() / view.height())
        height = width * view.height() / view.width()
        rect = QRectF(rect.x() + (rect.width() - width) / 2, rect.y(), width, height)
        self.painter.save()
        self.painter.setClipRect(rect)
        canvas.render(self.painter, rect, view)
        self.painter.restore()
        self.painter.drawRect(rect)

    def close(self) -> None:
        self.painter.end()


def step_layout(w: float, h: float) -> tuple[float, float, float]:
    """A step's half of a ``w`` x ``h`` page: its height, its picture's and its write-up's."""
    half = (h - GAP) / 2
    picture = min(w * PICTURE[1] / PICTURE[0], half * 0.55)
    return half, picture, half - picture - GAP / 2


def write_handout(renderer: LessonRenderer, out: Path, progress: Progress | None = None) -> None:
    """Write the renderer's lesson as a PDF handout (or worksheet) to ``out``."""
    pages = _Pages(renderer.sheet.title)
    try:
        _write(renderer, pages, progress)
    finally:
        pages.close()
    write_atomic(out, bytes(pages.buffer.data().data()))


def _write(renderer: LessonRenderer, pages: _Pages, progress: Progress | None) -> None:
    sheet, doc = renderer.sheet, renderer.doc
    tl = sheet.player.timeline
    steps = tl.steps
    n = len(steps)
    total = n + 2
    worksheet_mode = renderer.options.worksheet
    w, h = pages.width, pages.height
    picture_h = w * PICTURE[1] / PICTURE[0]

    def tick(done: int) -> None:
        if progress is not None:
            progress(done, total)

    # Title page: the card, then the graph before backward starts.
    pages.new_page()
    # A worksheet's title card leaves out the notes: they may state the answers.
    title_card = renderer.card_html(ShotKind.TITLE, CARD_PT, notes=not worksheet_mode)
    used = pages.text(title_card, QRectF(0, 0, w, h - picture_h - GAP))
    sheet.show_position(tl.forward_length)
    pages.picture(renderer, QRectF(0, used + GAP, w, picture_h))
    tick(1)

    half, step_picture_h, text_h = step_layout(w, h)
    for k, step in enumerate(steps, 1):
        top = 0.0 if k % 2 == 1 else half + GAP
        if k % 2 == 1:
            pages.new_page()
        position = tl.forward_length + k
        step_h, room = step_picture_h, text_h
        if worksheet_mode:
            before = tl.frame(position - 1)
            sheet.show_position(position - 1)
            sheet.canvas.show_frame(dataclasses.replace(before, active=None))
            # a worksheet never plays forward mode (the CLI refuses it)
            html, used = question(doc, step, k, n, w, half)  # type: ignore[arg-type]
            step_h, room = min(step_picture_h, half - used - GAP / 2), used
        else:
            sheet.show_position(position)
            html = sheet.write_up(position, STEP_PT, w, text_h, STEP_MIN_FIT)
        pages.picture(renderer, QRectF(0, top, w, step_h))
        text_top = top + step_h + GAP / 2
        pages.text(html, QRectF(0, text_top, w, max(room, text_h)))
        tick(1 + k)

    if worksheet_mode:
        _answer_key(pages, doc.graph, steps)  # type: ignore[arg-type]  # never forward mode
    # End page: the whole call as vT J and the leaves' .grad, with the final graph.
    pages.new_page()
    used = pages.text(
        renderer.card_html(ShotKind.END, CARD_PT, room=(w, h - picture_h - GAP)),
        QRectF(0, 0, w, h - picture_h - GAP),
    )
    sheet.show_position(tl.end)
    pages.picture(renderer, QRectF(0, used + GAP, w, picture_h))
    if doc.captured is not None:  # a captured model: where its gradient went
        write_flow_page(pages, doc, tl, CARD_PT)
    if renderer.options.train and doc.train is not None:  # the last act: the update
        write_train_page(pages, doc.graph, doc.train, renderer.options.train, CARD_PT)
    tick(total)


def question(
    doc: GraphDocument, step: PlayStep, k: int, n: int, width: float, half: float
) -> tuple[str, float]:
    """Step ``k``'s question fitted to a ``width`` column of a ``half``-page step by the
    rule every export's write-up follows (:func:`~gui.panels.chain_rule.fitted_html`): as
    written, else each given under its name (a long row wrapped, or not), else shrunk; and the
    height it takes. It may take room from the step's picture (down to
    :data:`QUESTION_PICTURE_SHARE` of the half page): xor_mlp's and attention's givens
    had run off the page's right edge, taller ones been shrunk below 10 pt."""
    room = half * (1 - QUESTION_PICTURE_SHARE) - GAP / 2

    def write(choice: Choice) -> str:
        fit, _compact, _elide, narrow = choice  # a question is never shortened: all given
        return worksheet.step_question_html(
            step, k, n, doc.graph, doc.results.forward,
            worksheet.WORKSHEET_PT * fit, narrow,
        )

    html = fitted_html(write, width, room, QUESTION_MIN_FIT)
    return html, _height(html, width)


def answer_key_pages(graph: object, steps: Sequence[PlayStep], width: float,
                     height: float) -> list[str]:
    """The answer key, a page each, fitted to a ``width`` x ``height`` page by the rule
    every export's write-up follows (:func:`~gui.panels.chain_rule.fitted_html`): as many
    steps' answers a page as fit it at :data:`CARD_PT`, a row too tall for a page alone
    shrunk until it fits. A fixed 24 rows a page had been shrunk whole to fit its page (30
    steps of 4×4 gradients under long names printed at about 4 pt)."""
    answers = [worksheet.answer_lines(step, k, graph) for k, step in enumerate(steps, 1)]
    heading = _height(worksheet.answer_key_html([], CARD_PT), width)

    def page(chunk: list[list[str]]) -> str:
        return fitted_html(lambda choice: worksheet.answer_key_html(chunk, CARD_PT * choice[0]),
                           width, height)

    pages: list[str] = []
    chunk: list[list[str]] = []
    used = heading
    for lines in answers:
        # its height: a page of it alone less the heading (a page of rows is their sum)
        row = _height(worksheet.answer_key_html([lines], CARD_PT), width) - heading
        if chunk and used + row > height:
            pages.append(page(chunk))
            chunk, used = [], heading
        chunk.append(lines)
        used += row
    if chunk:
        pages.append(page(chunk))
    return pages


def _answer_key(pages: _Pages, graph: object, steps: Sequence[PlayStep]) -> None:
    """Every step's answers, as many a page as fit (:func:`answer_key_pages`)."""
    for html in answer_key_pages(graph, steps, pages.width, pages.height):
        pages.new_page()
        pages.text(html, QRectF(0, 0, pages.width, pages.height))


def _height(html: str, width: float) -> float:
    """How tall ``html`` is laid out as a page draws it (no margin) ``width`` wide."""
    laid_out = QTextDocument(documentMargin=0)
    laid_out.setHtml(html)
    laid_out.setTextWidth(width)
    return laid_out.size().height()
