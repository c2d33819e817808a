"""The chain-rule panel: the current step written the way the seed tutorials write it.

Symbolic first (∂A/∂x₁ = Σⱼ ∂A/∂yⱼ · ∂yⱼ/∂x₁, with stacked fractions and real
subscripts), then the same line with the recorded numbers substituted, then the
operand's ``grad += vjp``. The HTML comes from :mod:`gui.model.chain_rule` (pure text);
this widget only picks the piece for the player's frame and renders it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from ..model.chain_rule import chain_rule_html
from ..player import Player
from ..theme import CHAIN_RULE_PT, THEME
from .follow import FollowPlayer
from .text_cache import CachedTextBrowser

#: Base font size (points) before the presentation scale.
BASE_PT = CHAIN_RULE_PT
#: The equations shrink to fit the panel's width, down to this share of their size.
MIN_FIT = 0.55


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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.follow = FollowPlayer(self, player, self._render)
        self.refresh()

    def apply_theme(self) -> None:
        """Re-render at the current THEME.scale (the window calls this after changing it)."""
        self.refresh()

    def html(self, fit: float = 1.0) -> str:
        """The panel's content for the player's current frame, at ``fit`` x its size."""
        p = self.player
        return chain_rule_html(p.doc.graph, p.timeline, p.frame, p.end_to_end,
                               BASE_PT * THEME.scale * fit)

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
        """Render at full size, then smaller until the widest equation fits (three tries)."""
        self.fit = 1.0
        self.browser.setHtml(self.html())
        doc = self.browser.document()
        room = self.browser.viewport().width()
        for _ in range(3):  # text widths scale with the size: converges in a step or two
            wide = doc.idealWidth()
            if room <= 0 or wide <= room or self.fit <= MIN_FIT:
                break
            self.fit = max(MIN_FIT, self.fit * room / wide * 0.98)
            self.browser.setHtml(self.html(self.fit))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.refresh()
