"""Keep a widget's last painting and show it again when nothing in the widget changed.

A whole-window repaint (an expose, a dialog closing over the window) asks every widget
to paint, although most show what they showed before. Some cost a lot to paint
again: a dock's title (the Fusion style loads its button icons on every paint), the
toolbar's gradient. :class:`PaintCache` paints such a widget once into a pixmap and
blits it while nothing changed; a widget whose drawing it can call itself (an
inspector section's frame) is drawn straight into the pixmap, once per look. (The
chain-rule text changes on every step, so it draws straight into its pixmap instead:
``gui.panels.text_cache``.)

"Changed" is judged conservatively: any event the widget receives other than a paint
(resize, mouse, keys, focus, palette, font, title, enable, show, style...) drops the
pixmap, and so does each signal passed as ``changed`` (the state a widget repaints for
without an event: a slider's value, a text document's layout, a scroll position).
Only children are left out of the pixmap: each paints (or blits) on its own.

Coarser and cheaper still, :func:`painted_alone`: Qt leaves a widget that fills its own
background, and everything in it, out of a repaint of its window; they keep the pixels
they painted last until they themselves ask to be painted again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, SignalInstance
from PySide6.QtGui import QColor, QPainter, QPixmap, QRegion
from PySide6.QtWidgets import QStylePainter, QWidget

from .qt_override import reported_or

_PAINT = QEvent.Type.Paint
_UPDATE = QEvent.Type.UpdateRequest
#: Events that change nothing the widget itself shows: Qt's bookkeeping around painting,
#: and children coming, going and being laid out (they paint themselves; the toolbar
#: relayouts when the player's status text changes, and a change of the widget's own
#: size arrives as a resize).
_HARMLESS = frozenset(
    {
        QEvent.Type.Paint,
        QEvent.Type.LayoutRequest,
        QEvent.Type.ChildAdded,
        QEvent.Type.ChildPolished,
        QEvent.Type.ChildRemoved,
        QEvent.Type.UpdateRequest,
        QEvent.Type.UpdateLater,
        QEvent.Type.MetaCall,
        QEvent.Type.DeferredDelete,
        QEvent.Type.ToolTip,
    }
)


class PaintCache(QObject):
    """Blits ``widget``'s last painting while nothing in it changed.

    A paint with no pixmap is a real one; the pixmap is made right after it, outside
    the paint (a widget cannot paint into a pixmap while it paints on screen), so a
    widget that changes on every frame gains nothing here: use it for widgets that
    change rarely. ``area`` (optional) says which rectangle the widget paints itself
    (a dock: its title bar; blitting a big, mostly transparent pixmap costs more than
    the painting), or None when it should paint as usual for now. ``state``
    (optional) returns what the widget shows that can change without an event (a
    scroll bar's range and position): a pixmap of another state is not blitted, so a
    widget asked to repaint for a change that came back (a range set twice) blits
    instead of painting the same again. ``backdrop``: the pixmap holds what is behind
    the widget too (a scroll bar's edges are see-through: blitted alone over its
    parent they came out a shade off). ``early``: for a widget whose ``state``
    changes with each player step (the scrubber's handle, the chain-rule text's scroll
    bar), the pixmap of a new state is made as its window is about to paint (its
    ``UpdateRequest``, outside any paint), and that paint blits it: the widget is
    rendered once per state, where painting it, then capturing it, rendered it twice
    (and a whole-window repaint before the capture, a third time). ``moved``: for
    such a widget, ``moved(kept, new)`` says which part of it (widget coordinates) can
    look different between the state kept and the new one, or None (any of it); only
    that part is drawn again, into the pixmap kept (the scrubber's handle moves a few
    pixels a step, and the style drew all nine hundred pixels of its groove for each).
    ``keep``: how many states' pixmaps are kept (the chain-rule text's scroll bar comes
    back to a range it had: an undone edit, a step back, a step of the same height), the
    least recently shown dropped first; any change (an event, ``changed``) drops them
    all. ``draw``: the widget's own painting, which the cache calls itself, straight
    into the pixmap over the plain colour behind the widget (:func:`plain_backdrop`):
    one rendering per state, none on screen first. Its ``state`` then names all the
    drawing depends on, so no event drops the pixmaps (a look comes back: a size, a
    title); behind anything but a plain colour the widget paints as usual. ``hits`` and
    ``misses`` count blits and real paints, ``captures`` the paintings into the pixmap
    and ``parts`` those of a part only (tests read them).
    """

    def __init__(
        self,
        widget: QWidget,
        changed: Iterable[SignalInstance] = (),
        area: Callable[[], QRect | None] | None = None,
        state: Callable[[], Hashable] | None = None,
        backdrop: bool = False,
        early: bool = False,
        moved: Callable[[Hashable, Hashable], QRect | None] | None = None,
        keep: int = 1,
        draw: Callable[[QStylePainter], None] | None = None,
    ) -> None:
        super().__init__(widget)
        self._widget = widget
        self._early = early
        self._moved = moved
        self._window: QWidget | None = None  # the window watched for its UpdateRequest
        self._area = area or widget.rect
        self._state = state or _no_state
        self._backdrop = backdrop
        self._keep = keep
        self._draw = draw
        self._shows: _Key | None = None  # the area and state of the one made or blitted last
        self._kept: dict[_Key, QPixmap] = {}  # per area and state, least recently shown first
        self._capture_due = False
        self._painting = False
        self.hits = 0
        self.misses = 0
        self.captures = 0
        self.parts = 0
        for signal in changed:
            signal.connect(self.invalidate)
        widget.installEventFilter(self)

    def invalidate(self, *_args: object) -> None:
        """Forget the pixmaps: the next paint is a real one."""
        self._kept.clear()

    def _kept_for(self, rect: QRect, state: Hashable) -> QPixmap | None:
        """The pixmap kept of ``rect`` in ``state`` (then the most recently shown)."""
        key = rect.getRect(), state
        pixmap = self._kept.pop(key, None)
        if pixmap is not None:
            self._kept[key] = pixmap
            self._shows = key
        return pixmap

    def _keep_pixmap(self, rect: QRect, state: Hashable, pixmap: QPixmap) -> None:
        key = rect.getRect(), state
        self._kept.pop(key, None)
        while len(self._kept) >= self._keep:
            del self._kept[next(iter(self._kept))]
        self._shows, self._kept[key] = key, pixmap

    @reported_or(bool)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        # Qt may deliver events while Python is still (or no longer) building this object.
        widget = getattr(self, "_widget", None)
        if watched is not widget or self._painting:
            if (widget is not None and watched is self._window and not self._painting
                    and event.type() == _UPDATE and watched is self._widget.window()):
                self._capture_stale()
            return False
        kind = event.type()
        if kind != _PAINT:
            if kind not in _HARMLESS and self._draw is None:
                self._kept.clear()
            return False
        rect = self._area()
        if rect is None or rect.isEmpty():
            self._kept.clear()
            return False
        if self._early and self._window is not (window := self._widget.window()):
            self._window = window  # (a widget moved to another window: that one)
            window.installEventFilter(self)
        state, colour = self._state(), None
        if self._draw is not None:
            colour = plain_backdrop(self._widget)
            if colour is None:
                return False  # (behind anything but a plain colour: as usual)
            state = (colour.rgba(), state)
        pixmap = self._kept_for(rect, state)
        if pixmap is None and self._draw is not None:
            self.captures += 1
            pixmap = self._drawn(rect, colour)
            self._keep_pixmap(rect, state, pixmap)
        elif pixmap is None:
            self.misses += 1
            if not self._capture_due:
                self._capture_due = True
                QTimer.singleShot(0, self, self._capture)
            return False
        else:
            self.hits += 1
        painter = QPainter(widget)  # type: ignore[call-overload]  # the widget it watches
        painter.setClipRegion(event.region())  # type: ignore[attr-defined]  # a QPaintEvent
        painter.drawPixmap(rect.topLeft(), pixmap)
        painter.end()
        return True

    def _capture_stale(self) -> None:
        """The window is about to paint: make the pixmap now if the one kept shows
        another state, or none is kept (see ``early``)."""
        widget, rect = self._widget, self._area()
        if rect is None or rect.isEmpty() or not widget.isVisible():
            return
        state = self._state()
        if self._kept_for(rect, state) is not None:
            return
        shows = self._shows
        if shows in self._kept and shows[0] == rect.getRect() and self._moved is not None:
            part = self._moved(shows[1], state)
            if part is not None and self._capture_part(rect, part & rect, state):
                return
        self._capture()

    def _capture_part(self, rect: QRect, part: QRect, state: Hashable) -> bool:
        """Draw only ``part`` of the widget again, into a copy of the pixmap of ``rect``
        shown last, which then shows ``state`` (False: not done; the caller draws the
        whole)."""
        ratio = self._widget.devicePixelRatioF()
        if part.isEmpty() or ratio != round(ratio):
            return False  # (at a fractional ratio a part's edges could round another way)
        self.parts += 1
        piece = self._drawn(part)
        assert self._shows is not None
        pixmap = QPixmap(self._kept[self._shows])  # (shared until painted on: copied then)
        painter = QPainter(pixmap)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
        painter.drawPixmap(part.topLeft() - rect.topLeft(), piece)
        painter.end()
        self._keep_pixmap(rect, state, pixmap)
        return True

    def _capture(self) -> None:
        """Paint the widget into the pixmap (background included, children left out)."""
        self._capture_due = False
        widget, rect = self._widget, self._area()
        if not widget.isVisible() or rect is None or rect.isEmpty():
            return
        state = self._state()
        if self._kept_for(rect, state) is not None:
            return
        self.captures += 1
        self._keep_pixmap(rect, state, self._drawn(rect))

    def _drawn(self, rect: QRect, colour: QColor | None = None) -> QPixmap:
        """``rect`` of the widget (its coordinates) drawn into a new pixmap, over
        ``colour`` (the plain one behind it, for ``draw``: soft edges then blend as they
        do on screen, pixel for pixel; drawn over a transparent pixmap, then blitted, a
        title's edge came out a level off)."""
        widget = self._widget
        self._painting = True
        try:
            if self._backdrop:  # the window there: its parents, then the widget
                window = widget.window()
                return window.grab(QRect(widget.mapTo(window, rect.topLeft()), rect.size()))
            ratio = widget.devicePixelRatioF()
            pixmap = QPixmap(rect.size() * ratio)
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent if colour is None else colour)
            if self._draw is None:
                widget.render(pixmap, -rect.topLeft(), QRegion(rect), QWidget.RenderFlag(0))
            else:
                painter = QStylePainter(pixmap, widget)
                painter.translate(-rect.topLeft())
                self._draw(painter)
                painter.end()
            return pixmap
        finally:
            self._painting = False


