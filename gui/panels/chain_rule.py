"""The chain-rule panel: the current step written the way the seed tutorials write it.

Symbolic first (∂A/∂x₁ = Σⱼ ∂A/∂yⱼ · ∂yⱼ/∂x₁, with stacked fractions and real
subscripts), then the same line with the recorded numbers substituted, then the
operand's ``grad += vjp``. The HTML comes from :mod:`gui.model.chain_rule` (pure text);
this widget only picks the piece for the player's frame and renders it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QPixmap, QResizeEvent, QTextDocument
from PySide6.QtWidgets import (
    QScrollBar,
    QStyle,
    QStyleOptionSlider,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..model import colours
from ..model.chain_rule import SUMMARY_HEADING, SUMMARY_RULE, StepWriteups, chain_rule_html
from ..model.labels import QT_SUB_SHARE, Narrow
from ..model.timeline import Frame
from ..paint_cache import PaintCache
from ..player import Player
from ..qt_override import reported
from ..theme import CHAIN_RULE_PT, THEME, paper_browser, style
from .follow import FollowPlayer
from .text_cache import CachedTextBrowser

#: Base font size (points) before the presentation scale.
BASE_PT = CHAIN_RULE_PT
#: In the window, the equations shrink to fit the panel's width, down to this share of
#: their size (the panel scrolls a tall step).
MIN_FIT = 0.55
#: Presentation mode (a back row reads about 20 px): the write-up's body text is at least
#: this many pixels high and its sub- and superscripts at least these, at one size for
#: every step (its heading never jumps); a step that does not fit is shortened, never
#: shrunk: see :data:`SHORTENINGS`.
PRESENT_BODY_PX, PRESENT_SUB_PX = 22.0, 15.0
#: The text's margin (pixels); in presentation mode smaller: the panel is short.
MARGIN, PRESENT_MARGIN = 10, 2
#: The shortening rule, tried in order until the step fits: as written; compact (the
#: symbolic line and the numbers side by side, two lines less); elided (every matrix of
#: more than one row written as its shape, the upstream row vector and the vectors
#: keeping their numbers; the operation's line dropped), the symbolic line and the
#: numbers on separate lines and then side by side. Each is ``(compact, elide, narrow)``
#: (presentation mode never writes narrow: its panel is wide and short; ``narrow`` is a
#: :class:`~gui.model.labels.Narrow` level).
SHORTENINGS = ((False, False, Narrow.NO), (True, False, Narrow.NO), (False, True, Narrow.NO),
               (True, True, Narrow.NO))
#: An export's rule (an exported frame's tall, narrow column beside the canvas, a PDF
#: handout's half page, a web page's column), the numbers kept as long as they fit: as
#: written; one factor a line (the row vector, the Jacobian, the vjp), a long row wrapped;
#: one factor a line, a long row summarised; that with the whole call's summary elided;
#: and each gradient's name on its own line too; elided; elided and narrow. The least
#: overflowing is then shrunk until it fits (:func:`fit_export`).
EXPORT_SHORTENINGS = ((False, False, Narrow.NO), (False, False, Narrow.WRAPPED),
                      (False, False, Narrow.FACTORS), (False, False, Narrow.SUMMARY),
                      (False, False, Narrow.SPLIT), (False, True, Narrow.NO),
                      (False, True, Narrow.FACTORS))
#: The window's rule (its panel scrolls down, never sideways): as written; narrow, each
#: long row wrapped onto several lines (every number kept); elided and narrow. The first
#: that fits the width shrunk to no less than :data:`MIN_FIT` is shown so, else the last at
#: MIN_FIT.
WINDOW_SHORTENINGS = ((False, False, Narrow.NO), (False, False, Narrow.WRAPPED),
                      (False, True, Narrow.FACTORS))
#: An exported frame's shortest write-up that still overflows is shrunk at most this many
#: times (widths do not scale quite with the font: the tables' paddings are pixels).
EXPORT_TRIES = 4
#: A choice: (fit, compact, elide, narrow).
Choice = tuple[float, bool, bool, Narrow]
#: The choice of a step shown as written: full size, neither compact, elided nor narrow.
AS_WRITTEN: Choice = (1.0, False, False, Narrow.NO)
#: How many layouts' choices the panel remembers (a step shown again is laid out once).
CHOICES_KEPT = 512
#: How long after a step is shown the next one's write-up is laid out (ms): well after
#: the step's frame is on screen (a slow machine's too), while the pulse travels, and
#: before the next step at the fastest playback (4 steps a second).
AHEAD_MS = 100
#: How many of the scroll bar's looks (one per range and position) are kept.
BARS_KEPT = 32
#: How far (pixels) a style draws the scroll bar's handle past its two ends (Fusion: a
#: pixel of its outline): what is drawn again around an end that moved.
HANDLE_REACH = 3
#: Qt's points to pixels on the 96-per-inch logical screen the sizes are measured on.
PX_PER_PT = 96 / 72


class ChainRulePanel(QWidget):
    """Shows ``chain_rule_html(player.frame)``; follows the player, honours THEME.scale."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChainRulePanel")
        self.player = player
        self.browser = CachedTextBrowser(self)
        self.browser.setObjectName("ChainRuleText")
        self.browser.setOpenLinks(False)
        style(self.browser, paper_browser)
        self.browser.document().setDocumentMargin(MARGIN)
        # Equations fit the width (no sideways scrolling, the step never half hidden).
        self.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.browser.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.fit = 1.0  # the share of the base size the text is shown at
        # Presentation mode: the step also fits the height (a class cannot scroll the
        # projector); the window's panel scrolls instead of shrinking a tall step.
        self._fit_height = False
        # An exported frame cannot scroll either: its text also shrinks to fit the height
        # (down to MIN_FIT, the legibility floor the width keeps too).
        self.fit_whole = False
        # The window's text says where to look and what to double-click; an exported
        # frame (no tabs, no double-click) is written without those hints.
        self.interactive = True
        self._bar_policy = self.browser.verticalScrollBarPolicy()
        # How the shown step is shortened (presentation mode: :data:`SHORTENINGS`).
        self.compact = False
        self.elide = False
        self.narrow = Narrow.NO
        # The choice (fit, compact, elide, narrow) per (content, viewport size, scale,
        # mode): a step shown again at the same size is laid out once, not once per try.
        self._choices: dict[tuple, Choice] = {}
        # The next step's write-up, chosen, laid out and drawn in idle time: (its
        # :meth:`_key`, its choice, the document, its drawing).
        self._ahead: tuple[tuple, Choice, QTextDocument, QPixmap] | None = None
        # What the browser shows: its :meth:`_key` and document (the same text at the
        # same size again, most edits at the end of backward, lays nothing out; someone
        # else setting the browser's text, and it renders again).
        self._shown: tuple[tuple, QTextDocument] | None = None
        # The write-ups as first tried (:meth:`_written`) of the timeline's steps seen,
        # by what else feeds them (a step is written twice: laid out ahead, then shown).
        self._writeups: dict[tuple, str] = {}
        self._writeups_of: object = None  # the timeline they were written from
        # The steps' own write-ups, by all they read: they outlive a change that keeps
        # the pass's steps (a leaf added: the end of backward writes only its summary).
        self.steps = StepWriteups()
        doc = player.doc
        for signal in (doc.structureChanged, doc.nodeChanged, doc.positionsChanged,
                       doc.backwardChanged, doc.resultsChanged, doc.fileChanged,
                       doc.groupsChanged, doc.trainChanged, player.endToEndReady):
            signal.connect(self._forget_writeups)
        self._ahead_timer = QTimer(self)
        self._ahead_timer.setSingleShot(True)
        self._ahead_timer.setInterval(AHEAD_MS)
        self._ahead_timer.timeout.connect(self._lay_out_ahead)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        bar = self.browser.verticalScrollBar()
        # A new step empties the page, then fills it: the bar's range goes to 0 and
        # back, and Qt repaints the bar although it looks the same: blit it then. Steps
        # come back to a range (a step back, an undone edit, a step as tall): each
        # range's bar is kept, not drawn again (a third of a millisecond of the style's).
        # A new range moves the handle's end only: only around it is drawn again.
        PaintCache(
            bar,
            state=lambda: _bar_state(bar),
            backdrop=True,
            early=True,
            moved=lambda kept, new: _handle_end_moved(bar, kept, new),
            keep=BARS_KEPT,
        )
        self.follow = FollowPlayer(self, player, self._render)
        player.endToEndReady.connect(self.refresh)
        self.refresh()

    @property
    def fit_height(self) -> bool:
        return self._fit_height

    @fit_height.setter
    def fit_height(self, on: bool) -> None:
        """Presentation mode on or off. On, the scroll bar is hidden (the wheel still
        scrolls the summary after the last step): one width for every choice, and none
        that a bar appearing half-way through fitting would narrow; the margin shrinks."""
        if on == self._fit_height:
            return
        self._fit_height = on
        browser = self.browser
        if on:
            self._bar_policy = browser.verticalScrollBarPolicy()
        browser.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff if on else self._bar_policy
        )
        browser.document().setDocumentMargin(PRESENT_MARGIN if on else MARGIN)

    def apply_theme(self) -> None:
        """Re-render at the current THEME.scale (the window calls this after changing it)."""
        self._forget_writeups()
        self.refresh()

    def html(self, fit: float = 1.0, frame: Frame | None = None) -> str:
        """The panel's content for the player's current frame (or ``frame``), at ``fit``
        x its size (presentation mode: the fixed sizes of :data:`PRESENT_BODY_PX`),
        shortened as the panel shows it now."""
        return self._html(self.player.frame if frame is None else frame, fit, self.compact,
                          self.elide, self.narrow)

    def _html(
        self, frame: Frame, fit: float, compact: bool, elide: bool, narrow: Narrow = Narrow.NO
    ) -> str:
        p = self.player
        size, sub = BASE_PT * THEME.scale * fit, None
        if self.fit_height:
            size = max(BASE_PT * THEME.scale, PRESENT_BODY_PX / PX_PER_PT)
            sub = PRESENT_SUB_PX / PX_PER_PT
        return chain_rule_html(
            p.doc.graph, p.timeline, frame, p.end_to_end_or_computing, size, compact, elide,
            sub, _update(p, frame), self.interactive, narrow, self.steps,
        )

    def text(self) -> str:
        """What the panel says, as plain text (for tests and accessibility)."""
        self.follow.flush()
        return self.browser.toPlainText()

    def refresh(self, *_args: object) -> None:
        """Re-render for the player's frame; deferred while the panel is hidden."""
        self.follow.request()

    def _render(self) -> None:
        """Render, then shrink the text until the widest equation fits the width (the
        step laid out ahead is shown from its drawing: :meth:`_show_ahead`).

        A scroll bar that shows stays while rendering: ``setHtml`` empties the page
        first, and a bar that went away and came back had the text laid out twice, at
        both widths. If the new text turns out short, the bar goes and the text is
        measured again at the full width, as an unpinned render would have.
        """
        browser = self.browser
        viewport = browser.viewport()
        key = self._key(self.player.frame, viewport.width(), viewport.height())
        if self._shown is not None and self._shown == (key, browser.shown_document()):
            return
        if self._show_ahead(key) or self._replace_summary(key):
            self._ahead_timer.start()
            return
        as_needed = Qt.ScrollBarPolicy.ScrollBarAsNeeded
        pinned = browser.verticalScrollBar().isVisible()
        pinned = pinned and browser.verticalScrollBarPolicy() == as_needed
        if pinned:
            browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
            self._fit(key)
            browser.setVerticalScrollBarPolicy(as_needed)
        if not pinned or not browser.verticalScrollBar().isVisible():
            self._fit(key)
        browser.verticalScrollBar().setValue(0)  # the step is written at the top
        self._ahead_timer.start()

    def _fit(self, key: tuple) -> None:
        """Show the step at the size and shortening it fits: remembered per content and
        viewport size, so a step seen before is laid out once. The documents tried are
        measured before the browser shows one: if showing it brings the scroll bar (a
        narrower viewport), the step is fitted again at the new width."""
        viewport = self.browser.viewport()
        for _ in range(2):
            width = viewport.width()
            self._fit_at(width, viewport.height(), key)
            if viewport.width() == width:
                return

    def _show_ahead(self, key: tuple) -> bool:
        """Show the step laid out and drawn ahead, if it is this step at this size
        (``key``; see :meth:`_lay_out_ahead`)."""
        ahead = self._ahead
        if ahead is None or ahead[0] != key:
            return False
        self._ahead = None
        self.fit, self.compact, self.elide, self.narrow = ahead[1]
        self.browser.show_laid_out(ahead[2], ahead[3])
        self._shown = (key, ahead[2])
        viewport = self.browser.viewport()
        if (viewport.width(), viewport.height()) != key[1:3]:
            self._fit(key)  # showing it brought the scroll bar: fit the narrower width
        return True

    def _replace_summary(self, key: tuple) -> bool:
        """Show the step of ``key`` by replacing the whole call's summary alone in the
        document shown, when nothing else changed (an edit off the output's path: a
        leaf added, another leaf's ``.grad`` line; the step above it reads the same),
        the document shown is as written and still fits as written. Replacing lays out
        the summary's blocks only, and a drawing of the step above it stays.

        False when not so (nothing replaced; nor while text is selected), or when the
        new summary does not fit as written or brought or took the scroll bar (the
        caller then lays out a whole new page, as for any other step)."""
        shown, browser = self._shown, self.browser
        if (shown is None or shown[0][1:] != key[1:] or shown[1] is not browser.shown_document()
                or (self.fit, self.compact, self.elide, self.narrow) != AS_WRITTEN
                or self._choices.get(key, AS_WRITTEN) != AS_WRITTEN):
            return False
        old, new = shown[0][0], key[0]
        cut_old, cut_new = old.rfind(SUMMARY_RULE), new.rfind(SUMMARY_RULE)
        if cut_old < 0 or cut_new < 0 or old[:cut_old] != new[:cut_new]:
            return False
        doc = shown[1]
        heading = doc.find(SUMMARY_HEADING)
        position = heading.block().previous().position() if not heading.isNull() else 0
        if position <= 0:
            return False
        viewport = browser.viewport()
        size = viewport.size()
        head = new[: new.index(">", new.index("<body")) + 1]  # <html><body style=...>
        if not browser.replace_end(position, head + new[cut_new:]):
            return False
        if viewport.size() != size or self._overflow(doc) < 1.0:
            return False  # the bar came or went, or the summary is wider than the panel
        if len(self._choices) >= CHOICES_KEPT:
            self._choices.clear()
        self._choices[key] = AS_WRITTEN
        self._shown = (key, doc)
        browser.verticalScrollBar().setValue(0)  # the step is written at the top
        return True

    def _fit_at(self, width: int, height: int, key: tuple) -> None:
        """Fit at this viewport size (``key``: the current step's, when at this size)."""
        frame = self.player.frame
        if key[1:3] != (width, height):
            key = self._key(frame, width, height)
        _drop(self._ahead[2] if self._ahead is not None else None)  # another step or size
        self._ahead = None
        choice, doc = self._chosen(frame, key)
        self.fit, self.compact, self.elide, self.narrow = choice
        self.browser.show_laid_out(doc)
        self._shown = (key, doc)

    def _chosen(self, frame: Frame, key: tuple) -> tuple[Choice, QTextDocument]:
        """The choice for ``frame`` (remembered by its :meth:`_key`) and its document."""
        choice = self._choices.get(key)
        if choice is not None:
            first = choice == AS_WRITTEN
            return choice, self._laid_out(key[0] if first else self._html(frame, *choice))
        if len(self._choices) >= CHOICES_KEPT:
            self._choices.clear()
        choice, doc = self._choose(frame, key[0])
        self._choices[key] = choice
        return choice, doc

    def _key(self, frame: Frame, width: int, height: int) -> tuple:
        """What a choice (fit, compact, elide, narrow) and its document depend on: the
        step's write-up as first tried, the viewport's size and the text settings."""
        doc = self.browser.text_settings()
        return (self._written(frame), width, height, THEME.scale,
                self.fit_height, self.fit_whole, doc.defaultFont().key(), doc.documentMargin())

    def _written(self, frame: Frame) -> str:
        """``frame``'s write-up at full size, as written, remembered per step of the
        timeline shown and what else the text reads: the quiz's mask (what it hides and
        asks), the scale, presentation mode, the hints and the colours' theme. Any change
        to the document (the graph, its groups, training) forgets them all; the last
        frame, which also reads the whole call's product and the training update, is
        written every time."""
        p = self.player
        if frame.position >= p.timeline.end:
            return self._html(frame, 1.0, False, False)
        if self._writeups_of is not p.timeline:
            self._writeups.clear()
            self._writeups_of = p.timeline
        key = (frame.position, frame.hidden, frame.question, THEME.scale, self.fit_height,
               self.interactive, colours.current())
        text = self._writeups.get(key)
        if text is None:
            if len(self._writeups) >= CHOICES_KEPT:
                self._writeups.clear()
            text = self._writeups[key] = self._html(frame, 1.0, False, False)
        return text

    def _forget_writeups(self, *_args: object) -> None:
        self._writeups.clear()

    def _choose(self, frame: Frame, first: str) -> tuple[Choice, QTextDocument]:
        """Lay the step out and choose (fit, compact, elide, narrow): the choice and its
        document, laid out, not shown yet. ``first``: the write-up at full size, as written (the
        key's: writing it again was a fifth of an edit's render).

        Presentation mode keeps one size and tries :data:`SHORTENINGS` in order (the
        one that overflows least stays if none fits: never smaller than a back row reads).
        An exported frame is fitted by :func:`fit_export` at the window's full size, as
        every export's write-up is. The window tries
        :data:`WINDOW_SHORTENINGS` in order, shrinking each to fit the width (not below
        :data:`MIN_FIT`) in one step from the overflow measured at full size (text widths
        scale with the font), once more if needed; one that overflows more than MIN_FIT
        at full size is not shrunk (it cannot fit). As written and fitting: one layout.
        """
        def write(choice: Choice) -> str:
            return first if choice == AS_WRITTEN else self._html(frame, *choice)

        if self.fit_whole:
            return fit_export(write, self._laid_out, self._overflow)
        if self.fit_height:
            return shortest(SHORTENINGS, write, self._laid_out, self._overflow)
        *tries, last = WINDOW_SHORTENINGS
        for shortening in tries:
            doc = self._full_size(frame, first, *shortening)
            shrink = self._overflow(doc)
            if shrink < MIN_FIT:  # cannot fit however far it shrinks: the next
                _drop(doc)
                continue
            fit, doc, shrink = self._shrunk(frame, doc, shrink, *shortening)
            if shrink >= 1.0:
                return (fit, *shortening), doc
            _drop(doc)
        doc = self._full_size(frame, first, *last)
        fit, doc, _shrink = self._shrunk(frame, doc, self._overflow(doc), *last)
        return (fit, *last), doc

    def _shrunk(self, frame: Frame, doc: QTextDocument, shrink: float, compact: bool,
                elide: bool, narrow: Narrow) -> tuple[float, QTextDocument, float]:
        """The window's step ``doc`` (overflowing by ``shrink`` at full size) shrunk to fit
        the width, not below :data:`MIN_FIT`: in one step (text widths scale with the
        font), once more if needed. Its fit, document and remaining overflow."""
        fit = 1.0
        for _ in range(2):
            if shrink >= 1.0 or fit <= MIN_FIT:
                break
            fit = max(MIN_FIT, fit * shrink * 0.98)
            _drop(doc)
            doc = self._laid_out(self._html(frame, fit, compact, elide, narrow))
            shrink = self._overflow(doc)
        return fit, doc, shrink

    def _full_size(self, frame: Frame, first: str, compact: bool, elide: bool,
                   narrow: Narrow) -> QTextDocument:
        """The step at full size shortened so, laid out (``first`` when not shortened)."""
        shortened = compact or elide or narrow
        return self._laid_out(self._html(frame, 1.0, compact, elide, narrow)
                              if shortened else first)

    def _laid_out(self, html: str) -> QTextDocument:
        """A new document holding ``html``, laid out at the viewport's width, its
        settings those of the document shown; the browser's child (it deletes the one
        it shows when it takes the next).

        Setting the HTML of the document the browser shows (``QTextEdit.setHtml``, or
        its document's) costs more: the browser's text control follows every block as
        it is emptied and filled (its cursor, the scroll bars, the layout in pieces)."""
        shown = self.browser.text_settings()
        doc = QTextDocument(self.browser)
        doc.setUndoRedoEnabled(False)
        doc.setDefaultFont(shown.defaultFont())
        doc.setDefaultStyleSheet(shown.defaultStyleSheet())
        doc.setDefaultTextOption(shown.defaultTextOption())
        doc.setDocumentMargin(shown.documentMargin())
        doc.setHtml(html)
        doc.setTextWidth(self.browser.viewport().width())  # as the browser will
        doc.size()
        return doc

    def _lay_out_ahead(self) -> None:
        """In idle time after a step is shown: choose, lay out and draw the next step's
        write-up, so that stepping on shows its drawing instead of parsing, measuring,
        laying out and drawing its tables while the user waits."""
        p = self.player
        if not self.isVisible() or p.position >= p.timeline.end:
            return
        frame, viewport = p.frame_at(p.position + 1), self.browser.viewport()
        key = self._key(frame, viewport.width(), viewport.height())
        choice, doc = self._chosen(frame, key)
        _drop(self._ahead[2] if self._ahead is not None else None)
        self._ahead = (key, choice, doc, self.browser.drawing(doc))

    def _overflow(self, doc: QTextDocument) -> float:
        """:func:`overflow` in the viewport (the window's panel scrolls down: its width)."""
        viewport = self.browser.viewport()
        whole = self.fit_height or self.fit_whole
        return overflow(doc, viewport.width(), viewport.height() if whole else None)

    @reported
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        old, new = event.oldSize(), event.size()
        if new.width() != old.width() or (self.fit_height and new.height() != old.height()):
            self.refresh()


