"""A text browser that draws its document once per change, not on every repaint.

The chain-rule write-up is nested tables (stacked fractions, bracketed matrices), and
drawing them costs as much as a millisecond or two. A player step draws the new text
once; a whole-window repaint right after (an expose, a dialog closing over the window)
would draw it all again although nothing in it changed. :class:`CachedTextBrowser`
keeps the drawn viewport as a pixmap and blits it while the document, its layout, the
scroll position and the viewport's size stay the same.

What the pixmap cannot show is left to QTextBrowser: while the browser has the focus
or a selection (the cursor, the highlighted text), it paints the usual way.

A document laid out and drawn ahead (the chain-rule panel's next step, in idle time)
and one laid out just now are shown from their drawing at once
(:meth:`CachedTextBrowser.show_laid_out`): ``QTextEdit.setDocument`` lays the whole
document out again (Qt sets its page size even when it is the same), most of a step's
cost in the panel. The browser takes the document a moment later, or as soon as anyone
asks for it (``document()``) or the user touches the text; until then its scroll bars
already say what the new document's will, and stepping on drops it untaken.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QPainter,
    QPaintEvent,
    QPixmap,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from ..qt_override import reported, reported_or

DIRECT = Qt.FindChildOption.FindDirectChildrenOnly
#: How long after a document is shown from its drawing the browser takes it (ms): well
#: after the step's frame is on screen, a loaded machine's too (taking it lays it out
#: again); a step sooner drops it untaken (playing fast, or a key held down).
ADOPT_MS = 200
#: Events after which a drawing no longer shows what the browser would, or that the user
#: aims at the text: a document shown from its drawing is taken first. (Not hiding or
#: closing: a browser being deleted receives those, and must not lay anything out.)
_TOUCHES = frozenset(getattr(QEvent.Type, name) for name in (
    "MouseButtonPress", "MouseButtonRelease", "MouseButtonDblClick", "MouseMove", "HoverMove",
    "Wheel", "KeyPress", "KeyRelease", "ShortcutOverride", "FocusIn", "ContextMenu", "InputMethod",
    "DragEnter", "DragMove", "Drop", "Resize", "FontChange", "PaletteChange", "StyleChange",
    "LayoutDirectionChange", "ToolTip", "WhatsThis",
))


class CachedTextBrowser(QTextBrowser):
    """A QTextBrowser whose viewport repaints blit the last drawing (see the module).

    ``draws`` counts how often the document was drawn into the pixmap (tests read it).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pixmap: QPixmap | None = None  # kept across drawings: same size, no new one
        self._drawn = False
        self.draws = 0
        # A document shown from its drawing, not taken yet: (document, pixmap).
        self._pending: tuple[QTextDocument, QPixmap] | None = None
        self._adopt_timer = QTimer(self, singleShot=True, interval=ADOPT_MS)
        self._adopt_timer.timeout.connect(self.adopt)
        self._watch(QTextBrowser.document(self))
        for bar in (self.verticalScrollBar(), self.horizontalScrollBar()):
            bar.valueChanged.connect(self.forget_drawing)
            bar.valueChanged.connect(self.adopt)  # a scroll shows more than the drawing
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
        self._drop_pending(keep=document)
        old = QTextBrowser.document(self)
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

    def drawing(self, document: QTextDocument) -> QPixmap:
        """``document`` (laid out at the viewport's width) drawn as this browser would
        show it scrolled to the top (for :meth:`show_laid_out`)."""
        viewport = self.viewport()
        ratio = viewport.devicePixelRatioF()
        pixmap = QPixmap(viewport.size() * ratio)
        pixmap.setDevicePixelRatio(ratio)
        self._draw(viewport, pixmap, document, 0, 0)
        return pixmap

    def show_laid_out(self, document: QTextDocument, pixmap: QPixmap | None = None) -> None:
        """Show ``document`` (laid out at the viewport's width), scrolled to the top:
        drawn now into a pixmap (or from ``pixmap``, drawn ahead by :meth:`drawing`),
        and taken as the document :data:`ADOPT_MS` later (see the module); one waiting
        is dropped, never laid out again. When a drawing cannot show it (another
        viewport size, or the vertical scroll bar would come or go: a narrower or wider
        viewport), it is taken at once (:meth:`setDocument`)."""
        viewport, bar = self.viewport(), self.verticalScrollBar()
        size, room = document.documentLayout().documentSize().toSize(), viewport.size()
        if ((pixmap is not None and pixmap.size() != room * viewport.devicePixelRatioF())
                or (self.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded
                    and (size.height() > room.height()) != bar.isVisibleTo(self))):
            self.setDocument(document)
            return
        kept = self._pending is not None and self._pending[1] is pixmap  # shown already
        self._drop_pending(keep=document)
        # The bars as QTextEdit will set them for this document (its _q_adjustScrollbars).
        for bar_, extent, page in ((self.horizontalScrollBar(), size.width(), room.width()),
                                   (bar, size.height(), room.height())):
            bar_.setValue(0)
            bar_.setRange(0, extent - page)
            bar_.setPageStep(page)
        self._pending = (document, pixmap if pixmap is not None else self.drawing(document))
        self._adopt_timer.start()
        if not kept:
            viewport.update()

    def replace_end(self, position: int, html: str) -> bool:
        """Replace the shown document's text from ``position`` (the start of a block
        after the first) to its end with ``html``, in place: the blocks before keep their
        layout, and only the new ones are laid out (a whole document set again parses
        and lays out every block). New text that starts below the part of the page in
        view changes none of its pixels: the drawing shown stays (of one waiting to be
        taken, or the browser's own, unless the edit scrolled it), and only the scroll
        bar changes; else the viewport is drawn again. False, nothing replaced, while
        text is selected (a new page drops it)."""
        document, pending = self.shown_document(), self._pending
        if pending is None and self._selecting():
            return False
        bars = (self.horizontalScrollBar().value(), self.verticalScrollBar().value())
        drawn = self._drawn
        cursor = QTextCursor(document)
        cursor.beginEditBlock()  # (first: a cursor moved outside one measures the line)
        cursor.setPosition(position - 1)  # the end of the block before: no empty one left
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.insertHtml(html)
        cursor.endEditBlock()
        top = document.documentLayout().blockBoundingRect(document.findBlock(position)).top()
        unseen = top >= bars[1] + self.viewport().height()
        if pending is not None:
            self.show_laid_out(document, pending[1] if unseen else None)
        elif unseen and drawn and bars == (self.horizontalScrollBar().value(),
                                           self.verticalScrollBar().value()):
            self._drawn = True  # (the edit's signals forgot it)
        return True

    def shown_document(self) -> QTextDocument:
        """The document shown: one waiting to be taken, else the browser's (without
        taking one waiting, as :meth:`document` does)."""
        return self._pending[0] if self._pending is not None else QTextBrowser.document(self)

    def text_settings(self) -> QTextDocument:
        """The document whose text settings (font, style sheet, margin) a document made
        for this browser copies, without taking one waiting (it has the same)."""
        return QTextBrowser.document(self)

    def _drop_pending(self, keep: QTextDocument | None = None) -> None:
        """Forget the document waiting to be taken (deleted if this browser's child and
        not ``keep``)."""
        pending, self._pending = self._pending, None
        self._adopt_timer.stop()
        if pending is not None and pending[0] is not keep and pending[0].parent() is self:
            pending[0].setParent(None)

    def adopt(self, *_args: object) -> None:
        """Take the document shown from its drawing now (nothing to do when none waits);
        its drawing is kept as this browser's while nothing moved."""
        pending = self._pending
        if pending is None:
            return
        document, pixmap = pending
        self.setDocument(document)
        scrolled = self.verticalScrollBar().value() or self.horizontalScrollBar().value()
        if not scrolled and pixmap.size() == self.viewport().size() * pixmap.devicePixelRatio():
            self._pixmap, self._drawn = pixmap, True

    @reported_or(bool)
    def event(self, event: QEvent) -> bool:
        self._touched(event)
        return super().event(event)

    @reported_or(bool)
    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt API
        self._touched(event)
        return super().viewportEvent(event)

    def _touched(self, event: QEvent) -> None:
        """One of :data:`_TOUCHES` takes a document shown from its drawing first."""
        # Qt delivers events while Python is still (or no longer) building this object.
        if getattr(self, "_pending", None) is not None and event.type() in _TOUCHES:
            self.adopt()

    def forget_drawing(self, *_args: object) -> None:
        """The next repaint draws the document again."""
        self._drawn = False

    @reported
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        self._drawn = False  # palette, style, font, enabled...: draw as they now say
        super().changeEvent(event)

    def _selecting(self) -> bool:
        """Text is selected (in the document the text control holds)."""
        return QTextBrowser.textCursor(self).hasSelection()

    @reported
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        viewport = self.viewport()
        if self._pending is not None:  # (nothing selected in it yet: touching it takes it)
            _blit(viewport, event, self._pending[1])
            return
        if self.hasFocus() or self._selecting():
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
            self._draw(viewport, pixmap, self.document(), self.horizontalScrollBar().value(),
                       self.verticalScrollBar().value())
            self._drawn = True
        _blit(viewport, event, pixmap)

    def _draw(self, viewport: QWidget, pixmap: QPixmap, document: QTextDocument, dx: int,
              dy: int) -> None:
        """The part of ``document`` the viewport shows scrolled by ``dx``, ``dy``, as
        QTextBrowser draws it (no cursor, no selection), on the viewport's paper: an
        opaque pixmap blits as a plain copy."""
        self.draws += 1
        pixmap.fill(viewport.palette().color(viewport.backgroundRole()))
        visible = QRectF(dx, dy, viewport.width(), viewport.height())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = self.palette()
        context.clip = visible
        painter = QPainter(pixmap)
        painter.translate(-dx, -dy)
        painter.setClipRect(visible)
        document.documentLayout().draw(painter, context)
        painter.end()


