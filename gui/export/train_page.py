"""The update act of a lesson for a graph with a train block: the handout's last page,
and the loss card closing an animation or a web page.

The optimizer's rule, the first step's update of every parameter with the numbers
plugged in (:mod:`gui.model.train_view`, the engine's own Update), then the loss
curve over the ``--train N`` steps drawn as vector lines, and the parameters reached.
The run is a rehearsal on a copy of the graph: exporting never changes the document.
"""

from __future__ import annotations

import math
from typing import Protocol

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF

from engine.graph import Graph
from engine.train import TrainSpec

from ..model import colours, labels
from ..model.train_view import Rehearsal, mono_lines, number, rehearse, rule, short, step_lines
from .frame_sheet import paint_html

#: Room left of the curve for its axis numbers (``4.019e−15``), in page units, at
#: the handout's 12 points; larger text gets proportionally more (:func:`label_w`).
LABEL_W = 80.0


def label_w(pt: float) -> float:
    return LABEL_W * max(1.0, pt / 12.0)


class Pages(Protocol):
    """What this page needs of the handout's page writer (gui.export.handout._Pages)."""

    painter: QPainter
    width: float
    height: float

    def new_page(self) -> None: ...

    def text(self, html: str, rect: QRectF) -> float: ...


def write_train_page(pages: Pages, graph: Graph, spec: TrainSpec, steps: int, pt: float) -> None:
    """One page: the rule, the first update in numbers, the loss curve over ``steps``."""
    run = rehearse(graph, spec, steps)
    pages.new_page()
    w, h = pages.width, pages.height
    used = pages.text(_page_html(spec, run, pt), QRectF(0, 0, w, h * 0.55))
    curve_h = min(h - used - 60, h * 0.45)
    rect = QRectF(label_w(pt) + 6, used + 24, w - label_w(pt) - 16, curve_h)
    _curve(pages.painter, run.losses, rect, pt)


def _page_html(spec: TrainSpec, run: Rehearsal, pt: float) -> str:
    head = labels.h_heading(f"After the backward pass, the update ({spec.optimizer})",
                            f"{pt * 1.5:.0f}pt")
    body = mono_lines(rule(spec))
    body += labels.h_para(f"Step 1: loss = {labels.esc(number(run.first.loss))}", bold=True)
    body += mono_lines(step_lines(run.first, spec))
    return labels.h_document(head + body + _summary_html(spec, run), pt)


def _summary_html(spec: TrainSpec, run: Rehearsal) -> str:
    """Where the run ends: the last loss (and the file's target), the parameters reached."""
    last = run.losses[-1]
    body = labels.h_para(f"After {len(run.losses)} steps: loss = {labels.esc(number(last))}"
                          + (f" (target {labels.esc(number(spec.target))})"
                             if spec.target is not None else ""), bold=True)
    reached = ", ".join(f"{p} = {short(v, 4)}" for p, v in run.final.items())
    return body + mono_lines([reached])


def paint_loss_card(
    p: QPainter, rect: QRectF, spec: TrainSpec, run: Rehearsal, pt: float
) -> None:
    """An animation's last picture: the loss over the run as a curve under its summary."""
    head = labels.h_heading(f"The loss over {len(run.losses)} training steps ({spec.optimizer})",
                            f"{pt * 1.5:.0f}pt")
    used = paint_html(p, labels.h_document(head + _summary_html(spec, run), pt), rect)
    _curve(p, run.losses, curve_rect(rect, used, pt), pt)


def curve_rect(rect: QRectF, used: float, pt: float) -> QRectF:
    """Where the loss curve of :func:`paint_loss_card` goes: under ``used`` of ``rect``,
    room left for the axis numbers and the caption under it."""
    top = rect.top() + used + pt * 1.5
    return QRectF(rect.left() + label_w(pt) + 6, top, rect.width() - label_w(pt) - 16,
                  rect.bottom() - top - pt * 2.5)


def curve_points(
    losses: tuple[float, ...], rect: QRectF
) -> tuple[bool, float, float, list[QPointF]]:
    """Where each finite loss is drawn in ``rect``: log scale (when all are positive and
    span more than 100x), the lowest and highest plotted value, and the points."""
    finite = [x for x in losses if math.isfinite(x)]
    log = min(finite) > 0 and max(finite) / min(finite) > 100
    ys = [math.log10(x) if log else x for x in finite]
    lo, hi = min(ys), max(ys)
    span = (hi - lo) or 1.0
    n = max(1, len(losses) - 1)
    points = []
    for k, x in enumerate(losses):
        if math.isfinite(x):
            y = math.log10(x) if log else x
            points.append(QPointF(rect.left() + rect.width() * k / n,
                                  rect.bottom() - rect.height() * (y - lo) / span))
    return log, lo, hi, points


def _curve(p: QPainter, losses: tuple[float, ...], rect: QRectF, pt: float) -> None:
    """The loss per step as a polyline in ``rect`` (log scale when all are positive)."""
    if rect.height() < 40 or not any(math.isfinite(x) for x in losses):
        return
    log, lo, hi, points = curve_points(losses, rect)
    p.save()
    p.setPen(QPen(QColor(colours.TEXT), 1.0))
    p.drawRect(rect)
    font = QFont("DejaVu Sans")
    font.setPointSizeF(pt * 0.9)
    p.setFont(font)
    line = QFontMetricsF(font).height()
    top = number(10**hi if log else hi)
    bottom = number(10**lo if log else lo)
    for text, y in ((top, rect.top()), (bottom, rect.bottom())):
        p.drawText(QRectF(rect.left() - label_w(pt) - 4, y - line / 2, label_w(pt), line),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
    p.drawText(QRectF(rect.left(), rect.bottom() + 4, rect.width(), line),
               Qt.AlignmentFlag.AlignCenter,
               f"loss per step, steps 1 to {len(losses)}{' (log scale)' if log else ''}")
    p.setPen(QPen(QColor(colours.EDGE_ACTIVE), 2.0))
    p.drawPolyline(QPolygonF(points))
    p.restore()
