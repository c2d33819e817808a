"""Paint the shots of a lesson: cards as rich text, frames with the canvas's own painting.

One :class:`LessonRenderer` holds one off-screen :class:`FrameSheet` for the whole
lesson; each shot is painted on demand and dropped by the caller, so memory stays
flat however many frames there are. The update act (``--train N``) is painted on a
second sheet showing a copy of the document after its first training step, as the
Train tab leaves it (the update on each parameter's box, the rule in the chain-rule
text): the exported document itself never changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from engine import tracefile
from engine.captured import CapturedTrace
from engine.fileformat import GraphFile, load

from ..canvas.train_marks import TrainMarks
from ..document import GraphDocument
from ..model import lesson
from ..model.forward_view import tangent_lines
from ..model.lesson import Shot, ShotKind
from ..model.timeline import Direction
from ..model.train_view import Rehearsal, TrainState, propose, rehearse, start
from ..model.update_act import DONE, UpdateFrame
from ..panels.chain_rule import Choice, fitted_html
from .frame_sheet import FrameSheet, ensure_app, paint_html, painted_image
from .options import LessonOptions
from .train_page import paint_loss_card

#: Card text size at 720 pixels of height (points); scales with the image.
CARD_PT = 17.0
CARD_MARGIN = 0.07  # of the width, each side
#: The update frame's status line (the optimizer's name filled in).
UPDATE_STATUS = "then the update: training step 1 ({})"
#: The margin (pixels) paint_html's text keeps inside its rect: Qt's default.
PAINT_MARGIN = 4.0


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
        self.sheet = FrameSheet(
            doc, options.size, options.view, options.direction, options.tangents
        )
        tl = self.sheet.player.timeline
        train = 0
        self._first: TrainState | None = None  # the first training step (the update act)
        if options.train and doc.train is not None:
            self._first = propose(doc.graph, doc.train, start(doc.graph, doc.train))
            assert self._first.last is not None
            train = len(self._first.last.updates)  # the act's pulse visits each
        self.shots = lesson.plan(tl.forward_length, tl.end, options.timing, options.forward, train)
        self.sheet.keep_arrangement(
            [shot.position for shot in self.shots if shot.kind is ShotKind.FRAME]
        )
        self._trained: tuple[GraphDocument, FrameSheet, TrainMarks] | None = None

    @property
    def size(self) -> tuple[int, int]:
        return self.options.size

    def close(self) -> None:
        for sheet in (self.sheet, *(() if self._trained is None else (self._trained[1],))):
            sheet.close()
            sheet.deleteLater()

    # ------------------------------------------------------------------ the update act

    @cached_property
    def rehearsal(self) -> Rehearsal:
        """The ``--train N`` run on a copy of the graph (the loss card's numbers)."""
        assert self.doc.train is not None
        return rehearse(self.doc.graph, self.doc.train, self.options.train)

    def update_sheet(self, frame: UpdateFrame = DONE) -> FrameSheet:
        """A sheet at the end of the backward pass with the first training step's update
        on each parameter's box and, under the chain-rule text, the rule with its numbers,
        at ``frame`` of the update act. The boxes keep the gradients the lesson just
        showed (the update's inputs); a parameter's value changes when the act's pulse
        reaches it, to the value its update line ends with."""
        if self._trained is None:
            spec = self.doc.train
            assert spec is not None
            copy = graph_document(replace(self.doc.to_file(), graph=self.doc.graph.copy()),
                                  self.doc.path)
            copy.set_training({}, self._first)
            sheet = FrameSheet(copy, self.size, self.options.view)
            scene = sheet.canvas.canvas
            marks = TrainMarks(scene, copy, scene.nodes)
            marks.refresh()
            sheet.show_position(sheet.player.timeline.end)
            sheet.header.setText(f"{sheet.title}   ·   {UPDATE_STATUS.format(spec.optimizer)}")
            self._trained = (copy, sheet, marks)
        self._trained[2].show_frame(frame)
        return self._trained[1]

    # ------------------------------------------------------------------ cards

    def card_html(
        self, kind: ShotKind, base_pt: float, notes: bool = True,
        room: tuple[float, float | None] | None = None,
    ) -> str:
        """The title or end card's text (Qt rich text); ``notes``: the title card shows
        the document's description; ``room``: the end card's column (width, and height or
        None), which it is fitted to as a step's write-up is (:func:`fitted_html`: at
        1280x720 xor_mlp's 16-number vᵀJ row ran off the card's right edge)."""
        doc, trace = self.doc, self.doc.results.trace
        if kind is ShotKind.TITLE:
            call = None if trace is None else lesson.backward_call(trace.output, trace.gradient)
            inputs = lesson.input_lines(doc.graph, doc.results.forward.values)
            description = doc.description if notes else ""
            return lesson.title_html(self.sheet.title, description, call, inputs, base_pt)
        tl = self.sheet.player.timeline
        if tl.direction is Direction.FORWARD:
            lines = tangent_lines(tl.frame(tl.end), tl.forward_order)
            return lesson.forward_end_html(lines, base_pt)
        e2e = self.sheet.player.end_to_end()
        grads = None if trace is None else trace.leaf_grads
        if room is None:
            return lesson.end_html(e2e, grads, base_pt)

        def write(choice: Choice) -> str:
            return lesson.end_html(e2e, grads, base_pt * choice[0], elide=choice[2])

        return fitted_html(write, *room)

    # ------------------------------------------------------------------ frames

    def image(self, shot: Shot) -> QImage:
        """The picture of ``shot`` at the lesson's size (RGB32)."""
        if shot.kind is ShotKind.FRAME:
            self.sheet.show_position(shot.position, shot.pulse, 1.0 if shot.held else shot.pulse)
            return self.sheet.image()
        if shot.kind is ShotKind.UPDATE:
            frame = DONE if shot.held else UpdateFrame(shot.position, shot.pulse)
            return self.update_sheet(frame).image()
        return painted_image(self.size, lambda painter: self.paint_whole_card(shot.kind, painter))

    def paint_whole_card(self, kind: ShotKind, painter: QPainter) -> None:
        """A card (title, end, or the loss curve) filling the picture, then end ``painter``."""
        w, h = self.size
        m = CARD_MARGIN * w
        rect, pt = QRectF(m, m * 0.8, w - 2 * m, h - 1.6 * m), CARD_PT * h / 720.0
        try:
            if kind is ShotKind.LOSS:
                assert self.doc.train is not None
                paint_loss_card(painter, rect, self.doc.train, self.rehearsal, pt)
            else:
                m = PAINT_MARGIN  # the text's own, inside the rect
                room = (rect.width() - 2 * m, rect.height() - 2 * m)
                paint_html(painter, self.card_html(kind, pt, room=room), rect)
        finally:
            painter.end()

    def images(self) -> Iterator[tuple[Shot, QImage]]:
        """Each shot with its picture, one at a time (the caller drops each)."""
        for shot in self.shots:
            yield shot, self.image(shot)


@contextmanager
def lesson_renderer(doc: GraphDocument, options: LessonOptions) -> Iterator[LessonRenderer]:
    """A renderer for a ``with`` block; its off-screen widgets go away after it."""
    renderer = LessonRenderer(doc, options)
    try:
        yield renderer
    finally:
        renderer.close()
