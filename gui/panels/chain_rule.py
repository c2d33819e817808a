"""The chain-rule panel: the current step written the way the seed tutorials write it.

Symbolic first (∂A/∂x₁ = Σⱼ ∂A/∂yⱼ · ∂yⱼ/∂x₁, with stacked fractions and real
subscripts), then the same line with the recorded numbers substituted, then the
operand's ``grad += vjp``. The HTML comes from :mod:`gui.model.chain_rule` (pure text);
this widget only picks the piece for the player's frame and renders it.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from ..model.chain_rule import chain_rule_html
from ..player import Player
from ..theme import CHAIN_RULE_PT, THEME
from .follow import FollowPlayer

#: Base font size (points) before the presentation scale.
BASE_PT = CHAIN_RULE_PT


class ChainRulePanel(QWidget):
    """Shows ``chain_rule_html(player.frame)``; follows the player, honours THEME.scale."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChainRulePanel")
        self.player = player
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("ChainRuleText")
        self.browser.setOpenLinks(False)
        self.browser.setStyleSheet("QTextBrowser { background: #ffffff; border: none; }")
        self.browser.document().setDocumentMargin(10)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.follow = FollowPlayer(self, player, self._render)
        self.refresh()

    def apply_theme(self) -> None:
        """Re-render at the current THEME.scale (the window calls this after changing it)."""
        self.refresh()

    def html(self) -> str:
        """The panel's content for the player's current frame."""
        p = self.player
        return chain_rule_html(p.doc.graph, p.timeline, p.frame, p.end_to_end,
                               BASE_PT * THEME.scale)

    def text(self) -> str:
        """What the panel says, as plain text (for tests and accessibility)."""
        self.follow.flush()
        return self.browser.toPlainText()

    def refresh(self, *_args: object) -> None:
        """Re-render for the player's frame; deferred while the panel is hidden."""
        self.follow.request()

    def _render(self) -> None:
        self.browser.setHtml(self.html())
