"""A text browser that draws its document once per change, not on every repaint.

The chain-rule write-up is nested tables (stacked fractions, bracketed matrices), and
drawing them costs as much as a millisecond or two. A player step draws the new text
once; a whole-window repaint right after (an expose, a dialog closing over the window)
would draw it all again although nothing in it changed. :class:`CachedTextBrowser`
keeps the drawn viewport as a pixmap and blits it while the document, its layout, the
scroll position and the viewport's size stay the same.

What the pixmap cannot show is left to QTextBrowser: while the browser has the focus
or a selection (the cursor, the highlighted text), it paints the usual way.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QPainter,
    QPaintEvent,
    QPixmap,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

DIRECT = Qt.FindChildOption.FindDirectChildrenOnly


class CachedTextBrowser(QTextBrowser):
    """A QTextBrowser whose viewport repaints blit the last drawing (see the module).

    ``draws`` counts how often the document was drawn into the pixmap (tests read it).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmap: QPixmap | None = None  # kept across drawings: same size, no new one
        self._drawn = False
        self.draws = 0
        self._watch(self.document())
        for bar in (self.verticalScrollBar(), self.horizontalScrollBar()):
            bar.valueChanged.connect(self.forget_drawing)
        self.selectionChanged.connect(self.forget_drawing)
        # The viewport paints every pixel (the pixmap is opaque): the widgets behind it
        # need not paint first whenever the text changes.
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)

    def _watch(self, doc: QTextDocument) -> None:
        """Forget the drawing when ``doc`` (the document shown) or its layout changes."""
        doc.contentsChanged.connect(self.forget_drawing)
        doc.documentLayout().update.connect(self.forget_drawing)
        doc.documentLayout().documentSizeChanged.connect(self.forget_drawing)

    def setDocument(self, document: QTextDocument) -> None:  # noqa: N802 - Qt API
        """Show ``document`` instead (drawn on the next paint); the one shown before is
        deleted if it was this browser's child (as the chain-rule panel's are)."""
        old = self.document()
        if document is old:
            return
        for signal in (old.contentsChanged, old.documentLayout().update,
                       old.documentLayout().documentSizeChanged):
            signal.disconnect(self.forget_drawing)
        # (Qt deletes the text control's own document.) Asked of the children, not with
        # old.parent(): that parent is a class PySide6 does not wrap, and resolving it
        # initialises every wrapped QObject class (~100 enums, 25 ms at first paint).
        owned = old in self.findChildren(QTextDocument, options=DIRECT)
        super().setDocument(document)
        self._watch(document)
        self.forget_drawing()
        if owned:
            old.setParent(None)  # Python's now: deleted as this returns

    def forget_drawing(self, *_args: object) -> None:
        """The next repaint draws the document again."""
        self._drawn = False

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        self._drawn = False  # palette, style, font, enabled...: draw as they now say
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        viewport = self.viewport()
        if self.hasFocus() or self.textCursor().hasSelection():
            self._drawn = False
            painter = QPainter(viewport)  # the paper, as Qt fills a see-through viewport
            painter.fillRect(event.rect(), viewport.palette().color(viewport.backgroundRole()))
            painter.end()
            super().paintEvent(event)
            return
        ratio = viewport.devicePixelRatioF()
        pixmap = self._pixmap
        if pixmap is None or pixmap.size() != viewport.size() * ratio:
            pixmap = self._pixmap = QPixmap(viewport.size() * ratio)
            pixmap.setDevicePixelRatio(ratio)
            self._drawn = False
        if not self._drawn:
            self._draw(viewport, pixmap)
        painter = QPainter(viewport)
        painter.setClipRegion(event.region())
        painter.drawPixmap(0, 0, pixmap)
        painter.end()

    def _draw(self, viewport: QWidget, pixmap: QPixmap) -> None:
        """The visible part of the document as QTextBrowser draws it (no cursor, no
        selection), on the viewport's paper: an opaque pixmap blits as a plain copy."""
        self.draws += 1
        pixmap.fill(viewport.palette().color(viewport.backgroundRole()))
        dx, dy = self.horizontalScrollBar().value(), self.verticalScrollBar().value()
        visible = QRectF(dx, dy, viewport.width(), viewport.height())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = self.palette()
        context.clip = visible
        painter = QPainter(pixmap)
        painter.translate(-dx, -dy)
        painter.setClipRect(visible)
        self.document().documentLayout().draw(painter, context)
        painter.end()
        self._drawn = True
