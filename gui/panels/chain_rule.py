"""The chain-rule panel: the current step written the way the seed tutorials write it.

Symbolic first (∂A/∂x₁ = Σⱼ ∂A/∂yⱼ · ∂yⱼ/∂x₁, with stacked fractions and real
subscripts), then the same line with the recorded numbers substituted, then the
operand's ``grad += vjp``. The HTML comes from :mod:`gui.labels` (pure text);
this widget only picks the piece for the player's frame and renders it.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from .. import labels
from ..frame import Frame, Phase
from ..player import Player
from ..theme import THEME

#: Base font size (points) before the presentation scale.
BASE_PT = 12.0


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
        player.frameChanged.connect(self.refresh)
        player.timelineChanged.connect(self.refresh)
        self.refresh()

    def apply_theme(self) -> None:
        """Re-render at the current THEME.scale (the window calls this after changing it)."""
        self.refresh()

    def html(self) -> str:
        """The panel's content for the player's current frame."""
        return chain_rule_html(self.player, self.player.frame, BASE_PT * THEME.scale)

    def text(self) -> str:
        """What the panel says, as plain text (for tests and accessibility)."""
        return self.browser.toPlainText()

    def refresh(self, *_args: object) -> None:
        self.browser.setHtml(self.html())


def chain_rule_html(player: Player, frame: Frame, base_pt: float = BASE_PT) -> str:
    """The write-up for one frame: forward progress, the start of backward, one step,
    or (at the end) the last step and the whole call as ``vᵀ J``."""
    doc, tl = player.doc, player.timeline
    results = doc.results
    trace = results.trace
    body: list[str] = []
    if frame.phase in (Phase.NO_FORWARD, Phase.FORWARD):
        body.append(labels.forward_html(frame.position, tl.forward_order,
                                        results.forward.values, doc.graph))
    elif frame.phase is Phase.FORWARD_DONE and frame.active is None:
        if trace is None:
            reason = results.backward_error
            body.append(labels.h_para("Forward done.", bold=True, size="115%"))
            body.append(labels.h_para(
                "No backward pass to show: " + labels.esc(str(reason) if reason else "—"),
                labels.GRAD_COLOR))
        else:
            body.append(labels.start_html(
                trace.output, trace.gradient,
                labels.objective_name(trace.output, trace.gradient), frame.n))
    if frame.active is not None and trace is not None:
        step = frame.active
        contribution = sum(1 for s in tl.steps[: frame.k] if s.operand == step.operand)
        senders = [s.consumer for s in tl.steps if s.operand == step.operand]
        body.append(labels.step_html(
            step, frame.k, frame.n,
            labels.objective_name(trace.output, trace.gradient),
            frame.fan_in.get(step.operand, 1), contribution, doc.graph, trace.output, senders))
    if frame.phase is Phase.BACKWARD_DONE and trace is not None:
        e2e = player.end_to_end()
        body.append('<hr/>')
        body.append(labels.h_para("Backward done", bold=True, size="115%"))
        if e2e is not None:
            body.append(labels.end_to_end_html(
                e2e.output, e2e.objective, e2e.leaves, e2e.jacobian, e2e.gradient, e2e.vjp))
        lines = labels.leaf_grad_lines(trace.leaf_grads)
        body.append(labels.h_para(
            "<br/>".join(labels.h_color(labels.esc(t), labels.GRAD_COLOR) for t in lines),
            size="110%"))
    return labels.h_document("".join(body), base_pt)