def _blit(viewport: QWidget, event: QPaintEvent, pixmap: QPixmap) -> None:
    """Copy what ``event`` repaints of ``pixmap`` (a drawing of the viewport) onto it."""
    painter = QPainter(viewport)
    painter.setClipRegion(event.region())
    painter.drawPixmap(0, 0, pixmap)
    painter.end()


#: QTextBrowser's methods that read or change the document, its cursor or selection:
#: called from Python, each takes a document waiting to be taken first (the user's own
#: gestures arrive as events, which do).
_ON_THE_DOCUMENT = (
    "document", "toPlainText", "toHtml", "toMarkdown", "textCursor", "setTextCursor",
    "selectAll", "copy", "find", "moveCursor", "clear", "setHtml", "setPlainText",
    "setMarkdown", "setText", "append", "insertHtml", "insertPlainText", "scrollToAnchor",
    "setSource", "ensureCursorVisible", "print_",
)


def _adopting(name: str) -> Callable[..., object]:
    base = getattr(QTextBrowser, name)

    def method(self: CachedTextBrowser, *args: object, **kwargs: object) -> object:
        self.adopt()
        return base(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``QTextBrowser.{name}``, on the document shown (see the module)."
    return method


for _name in _ON_THE_DOCUMENT:
    setattr(CachedTextBrowser, _name, _adopting(_name))
