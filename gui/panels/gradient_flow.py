"""The gradient-flow panel: each parameter's mean |gradient| on a log scale, across depth.

One bar per parameter (depth order, grouped by module with its title above), filling
as the backward pass reaches it, the active step's parameter outlined, flagged bars in
the error colour with the flag written on them and the thresholds drawn as dashed
lines named on the right; the words beside say where the pass is, the thresholds and
each flag's reason.
Everything shown is :class:`gui.model.gradient_flow_view.FlowView` of the player's
frame; the rows are computed once per results (and only while the panel is visible).
Hovering a bar shows its figures as a tooltip.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QHBoxLayout, QTextBrowser, QWidget

from ..layouts import fill
from ..model import colours
from ..model.gradient_flow_view import (
    FlowModel,
    FlowView,
    bar_fill,
    chart,
    document_flow,
    flow_html,
    hover_text,
    module_label,
    module_titles,
)
from ..player import Player
from ..qt_override import reported
from ..theme import THEME, paper_browser, style
from .follow import FollowPlayer

#: Points of the words beside the chart, and of its labels, before THEME.scale.
TEXT_PT, LABEL_PT = 10.0, 9.0
#: Share of the panel's width the chart takes.
CHART_SHARE = 64
#: A bar's share of its slot.
BAR_WIDTH = 0.7


class GradientFlowPanel(QWidget):
    """The chart and its words for ``player.frame``; see the module docstring."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("GradientFlowPanel")
        self.player = player
        self._model: FlowModel | None = None
        self.view: FlowView | None = None
        self._drawn: tuple | None = None  # what the chart shows (see _render)
        self.plot = pg.PlotWidget(self)
        self.plot.setObjectName("GradientFlowChart")
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.showAxis("right")  # names the threshold lines
        item.setMouseEnabled(x=False, y=False)
        # Reused from render to render (a new TextItem per render cost milliseconds):
        # the marks and flag words over the bars, and the two threshold lines.
        self._labels: list[pg.TextItem] = []
        self._shown = 0  # how many of _labels this render uses
        self._lines = [pg.InfiniteLine(angle=0) for _ in range(2)]
        for line in self._lines:
            item.addItem(line)
            line.setZValue(5)  # over the bands and bars, added after them
            line.setVisible(False)
        self.bands = pg.BarGraphItem(x=[], height=[], width=1.0)
        self.bars = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH)
        item.addItem(self.bands)
        item.addItem(self.bars)
        self.bands.setVisible(False)  # until there are bars (see _render)
        self.bars.setVisible(False)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.hovered: int | None = None  # the bar under the mouse (tests read it)
        self.words = QTextBrowser(self)
        self.words.setObjectName("GradientFlowText")
        style(self.words, paper_browser)
        fill(QHBoxLayout(self), (self.plot, CHART_SHARE), (self.words, 100 - CHART_SHARE),
             margins=(0, 0, 0, 0)).setSpacing(0)
        self.follow = FollowPlayer(self, player, self._render, self._new_results)
        self.apply_theme()

    # ------------------------------------------------------------------ public

    def apply_theme(self) -> None:
        """Colours and fonts from THEME (presentation mode scales them)."""
        self.plot.setBackground(QColor(colours.PAPER))
        font = THEME.font(LABEL_PT)
        # each axis: the ink of its labels, and the widest one its width must fit
        for name, ink, widest in (("left", colours.TEXT, "1e-10"), ("bottom", colours.TEXT, ""),
                                  ("right", colours.ERROR_TEXT, "exploding")):
            axis = self.plot.getAxis(name)
            axis.setTickFont(font)
            axis.setTextPen(QColor(ink))
            axis.setPen(QColor(colours.RULE))
            if widest:
                axis.setWidth(int(QFontMetricsF(font).horizontalAdvance(widest) + 12))
        self.follow.request()

    def text(self) -> str:
        """The panel's words now, as plain text (rendered first if it was deferred)."""
        self.follow.flush()
        return self.words.toPlainText()

    def bar_centre(self, index: int) -> QPointF:
        """Where bar ``index``'s middle is, in the chart's scene (tests hover there)."""
        c = self._model.geometry if self._model else chart([])
        top = c.tops[index] if index < len(c.tops) else c.ceiling
        vb = self.plot.getPlotItem().getViewBox()
        return vb.mapViewToScene(QPointF(index, (c.floor + top) / 2))

    # ------------------------------------------------------------------ internals

    def _new_results(self) -> None:
        self._model = None  # the frame change that follows renders

    def _flow_model(self) -> FlowModel:
        if self._model is None or self._model.timeline is not self.player.timeline:
            doc = self.player.doc
            rows, error = document_flow(doc)
            self._model = FlowModel(rows, self.player.timeline, module_titles(doc.groups),
                                    error)
        return self._model

    def _render(self) -> None:
        model = self._flow_model()
        view = self.view = model.view(self.player.frame)
        self.words.setHtml(flow_html(view, TEXT_PT * THEME.scale))
        # most steps fill no bar and mark the same ones: the chart is drawn again only
        # when what it shows changed (the rows, a bar's state, its size, the theme)
        key = (model, tuple((b.reached, b.active) for b in view.bars),
               self._slot_px(len(view.bars)), THEME.scale, THEME.name)
        if key == self._drawn:
            return
        self._drawn = key
        self._shown = 0
        c, n = model.geometry, len(view.bars)
        # the dashed threshold lines are named on the right axis, clear of every bar
        named = []
        for line, value, name in zip(self._lines, (c.vanishing, c.exploding),
                                     ("vanishing", "exploding"), strict=True):
            line.setVisible(value is not None)  # None without bars, too
            if value is not None:
                line.setPen(self._pen(colours.ERROR, 1.5, dashed=True))
                line.setValue(value)
                named.append((value, name))
        self.plot.getAxis("right").setTicks([named])
        # an empty BarGraphItem crashes Qt when painted: no bars, no items shown
        for bars in (self.bars, self.bands):
            bars.setVisible(n > 0)
        if not n:
            self._hide_unused_labels()
            for name in ("bottom", "left"):
                self.plot.getAxis(name).setTicks([[]])
            return
        xs = np.arange(n, dtype=float)
        self.bars.setOpts(
            x=xs, y0=[c.floor] * n, height=[t - c.floor for t in c.tops], width=BAR_WIDTH,
            brushes=[pg.mkBrush(bar_fill(b)) if bar_fill(b) else pg.mkBrush(None)
                     for b in view.bars],
            pens=[self._pen(colours.NODE_SELECTED, 2) if b.active
                  else self._pen(colours.RULE, 1) for b in view.bars],
        )
        spans = [m for i, m in enumerate(view.modules) if i % 2 == 0]
        self.bands.setOpts(
            x0=[m.first - 0.5 for m in spans], width=[m.last - m.first + 1 for m in spans],
            y0=[c.floor] * len(spans), height=[c.ceiling - c.floor] * len(spans),
            brush=pg.mkBrush(colours.GROUP_FILL), pen=pg.mkPen(None),
        )
        fm = QFontMetricsF(THEME.font(LABEL_PT))
        # room above the top decade for its label and the marks over the tallest bar
        self.plot.getPlotItem().setRange(xRange=(-0.5, max(0.5, n - 0.5)),
                                         yRange=(c.floor, c.ceiling + 0.4), padding=0)
        slot = self._slot_px(n)
        for i, b in enumerate(view.bars):
            above = c.tops[i]
            if b.active:  # the step on screen: a mark over its bar
                self._text("▼", i, above, colours.NODE_SELECTED, (0.5, 1))
                above += fm.height() * self._units_per_px()
            if b.flag and fm.horizontalAdvance(b.flag) <= max(slot, 3 * fm.height()):
                self._text(b.flag, i, above, colours.ERROR_TEXT, (0.5, 1))
        self._hide_unused_labels()
        self.plot.getAxis("bottom").setTicks([self._ticks(view, fm, slot)])
        self.plot.getAxis("left").setTicks([[(d, f"1e{d}") for d in c.decades]])

    @staticmethod
    def _ticks(view: FlowView, fm: QFontMetricsF, slot: float) -> list[tuple[float, str]]:
        """Under the bars: each parameter's name when they all fit, else each module's
        title (or its path alone) at the middle of its bars, where it fits."""
        if all(fm.horizontalAdvance(b.label) <= slot - 4 for b in view.bars):
            return [(i, b.label) for i, b in enumerate(view.bars)]
        ticks = []
        for m in view.modules:
            room = (m.last - m.first + 1) * slot - 6
            label = module_label(m.title, lambda t, room=room: fm.horizontalAdvance(t) <= room)  # type: ignore[misc]
            if label:
                ticks.append(((m.first + m.last) / 2, label))
        return ticks

    def _units_per_px(self) -> float:
        """The chart's y units per pixel (a mark stacked over another)."""
        return float(self.plot.getPlotItem().getViewBox().viewPixelSize()[1])

    def _slot_px(self, n: int) -> float:
        """One bar's slot in pixels (what a label under or over it may take)."""
        vb = self.plot.getPlotItem().getViewBox()
        return vb.width() / max(1, n) if vb.width() > 0 else 0.0

    def _text(self, text: str, x: float, y: float, colour: str, anchor: tuple) -> None:
        if self._shown == len(self._labels):
            label = pg.TextItem()
            self.plot.getPlotItem().addItem(label)
            self._labels.append(label)
        label = self._labels[self._shown]
        self._shown += 1
        label.setText(text, color=colour)
        label.setAnchor(anchor)
        label.setFont(THEME.font(LABEL_PT))
        label.setPos(x, y)
        label.setVisible(True)

    def _hide_unused_labels(self) -> None:
        for label in self._labels[self._shown :]:
            label.setVisible(False)

    @staticmethod
    def _pen(colour: str, width: float, dashed: bool = False) -> QPen:
        pen = pg.mkPen(colour, width=width * min(THEME.scale, 1.5))  # thin bars stay bars
        if dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    @reported
    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)  # type: ignore[arg-type]
        if self._model is not None:
            self.follow.request()  # labels are shown only where they fit

    def _hover(self, pos: QPointF) -> None:
        view = self.view
        vb = self.plot.getPlotItem().getViewBox()
        if view is None or not view.bars or not vb.sceneBoundingRect().contains(pos):
            return
        index = int(round(vb.mapSceneToView(pos).x()))
        if 0 <= index < len(view.bars):
            self.hovered = index
            self.plot.setToolTip(hover_text(view.bars[index]))