def overflow(
    doc: QTextDocument, width: float, height: float | None, whole: bool = False
) -> float:
    """The share of its size the text of ``doc`` (laid out at ``width``) must shrink to so
    that it fits that width and (unless None) ``height`` (1: fits).

    The document's margin does not scale with the font, so it is left out of the
    height's ratio; the whole call's summary after the last step may run past it (a
    panel scrolls to it), unless ``whole`` (a page: it is drawn whole, or shrunk).
    """
    wide = doc.idealWidth()
    shrink = width / wide if 0 < width < wide else 1.0
    if height is not None:
        margin = doc.documentMargin()
        bottom = doc.size().height() - margin if whole else step_bottom(doc)
        high, tall = height - 2 * margin, bottom - margin
        if 0 < high < tall:
            shrink = min(shrink, high / tall)
    return shrink


def shortest(
    rule: Sequence[tuple[bool, bool, Narrow]],
    write: Callable[[Choice], str],
    lay_out: Callable[[str], QTextDocument],
    measure: Callable[[QTextDocument], float],
    floor: float = 1.0,
) -> tuple[Choice, QTextDocument]:
    """The first shortening of ``rule`` (presentation mode's :data:`SHORTENINGS`, an
    export's :data:`EXPORT_SHORTENINGS`) whose write-up (``write`` at full size, laid out
    by ``lay_out``) fits (``measure``: its :func:`overflow`) or would fit shrunk to
    ``floor``, or the one that overflows least; and its document, at full size. A
    shortening that writes what an earlier one wrote is not laid out again (a step with
    no long row wraps none: it overflowed already)."""
    best: tuple[float, bool, bool, Narrow] = (0.0, False, False, Narrow.NO)
    kept: QTextDocument | None = None
    tried: set[str] = set()
    for compact, elide, narrow in rule:
        html = write((1.0, compact, elide, narrow))
        if html in tried:
            continue
        tried.add(html)
        doc = lay_out(html)
        shrink = measure(doc)
        if shrink >= floor:
            _drop(kept)
            return (1.0, compact, elide, narrow), doc
        if (shrink, compact, elide, narrow) > best:
            best = (shrink, compact, elide, narrow)
            _drop(kept)
            kept = doc
        else:
            _drop(doc)
    assert kept is not None
    return (1.0, best[1], best[2], best[3]), kept