def painted_alone(*widgets: QWidget) -> None:
    """Leave ``widgets`` and their children out of their window's repaints.

    A whole-window repaint (a dialog closing over it, the step and add figures' repaint)
    asked the window's ~40 bars, docks and their children to paint again, 1-2 ms,
    although only what called ``update`` had anything new to show. Qt repaints a parent
    only around its opaque children: one that fills its background is left, with all in
    it, to its own updates (Qt tracks them, as for any widget; a palette, font or size
    change updates it). The fill is the widget's background colour under what it paints;
    its parent painted the window's there before, so a widget whose background role has
    another colour must paint all its pixels over it (a tool bar's gradient, a menu bar's
    panel) or it would show a shade off: the tests compare the screen with a fresh
    rendering of the window after each kind of change.
    """
    for widget in widgets:
        widget.setAutoFillBackground(True)


def plain_backdrop(widget: QWidget) -> QColor | None:
    """The plain colour behind ``widget``: its own background when it fills it, else its
    parent's when that fills its own (a scroll area's page does); None when neither
    does, or the fill is not one colour (a gradient, a texture)."""
    holder = widget if widget.autoFillBackground() else widget.parentWidget()
    if holder is None or not holder.autoFillBackground():
        return None
    brush = holder.palette().brush(holder.backgroundRole())
    return brush.color() if brush.style() == Qt.BrushStyle.SolidPattern else None


#: A pixmap's area (QRect.getRect(): left, top, width, height) and the state it shows.
_Key = tuple[object, Hashable]


def _no_state() -> None:
    return None
