"""Paint the shots of a lesson: cards as rich text, frames with the canvas's own painting.

One :class:`LessonRenderer` holds one off-screen :class:`FrameSheet` for the whole
lesson; each shot is painted on demand and dropped by the caller, so memory stays
flat however many frames there are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QTextDocument

from engine import tracefile
from engine.captured import CapturedTrace
from engine.fileformat import GraphFile, load

from ..document import GraphDocument
from ..model import lesson
from ..model.lesson import Shot, ShotKind
from ..theme import THEME
from .frame_sheet import FrameSheet, ensure_app
from .options import LessonOptions

#: Card text size at 720 pixels of height (points); scales with the image.
CARD_PT = 17.0
CARD_MARGIN = 0.07  # of the width, each side


def load_document(file: str | Path) -> GraphDocument:
    """A document for a graph file or a captured ``.bptrace``, as the app would open it
    (raises FileFormatError)."""
    if str(file).lower().endswith(tracefile.SUFFIX):
        return trace_document(tracefile.load(file), Path(file))
    return graph_document(load(file, partial=True), Path(file))


def graph_document(gf: GraphFile, path: Path | None = None) -> GraphDocument:
    """A document for a loaded graph file, headless (as :func:`trace_document`)."""
    ensure_app()
    doc = GraphDocument()
    doc.load(gf, path)
    return doc


def trace_document(trace: CapturedTrace, path: Path | None = None) -> GraphDocument:
    """A read-only document showing a captured pass, headless: hand it to
    :func:`gui.export.writers.write_lesson` (any format) or :func:`save_frame`."""
    ensure_app()
    doc = GraphDocument()
    doc.load_trace(trace, path)
    return doc


class LessonRenderer:
    """Paints the shots of one document's lesson at one size."""

    def __init__(self, doc: GraphDocument, options: LessonOptions) -> None:
        self.doc = doc
        self.options = options
        self.sheet = FrameSheet(doc, options.size, options.view)
        tl = self.sheet.player.timeline
        self.shots = lesson.plan(tl.forward_length, tl.end, options.timing, options.forward)
        self.sheet.keep_arrangement(
            [shot.position for shot in self.shots if shot.kind is ShotKind.FRAME]
        )

    @property
    def size(self) -> tuple[int, int]:
        return self.options.size

    def close(self) -> None:
        self.sheet.close()
        self.sheet.deleteLater()

    # ------------------------------------------------------------------ cards

    def card_html(self, kind: ShotKind, base_pt: float, notes: bool = True) -> str:
        """The title or end card's text (Qt rich text); ``notes``: the title card shows
        the document's description."""
        doc, trace = self.doc, self.doc.results.trace
        if kind is ShotKind.TITLE:
            call = None if trace is None else lesson.backward_call(trace.output, trace.gradient)
            inputs = lesson.input_lines(doc.graph, doc.results.forward.values)
            description = doc.description if notes else ""
            return lesson.title_html(self.sheet.title, description, call, inputs, base_pt)
        e2e = self.sheet.player.end_to_end()
        grads = None if trace is None else trace.leaf_grads
        return lesson.end_html(e2e, grads, base_pt)

    def paint_card(self, kind: ShotKind, painter: QPainter, rect: QRectF, base_pt: float) -> None:
        """Lay the card's text out in ``rect`` (top-left aligned, wrapped to its width)."""
        text = QTextDocument()
        text.setHtml(self.card_html(kind, base_pt))
        text.setTextWidth(rect.width())
        painter.save()
        painter.translate(rect.topLeft())
        text.drawContents(painter, QRectF(0, 0, rect.width(), rect.height()))
        painter.restore()

    # ------------------------------------------------------------------ frames

    def image(self, shot: Shot) -> QImage:
        """The picture of ``shot`` at the lesson's size (RGB32)."""
        if shot.kind is ShotKind.FRAME:
            self.sheet.show_position(shot.position, shot.pulse, 1.0 if shot.held else shot.pulse)
            return self.sheet.image()
        w, h = self.size
        image = QImage(w, h, QImage.Format.Format_RGB32)
        image.fill(THEME.paper)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        m = CARD_MARGIN * w
        self.paint_card(
            shot.kind, painter, QRectF(m, m * 0.8, w - 2 * m, h - 1.6 * m), CARD_PT * h / 720.0
        )
        painter.end()
        return image

    def images(self, shots: list[Shot] | None = None) -> Iterator[tuple[Shot, QImage]]:
        """Each shot with its picture, one at a time (the caller drops each)."""
        for shot in self.shots if shots is None else shots:
            yield shot, self.image(shot)


@contextmanager
def lesson_renderer(doc: GraphDocument, options: LessonOptions) -> Iterator[LessonRenderer]:
    """A renderer for a ``with`` block; its off-screen widgets go away after it."""
    renderer = LessonRenderer(doc, options)
    try:
        yield renderer
    finally:
        renderer.close()