def fit_export(
    write: Callable[[Choice], str],
    lay_out: Callable[[str], QTextDocument],
    measure: Callable[[QTextDocument], float],
    floor: float = 1.0,
) -> tuple[Choice, QTextDocument]:
    """How an export writes a step up, and its document: the first of
    :data:`EXPORT_SHORTENINGS` that fits at full size (or shrunk to no less than
    ``floor``: a page read close), or the least overflowing, shrunk until it fits (at most
    :data:`EXPORT_TRIES` times). A picture or a page can neither scroll nor be cut: at
    1280x720 the xor_mlp's 4×4 step had been shrunk to 9 px and still cut at the right
    edge. One rule for an exported frame's panel, a PDF's half page and a web page's
    column (:func:`fitted_html`)."""
    (fit, compact, elide, narrow), doc = shortest(EXPORT_SHORTENINGS, write, lay_out, measure,
                                                  floor)
    for _ in range(EXPORT_TRIES):
        shrink = measure(doc)
        if shrink >= 1.0:
            break
        fit *= shrink * 0.98
        _drop(doc)
        doc = lay_out(write((fit, compact, elide, narrow)))
    return (fit, compact, elide, narrow), doc


def fitted_html(
    write: Callable[[Choice], str], width: float, height: float | None, floor: float = 1.0
) -> str:
    """The write-up ``write`` gives for the choice :func:`fit_export` makes (``floor``: see
    there) in a column ``width`` pixels wide and (unless None: a web page scrolls down)
    ``height`` high, laid out by Qt without a margin: what a PDF handout and a web page
    show beside a step (all of it: a page draws the whole call's summary after the last
    step in the same room, and would shrink it all to fit)."""

    def lay_out(html: str) -> QTextDocument:
        doc = QTextDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        doc.setHtml(html)
        doc.setTextWidth(width)
        return doc

    def measure(doc: QTextDocument) -> float:
        return overflow(doc, width, height, whole=True)

    choice, _doc = fit_export(write, lay_out, measure, floor)
    return write(choice)


