"""One off-screen sheet that paints any frame of playback: built once, moved step by step.

The image is made by the very widgets the window shows (a CanvasView wired to a
Player with :func:`gui.player.connect_canvas`, and the ChainRulePanel), laid out
off screen at the requested size and painted with ``QWidget.render``: an exported
frame cannot disagree with the screen. A whole lesson reuses one sheet and only
seeks its player, so a thousand frames cost a thousand paints, not a thousand
window builds. SVG goes through QtSvg's QSvgGenerator, so the canvas and the
formulas stay vector graphics.

Views: ``slide`` is a status line over the canvas beside the chain-rule text (or over
it, when the graph is wide: see :meth:`FrameSheet.arrange`); ``canvas`` is the canvas
alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QApplication, QBoxLayout, QLabel, QVBoxLayout, QWidget

from engine import APP_NAME, app_signature
from engine.atomic_write import write_atomic
from engine.errors import BIDI_CONTROLS, GraphError, visible

from .. import application
from ..canvas.group_frames import GroupFrames
from ..canvas.view import CanvasView
from ..document import GraphDocument
from ..layouts import fill
from ..model.camera import CameraTarget, interpolate
from ..model.chain_rule import chain_rule_html
from ..model.timeline import Direction
from ..panels.chain_rule import ChainRulePanel, Choice, fitted_html
from ..player import Player, connect_canvas
from ..theme import THEME, application_palette
from .options import DEFAULT_SIZE, FRAME_SUFFIXES, ExportError, View

#: Where the pulse sits on the active edge in a still image.
STILL_PULSE = 0.5
#: Share of the width (landscape) or height (portrait) given to the chain-rule panel.
PANEL_SHARE = 0.38
#: A landscape slide puts the chain-rule text under the canvas when the camera then shows
#: the middle step this much larger (a wide graph beside the text fills the canvas's
#: width and leaves its lower part empty)...
STACK_GAIN = 1.25
#: ...and the step's text fits in this share of the height under it.
STACKED_PANEL_SHARE = 0.36
#: An animation's arrangement is chosen from at most this many of its positions.
ARRANGE_SAMPLES = 60


def ensure_app() -> QApplication:
    """The running QApplication, or an offscreen one for a headless export (named as the
    app's own, through ``gui.application``)."""
    if QApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return application.ensure_app([])


class FrameSheet(QWidget):
    """The canvas and the chain-rule panel side by side (or stacked), with a status line.

    Shown off screen (``WA_DontShowOnScreen``) so every layout is real; call
    :meth:`show_position` then :meth:`image` (or :meth:`paint_into`) per frame.
    """

    def __init__(
        self,
        doc: GraphDocument,
        size: tuple[int, int] = DEFAULT_SIZE,
        view: View = View.SLIDE,
        direction: Direction = Direction.REVERSE,
        tangents: Mapping[str, Any] | None = None,
    ) -> None:
        ensure_app()  # before the QWidget, which needs it
        super().__init__()
        self.doc = doc
        self.view = view
        self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.setAutoFillBackground(True)
        pal = application_palette()  # the export's theme, not the app's or the system's
        pal.setColor(self.backgroundRole(), THEME.paper)
        self.setPalette(pal)
        w, h = size
        self.player = Player(doc, self)
        try:  # forward mode plays its steps like the backward pass's
            self.player.set_tangents(tangents or {})
            self.player.set_direction(direction)
        except GraphError as exc:
            raise ExportError(f"--direction forward: {exc}") from None
        self.canvas = CanvasView(doc)
        # Every step framed at once, as presentation mode frames it (gui.model.camera).
        self.canvas.animations_enabled = False
        self.canvas.follow_step = True
        self._came_from: CameraTarget | None = None  # the last held step's view
        connect_canvas(self.player, self.canvas)
        scene = self.canvas.canvas  # groups (a captured model's modules) look as on screen
        self.group_frames = GroupFrames(scene, doc, scene.nodes, interactive=False)
        self.group_frames.refresh()
        scene.route_pending()  # a picture shows every edge's detour (no idle time here)
        self.player.frameChanged.connect(self.group_frames.show_frame)
        self.panel = ChainRulePanel(self.player)
        self.panel.fit_whole = True  # a picture does not scroll: the write-up fits whole
        self.panel.interactive = False  # nor has tabs to look in or boxes to double-click
        self.panel.browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.panel.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.header = QLabel(self, textFormat=Qt.TextFormat.PlainText)
        self.header.setFont(THEME.font(12, bold=True))
        self.header.setContentsMargins(12, 6, 12, 6)
        self.header.setWordWrap(True)  # a long title must not widen the image
        self.header.setStyleSheet(f"background:{THEME.header.name()}; color:{THEME.text.name()};")

        self.landscape = w >= h
        self.body = body = QBoxLayout(
            QBoxLayout.Direction.LeftToRight if self.landscape else QBoxLayout.Direction.TopToBottom
        )
        shares = (int(round(100 * (1 - PANEL_SHARE))), int(round(100 * PANEL_SHARE)))
        fill(body, (self.canvas, shares[0]), (self.panel, shares[1]), margins=(0, 0, 0, 0))
        body.setSpacing(1)
        self.stacked = not self.landscape
        outer = fill(QVBoxLayout(self), self.header, (body, 1), margins=(0, 0, 0, 0))
        outer.setSpacing(0)
        if view == View.CANVAS:
            self.header.hide()
            self.panel.hide()
        self.setFixedSize(w, h)
        self.show()
        outer.activate()
        QApplication.processEvents()
        self._may_stack = (
            view == View.SLIDE and self.landscape and self._stacking_gain() >= STACK_GAIN
        )
        self._fixed: bool | None = None  # one arrangement for a whole sequence of frames
        self.show_position(self.player.timeline.end)

    @property
    def title(self) -> str:
        """The document's title as every export shows it (the header, the SVG's and the
        PDF's title), a bidirectional control written out."""
        return visible(self.doc.title or self.doc.display_name)

    def show_position(self, position: int, pulse: float = STILL_PULSE, glide: float = 1.0) -> None:
        """Put the sheet at timeline ``position`` with the pulse at ``pulse`` (0..1).

        ``glide`` below 1 is a transition: the camera is that far on its way from the
        last step shown with ``glide`` 1 to this one.
        """
        self.player.seek(position)
        self.header.setText(f"{self.title}   ·   {self.player.status_text()}")
        self.layout().activate()  # type: ignore[union-attr]  # a status wrapping to two lines gets its height now
        if self._may_stack and self._fixed is None:
            self.arrange(self._text_fits_under())
        self._aim(glide)
        self.canvas.set_pulse_progress(pulse)

    def _aim(self, glide: float) -> None:
        """Look at the shown step, ``glide`` of the way from the last held step's view
        (a transition glides in step with the travelling pulse); a held step's view is
        where the next transition starts."""
        target, came_from = self.canvas.camera_target(), self._came_from
        if glide >= 1.0:
            self._came_from = target
        if target is None:
            return
        if came_from is not None and glide < 1.0:
            self.canvas.look_at(*interpolate(came_from, target, glide))
        else:
            self.canvas.look_at(target.center, target.zoom)

    def write_up(
        self, position: int, pt: float, width: float, height: float | None, floor: float = 1.0
    ) -> str:
        """The chain-rule write-up of ``position`` at ``pt`` points, as an export fits it
        in a column ``width`` pixels wide and ``height`` high (None: a page that scrolls
        down): the PDF handout's and the web page's text beside a step, fitted by the
        rule this sheet's own panel follows (:func:`gui.panels.chain_rule.fit_export`;
        ``floor``: the least share of ``pt`` a step keeps its numbers at)."""
        tl = self.player.timeline
        frame, e2e = tl.frame(position), self.player.end_to_end

        def write(choice: Choice) -> str:
            fit, compact, elide, narrow = choice
            return chain_rule_html(self.doc.graph, tl, frame, e2e, pt * fit, compact, elide,
                                   interactive=False, narrow=narrow)  # a page has no tabs

        return fitted_html(write, width, height, floor)

    def arrange(self, stacked: bool) -> None:
        """Chain-rule text beside the canvas, or (``stacked``) under it, full width."""
        if stacked == self.stacked:
            return
        self.stacked = stacked
        share = STACKED_PANEL_SHARE if stacked else PANEL_SHARE
        self.body.setDirection(
            QBoxLayout.Direction.TopToBottom if stacked else QBoxLayout.Direction.LeftToRight
        )
        self.body.setStretch(0, int(round(100 * (1 - share))))
        self.body.setStretch(1, int(round(100 * share)))
        self.layout().activate()  # type: ignore[union-attr]
        QApplication.processEvents()

    def keep_arrangement(self, positions: Sequence[int]) -> None:
        """Frames of one animation share an arrangement (a layout switch mid-lesson would
        jump): the text goes under the canvas only if it fits there at every position
        (at most :data:`ARRANGE_SAMPLES` of them are checked, evenly spread, the last
        always)."""
        stacked = False
        if self._may_stack:
            kept = sorted(set(positions))
            if len(kept) > ARRANGE_SAMPLES:
                step = len(kept) / ARRANGE_SAMPLES
                kept = [kept[int(i * step)] for i in range(ARRANGE_SAMPLES - 1)] + [kept[-1]]
            stacked = True
            for position in kept:
                self.player.seek(position)
                if not self._text_fits_under():
                    stacked = False
                    break
        self._fixed = stacked
        self.arrange(stacked)

    def _body_height(self) -> int:
        return self.height() - (self.header.height() if self.header.isVisible() else 0)

    def _stacking_gain(self) -> float:
        """How much larger the camera shows the middle step with the text under the
        canvas than beside it (the sheet starts side by side); 1 when it would show
        fewer boxes (a big graph, where it follows the step)."""
        tl = self.player.timeline
        self.player.seek(tl.position_of_step((len(tl.steps) + 1) // 2) if tl.steps else tl.end)
        under = (self.width(), self._body_height() * (1 - STACKED_PANEL_SHARE) - 1)
        beside = self.canvas.camera_target()
        stacked = self.canvas.camera_target(viewport=under)
        if beside is None or stacked is None or len(stacked.nodes) < len(beside.nodes):
            return 1.0
        return stacked.zoom / beside.zoom

    def _text_fits_under(self) -> bool:
        """The shown step's chain-rule text fits under the canvas, full size, full width."""
        browser = self.panel.browser
        text = QTextDocument()
        text.setDefaultFont(browser.font())
        text.setDocumentMargin(browser.document().documentMargin())
        text.setHtml(self.panel.html())
        text.setTextWidth(self.width())
        return text.size().height() <= self._body_height() * STACKED_PANEL_SHARE - 2

    def paint_into(self, painter: QPainter) -> None:
        """Render the sheet with the active ``painter``, then end it (also on an error)."""
        try:
            self.render(painter, QPoint(0, 0))
        finally:
            painter.end()

    def image(self) -> QImage:
        """The sheet as it stands, as an RGB32 image of the sheet's size."""
        return painted_image((self.width(), self.height()), self.paint_into)

    def svg(self) -> bytes:
        """The sheet as it stands, as an SVG document (vector canvas and text)."""
        return svg_document(
            (self.width(), self.height()), self.title, self.player.status_text(), self.paint_into
        )


def painted_image(size: tuple[int, int], paint: Callable[[QPainter], None]) -> QImage:
    """What ``paint`` draws on a ``size`` picture of the theme's paper, as an RGB32 image
    (antialiased shapes and text); ``paint`` ends the painter."""
    image = QImage(*size, QImage.Format.Format_RGB32)
    image.fill(THEME.paper)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    paint(painter)
    return image


def paint_html(painter: QPainter, html: str, rect: QRectF) -> float:
    """Lay Qt rich text out in ``rect`` (top-left aligned, wrapped to its width); the
    height it takes."""
    text = QTextDocument()
    text.setHtml(html)
    text.setTextWidth(rect.width())
    painter.save()
    painter.translate(rect.topLeft())
    text.drawContents(painter, QRectF(0, 0, rect.width(), rect.height()))
    painter.restore()
    return text.size().height()


def svg_document(
    size: tuple[int, int], title: str, status: str, paint: Callable[[QPainter], None]
) -> bytes:
    """What ``paint`` draws on a ``size`` picture, as an SVG document; ``paint`` ends the
    painter."""
    from PySide6.QtSvg import QSvgGenerator  # lazy: only an SVG export loads QtSvg

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    qsize = QSize(*size)
    gen = QSvgGenerator()
    gen.setOutputDevice(buffer)
    gen.setSize(qsize)
    gen.setViewBox(QRect(QPoint(0, 0), qsize))
    gen.setResolution(96)  # CSS pixels: a browser shows the SVG at WxH
    gen.setTitle(title)
    gen.setDescription(f"{APP_NAME}: {status}")
    painter = QPainter()
    if not painter.begin(gen):
        raise ExportError("cannot start the SVG writer")
    paint(painter)
    buffer.close()
    return xml_safe(bytes(data.data()))


#: Characters XML 1.0 forbids (controls but tab, newline, return; U+FFFE, U+FFFF): a
#: title or id holding one made the SVG not well-formed. Control bytes never occur
#: inside a UTF-8 sequence, so the bytes are searched directly.
_NOT_XML = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]")
#: The bidirectional controls' UTF-8 sequences (a group's or the page's title may hold one).
_BIDI = re.compile(b"|".join(re.escape(ch.encode()) for ch in sorted(BIDI_CONTROLS)))


def xml_safe(svg: bytes) -> bytes:
    """``svg`` with every character XML forbids shown as U+FFFD and every bidirectional
    control written out (:func:`engine.errors.visible`) where a title held it
    (QSvgGenerator writes them as they are)."""
    svg = _BIDI.sub(lambda m: visible(m.group().decode()).encode(), svg)
    return _NOT_XML.sub("\ufffd".encode(), svg)


@contextmanager
def frame_sheet(
    doc: GraphDocument,
    size: tuple[int, int] = DEFAULT_SIZE,
    view: View = View.SLIDE,
    direction: Direction = Direction.REVERSE,
    tangents: Mapping[str, Any] | None = None,
) -> Iterator[FrameSheet]:
    """A sheet for a ``with`` block, thrown away after it (needs a QApplication, made if
    missing); ``direction`` and ``tangents`` as the player's (forward mode's steps)."""
    sheet = FrameSheet(doc, size, view, direction, tangents)
    try:
        yield sheet
    finally:
        sheet.close()
        sheet.deleteLater()


def render_frame(
    doc: GraphDocument,
    position: int | None,
    size: tuple[int, int] = DEFAULT_SIZE,
    view: View = View.SLIDE,
    direction: Direction = Direction.REVERSE,
    tangents: Mapping[str, Any] | None = None,
) -> QImage:
    """The frame at timeline ``position`` (None: backward done, everything live) as an image."""
    with frame_sheet(doc, size, view, direction, tangents) as sheet:
        sheet.show_position(sheet.player.timeline.end if position is None else position)
        return sheet.image()


def save_frame(
    doc: GraphDocument,
    position: int | None,
    path: str | os.PathLike[str],
    size: tuple[int, int] = DEFAULT_SIZE,
    view: View = View.SLIDE,
    direction: Direction = Direction.REVERSE,
    tangents: Mapping[str, Any] | None = None,
) -> None:
    """Save the frame at ``position`` (of the ``direction``'s timeline) as PNG or SVG
    (chosen by the suffix).

    The image is encoded in memory and written with ``write_atomic``, which checks
    every write: a full disk or a read-only folder is an ExportError and leaves no
    partial file. Raises ExportError for an unknown suffix too.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in FRAME_SUFFIXES:
        raise ExportError(f"cannot export to {suffix or 'a file without suffix'}: use .png or .svg")
    with frame_sheet(doc, size, view, direction, tangents) as sheet:
        sheet.show_position(sheet.player.timeline.end if position is None else position)
        data = sheet.svg() if suffix == ".svg" else png_bytes(sheet.image())
    if not data:
        raise ExportError(f"cannot write {p.name}: nothing was drawn")
    try:
        write_atomic(p, data)
    except OSError as exc:
        raise ExportError(f"cannot write {p}: {exc.strerror or exc}") from None


def png_bytes(image: QImage) -> bytes:
    """``image`` encoded as PNG, in memory, naming the app in its ``Software`` text chunk."""
    image.setText("Software", app_signature())
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # a QIODevice and format, as Qt takes
    buffer.close()
    return bytes(data.data())
