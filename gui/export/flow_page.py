"""The handout's gradient-flow page (a captured trace): the panel's words at the end of
backward, then its chart, the same SVG the web player shows, painted as vectors (its
text stays text in the PDF)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRectF
from PySide6.QtSvg import QSvgRenderer

from ..model.gradient_flow_view import FlowDocument, final_view, flow_html, flow_svg
from ..model.timeline import Timeline
from .train_page import Pages

#: The chart's size in page units (1/96 inch) before it is fitted to the page's width.
CHART = (900, 340)


def write_flow_page(pages: Pages, doc: FlowDocument, timeline: Timeline, pt: float) -> None:
    """One page: where the gradient went, each flag's reason, the log-scale chart."""
    view = final_view(doc, timeline)
    pages.new_page()
    w, h = pages.width, pages.height
    used = pages.text(flow_html(view, pt), QRectF(0, 0, w, h * 0.5))
    if view.error or not view.bars:
        return
    chart_h = min(h - used - 14, w * CHART[1] / CHART[0])
    svg = flow_svg(view, CHART[0], CHART[1], pt=pt)
    QSvgRenderer(QByteArray(svg.encode("utf-8"))).render(
        pages.painter, QRectF(0, used + 14, w, chart_h))