def _drop(doc: QTextDocument | None) -> None:
    """Delete ``doc`` (a document laid out but not shown): Python's now, it goes as
    its last reference does."""
    if doc is not None:
        doc.setParent(None)


def step_bottom(doc: QTextDocument) -> float:
    """Where the step's text ends in ``doc`` (at the whole call's summary, if shown)."""
    summary = doc.find(SUMMARY_HEADING)
    if summary.isNull():
        return doc.size().height() - doc.documentMargin()
    return doc.documentLayout().blockBoundingRect(summary.block()).top()


def text_px(doc: QTextDocument) -> tuple[list[float], list[float]]:
    """The pixel sizes ``doc`` sets its text at, one entry per character: body text, and
    sub- and superscripts (at Qt's share of their own font). Tables' cells included; the
    whole call's summary left out. What the legibility figures and tests read."""
    # Here, not at the top: PySide6 builds QTextFormat's ~200 properties as an enum when
    # the class is first imported, before the first paint, for what only they read.
    from PySide6.QtGui import QTextCharFormat

    body: list[float] = []
    subs: list[float] = []
    end = doc.find(SUMMARY_HEADING)
    stop = end.block().position() if not end.isNull() else None
    block = doc.begin()
    while block.isValid():
        if stop is not None and block.position() >= stop:
            break
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            text = fragment.text().replace("\u00a0", " ")
            count = len(text) - text.count(" ")
            if fragment.isValid() and count:
                fmt = fragment.charFormat()
                font = fmt.font()
                px = font.pointSizeF() * PX_PER_PT if font.pointSizeF() > 0 else font.pixelSize()
                align = fmt.verticalAlignment()
                script = align in (
                    QTextCharFormat.VerticalAlignment.AlignSubScript,
                    QTextCharFormat.VerticalAlignment.AlignSuperScript,
                )
                (subs if script else body).extend([px * QT_SUB_SHARE if script else px] * count)
            it += 1
        block = block.next()
    return body, subs


