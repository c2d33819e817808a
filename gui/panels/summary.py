"""The summary: the leaves' ``.grad`` in PyTorch's words, and the whole backward
call seen at once as ``vᵀ J`` with ``J`` the end-to-end Jacobian.

The end-to-end Jacobian comes from :func:`engine.autodiff.end_to_end_jacobian`
(through :meth:`Player.end_to_end_or_computing`, cached per results, off the UI
thread when it is not cheap: "computing…" meanwhile); this panel only lays it
out, with one column group per leaf, and lists the paths whose edge Jacobians
compose into it. "Backward again" and "Zero grad" call the document, which
accumulates into ``.grad`` exactly as PyTorch does.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from engine.trace import JACOBIAN_LIMIT

from ..document import GraphDocument
from ..layouts import fill
from ..model import colours, labels
from ..model.end_to_end import Computing
from ..model.timeline import Phase
from ..player import Player
from ..qt_override import reported
from ..theme import THEME, paper_browser, style
from .follow import FollowPlayer

BASE_PT = 11.0


class SummaryPanel(QWidget):
    """Leaf gradients (following playback), end-to-end Jacobian, vᵀJ, and the buttons."""

    def __init__(self, doc: GraphDocument, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SummaryPanel")
        self.doc = doc
        self.player = player
        self.backward_again_button = QPushButton("Backward again", self)
        self.backward_again_button.setToolTip(
            "Run backward once more: the leaves' .grad accumulate, as in PyTorch")
        self.backward_again_button.clicked.connect(doc.backward_again)
        self.zero_grad_button = QPushButton("Zero grad", self)
        self.zero_grad_button.setToolTip("Clear the leaves' .grad (optimizer.zero_grad())")
        self.zero_grad_button.clicked.connect(doc.zero_grad)
        buttons = fill(QHBoxLayout(), self.backward_again_button, self.zero_grad_button, 1,
                       margins=(6, 6, 6, 0))
        # Two texts: the leaves' .grad follow every frame; the end-to-end part (J, vᵀJ,
        # paths) is large and changes with the results only, so it is laid out once.
        self.browser = self._text_browser("SummaryText")
        self.static_browser = self._text_browser("SummaryEndToEnd")
        layout = fill(QVBoxLayout(self), buttons, self.browser, (self.static_browser, 1),
                      margins=(0, 0, 0, 0))
        layout.setSpacing(0)
        self._static: str | None = None  # the end-to-end part: changes with the results only
        self._static_shown: str | None = None
        self.follow = FollowPlayer(self, player, self._render, self._new_results)
        player.endToEndReady.connect(self._end_to_end_ready)
        self.apply_theme()

    def apply_theme(self) -> None:
        """Re-render at THEME.scale (the window calls this after changing it)."""
        font = THEME.font(10)
        self.backward_again_button.setFont(font)
        self.zero_grad_button.setFont(font)
        self._static = None
        self.follow.request()

    def text(self) -> str:
        """What the panel says now, as plain text (rendered first if it was deferred)."""
        self.follow.flush()
        return self.browser.toPlainText() + "\n" + self.static_browser.toPlainText()

    def _text_browser(self, name: str) -> QTextBrowser:
        browser = QTextBrowser(self)
        browser.setObjectName(name)
        style(browser, paper_browser)
        browser.document().setDocumentMargin(10)
        return browser

    @reported
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._fit_leaf_text()

    def _fit_leaf_text(self) -> None:
        """The leaves' text as tall as it is (up to two thirds of the panel), the rest below."""
        doc = self.browser.document()
        doc.setTextWidth(max(1, self.browser.viewport().width()))
        height = int(doc.size().height()) + 2 * self.browser.frameWidth() + 2
        self.browser.setFixedHeight(max(40, min(height, (2 * self.height()) // 3 or height)))

    def _new_results(self) -> None:
        self._static = None  # the frame change that follows renders

    def _end_to_end_ready(self) -> None:
        self._static = None
        self.follow.request()

    def _render(self) -> None:
        trace = self.doc.results.trace
        self.backward_again_button.setEnabled(trace is not None)
        self.zero_grad_button.setEnabled(bool(self.doc.prior_grads))
        self.browser.setHtml(self._html(with_static=False))
        self._fit_leaf_text()
        static = labels.h_document(self._static or "", BASE_PT * THEME.scale)
        if static != self._static_shown:  # once per results (and theme)
            self._static_shown = static
            self.static_browser.setHtml(static)

    def html(self) -> str:
        """Everything the panel says for the player's frame, as one HTML document."""
        return self._html(with_static=True)

    def _html(self, with_static: bool) -> str:
        results = self.doc.results
        trace = results.trace
        frame = self.player.frame
        body: list[str] = []
        if trace is None:
            reason = results.backward_error
            body.append(labels.h_heading("No backward pass"))
            body.append(labels.h_para(labels.esc(str(reason) if reason else "—"),
                                      colours.GRAD_TEXT))
            return labels.h_document("".join(body), BASE_PT * THEME.scale)
        leaves = list(trace.leaves)
        if frame.phase is Phase.BACKWARD_DONE:
            status = "backward done: these are the values PyTorch would print"
            grads = trace.leaf_grads
        elif frame.phase in (Phase.BACKWARD, Phase.FORWARD_DONE) and frame.position >= \
                self.player.forward_done_position:
            status = (f"backward step {frame.k} of {frame.n}: still accumulating"
                      if frame.k else "backward not started yet")
            grads = {leaf: frame.grads.get(leaf) for leaf in leaves}
        else:
            status = "forward pass playing: no gradients yet"
            grads = {leaf: None for leaf in leaves}
        if self.doc.prior_grads:
            status += " (.grad includes earlier backward calls; Zero grad clears it)"
        body.append(labels.leaf_grads_html(leaves, grads, status))
        if self._static is None:
            self._static = self._end_to_end_html()
        if with_static:
            body.append(self._static)
        return labels.h_document("".join(body), BASE_PT * THEME.scale)

    def _end_to_end_html(self) -> str:
        """J, vᵀJ and the path composition: the same for every frame of one result."""
        results, trace = self.doc.results, self.doc.results.trace
        body: list[str] = []
        e2e = self.player.end_to_end_or_computing()
        if isinstance(e2e, Computing):
            body.append("<hr/>")
            body.append(labels.h_para(f"End-to-end Jacobian: {labels.COMPUTING_TEXT}",
                                      colours.TEXT_MUTED))
        elif e2e is not None:
            fwd = results.forward
            body.append("<hr/>")
            y = labels.h_name(e2e.output)
            wrt = ", ".join(labels.h_name(x) for x in e2e.leaves)
            body.append(labels.h_heading(f"End-to-end Jacobian J = ∂{y}/∂({wrt})", "110%"))
            if e2e.jacobian is None:
                body.append(labels.h_para("Too large to show (more than "
                                          f"{JACOBIAN_LIMIT:,} entries).", colours.TEXT_MUTED))
            else:
                body.append(labels.jacobian_table_html(
                    e2e.output, fwd.values[e2e.output].shape, e2e.leaves,
                    [fwd.values[x].shape for x in e2e.leaves], e2e.jacobian))
            body.append(labels.h_heading("vᵀJ: this backward call in one product", "110%"))
            body.append(e2e.html(heading=False))
            if len(trace.steps) <= 400:  # type: ignore[union-attr]
                body.append(labels.composition_html(trace.steps, e2e.output, e2e.leaves,  # type: ignore[union-attr]
                                                    e2e.sizes, e2e.jacobian))
        return "".join(body)
