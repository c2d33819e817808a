"""The chain-rule panel: the current step written the way the seed tutorials write it.

Symbolic first (∂A/∂x₁ = Σⱼ ∂A/∂yⱼ · ∂yⱼ/∂x₁, with stacked fractions and real
subscripts), then the same line with the recorded numbers substituted, then the
operand's ``grad += vjp``. The HTML comes from :mod:`gui.model.chain_rule` (pure text);
this widget only picks the piece for the player's frame and renders it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from ..model.chain_rule import SUMMARY_HEADING, chain_rule_html
from ..model.train_view import update_html
from ..paint_cache import PaintCache
from ..player import Player
from ..theme import CHAIN_RULE_PT, THEME
from .follow import FollowPlayer
from .text_cache import CachedTextBrowser

#: Base font size (points) before the presentation scale.
BASE_PT = CHAIN_RULE_PT
#: The equations shrink to fit the panel's width (and, with ``fit_height``, its height),
#: down to this share of their size.
MIN_FIT = 0.55
#: ... and a step written compactly (still too tall at MIN_FIT) down to this share: a 6x9
#: Jacobian above a 3x3 gradient on a 1280x720 projector.
MIN_FIT_COMPACT = 0.5


class ChainRulePanel(QWidget):
    """Shows ``chain_rule_html(player.frame)``; follows the player, honours THEME.scale."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChainRulePanel")
        self.player = player
        self.browser = CachedTextBrowser(self)
        self.browser.setObjectName("ChainRuleText")
        self.browser.setOpenLinks(False)
        self.browser.setStyleSheet(
            f"QTextBrowser {{ background: {THEME.paper.name()}; border: none; }}"
        )
        self.browser.document().setDocumentMargin(10)
        # Equations fit the width (no sideways scrolling, the step never half hidden).
        self.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.browser.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.fit = 1.0  # the share of the base size the text is shown at
        # Presentation mode: the step also fits the height (a class cannot scroll the
        # projector); the window's panel scrolls instead of shrinking a tall step.
        self.fit_height = False
        # A step too tall at the smallest size writes its symbolic line and its numbers
        # side by side (presentation mode: the panel is short and wide).
        self.compact = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        bar = self.browser.verticalScrollBar()
        # A new step empties the page, then fills it: the bar's range goes to 0 and
        # back, and Qt repaints the bar although it looks the same: blit it then.
        PaintCache(
            bar,
            state=lambda: (bar.minimum(), bar.maximum(), bar.value(), bar.pageStep()),
            backdrop=True,
        )
        self.follow = FollowPlayer(self, player, self._render)
        self.refresh()

    def apply_theme(self) -> None:
        """Re-render at the current THEME.scale (the window calls this after changing it)."""
        self.refresh()

    def html(self, fit: float = 1.0) -> str:
        """The panel's content for the player's current frame, at ``fit`` x its size."""
        p = self.player
        size = BASE_PT * THEME.scale * fit
        html = chain_rule_html(p.doc.graph, p.timeline, p.frame, p.end_to_end, size, self.compact)
        return _with_update(html, p)


    def text(self) -> str:
        """What the panel says, as plain text (for tests and accessibility)."""
        self.follow.flush()
        return self.browser.toPlainText()

    def refresh(self, *_args: object) -> None:
        """Re-render for the player's frame; deferred while the panel is hidden."""
        self.follow.request()

    def _render(self) -> None:
        """Render, then shrink the text until the widest equation fits the width.

        A scroll bar that shows stays while rendering: ``setHtml`` empties the page
        first, and a bar that went away and came back had the text laid out twice, at
        both widths. If the new text turns out short, the bar goes and the text is
        measured again at the full width, as an unpinned render would have.
        """
        browser = self.browser
        as_needed = Qt.ScrollBarPolicy.ScrollBarAsNeeded
        pinned = browser.verticalScrollBar().isVisible()
        pinned = pinned and browser.verticalScrollBarPolicy() == as_needed
        if pinned:
            browser.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
            self._fit()
            browser.setVerticalScrollBarPolicy(as_needed)
        if not pinned or not browser.verticalScrollBar().isVisible():
            self._fit()
        browser.verticalScrollBar().setValue(0)  # the step is written at the top

    def _fit(self) -> None:
        """Render at full size, then smaller until the widest equation fits the width
        and, with ``fit_height``, the text fits the height (three tries); a step still
        too tall at the smallest size is written compactly (two lines less) and fitted
        again, a little smaller if it must."""
        self.compact = False
        self._fit_size(MIN_FIT)
        if self.fit <= MIN_FIT and self._too_tall():
            self.compact = True
            self._fit_size(MIN_FIT_COMPACT)

    def _fit_size(self, floor: float) -> None:
        """Render at full size, then smaller (not below ``floor``) until the text fits."""
        self.fit = 1.0
        self._show(self.html())
        for _ in range(3):  # text sizes scale with the font: converges in a step or two
            shrink = self._overflow()
            if shrink >= 1.0 or self.fit <= floor:
                break
            self.fit = max(floor, self.fit * shrink * 0.98)
            self._show(self.html(self.fit))

    def _show(self, html: str) -> None:
        """Replace the document's content: the document itself parses and lays it out.

        ``QTextEdit.setHtml`` does that too, then keeps an editor's state up to date
        (the cursor's format and position, the text-changed signals), which costs a
        read-only write-up about a third as much again on every step.
        """
        self.browser.document().setHtml(html)

    def _overflow(self) -> float:
        """The share of its size the shown text must shrink to so that it fits (1: fits).

        The document's margin does not scale with the font, so it is left out of the
        height's ratio; the whole call's summary after the last step may scroll.
        """
        doc = self.browser.document()
        viewport = self.browser.viewport()
        room, wide = viewport.width(), doc.idealWidth()
        shrink = room / wide if 0 < room < wide else 1.0
        margin = doc.documentMargin()
        high, tall = viewport.height() - 2 * margin, step_bottom(doc) - margin
        if self.fit_height and 0 < high < tall:
            shrink = min(shrink, high / tall)
        return shrink

    def _too_tall(self) -> bool:
        """With ``fit_height``: the shown step is taller than the panel."""
        doc, high = self.browser.document(), self.browser.viewport().height()
        return self.fit_height and 0 < high - doc.documentMargin() < step_bottom(doc)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        old, new = event.oldSize(), event.size()
        if new.width() != old.width() or (self.fit_height and new.height() != old.height()):
            self.refresh()


def step_bottom(doc: QTextDocument) -> float:
    """Where the step's text ends in ``doc`` (at the whole call's summary, if shown)."""
    summary = doc.find(SUMMARY_HEADING)
    if summary.isNull():
        return doc.size().height() - doc.documentMargin()
    return doc.documentLayout().blockBoundingRect(summary.block()).top()


def _with_update(html: str, p: Player) -> str:
    """Train mode (issue 30): at the end of backward, the last training step's update."""
    spec, state = p.doc.train, p.doc.train_state
    if spec is None or state is None or p.position != p.timeline.end:
        return html
    return html.replace("</body>", update_html(spec, state) + "</body>", 1)