def _update(p: Player, frame: Frame) -> str:
    """Train mode (issue 30): at the end of backward, the last training step's update."""
    spec, state = p.doc.train, p.doc.train_state
    if spec is None or state is None or frame.position != p.timeline.end:
        return ""
    from ..model.train_view import update_html  # with a train block: start-up loads none

    return update_html(spec, state)


def _bar_state(bar: QScrollBar) -> tuple[int, int, int, int, int, int]:
    """What the text's scroll bar shows that changes without an event: its range, value
    and page, and where (top, bottom) the style draws its handle."""
    option = QStyleOptionSlider()
    bar.initStyleOption(option)
    handle = bar.style().subControlRect(
        QStyle.ComplexControl.CC_ScrollBar, option, QStyle.SubControl.SC_ScrollBarSlider, bar
    )
    return (bar.minimum(), bar.maximum(), bar.value(), bar.pageStep(), handle.top(),
            handle.bottom())


def _handle_end_moved(bar: QScrollBar, kept: object, new: object) -> QRect | None:
    """The part of the (vertical) scroll bar that can look different from state ``kept``
    to ``new`` (:func:`_bar_state`'s) when one end of its handle stayed (a new page's
    range, scrolled to the top): the band between the other end's two places and
    :data:`HANDLE_REACH` around it; None when both ends moved (drawn whole)."""
    if not (isinstance(kept, tuple) and isinstance(new, tuple)):
        return None
    (top, bottom), (new_top, new_bottom) = kept[4:], new[4:]
    if top == new_top:
        low, high = sorted((bottom, new_bottom))
    elif bottom == new_bottom:
        low, high = sorted((top, new_top))
    else:
        return None
    return QRect(0, low - HANDLE_REACH, bar.width(), high - low + 2 * HANDLE_REACH + 1)
