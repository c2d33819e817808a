"""The Jacobian view: the current step's local Jacobian as a heatmap, for tensors too
big to print, with the upstream gradient beside its rows and the VJP under its columns.

The layout is the product itself: ``upstreamᵀ · J = vjp`` reads as "weight each
row of J by the upstream entry beside it, add down each column, get the entry
below". The Jacobian is :meth:`engine.trace.Step.jacobian` (derived from the VJP
by the engine), built only for the step on screen, only while the view is
visible, and only up to :data:`MAX_ENTRIES`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QLabel, QVBoxLayout, QWidget

from engine.groups import GroupStep, step_jacobian
from engine.trace import Step

from ..layouts import fill
from ..model import colours, labels
from ..model.formatting import fmt_num, fmt_shape
from ..model.group_view import group_title, group_vectors
from ..player import Player
from ..qt_override import reported
from ..theme import THEME
from .follow import FollowPlayer

#: Largest Jacobian drawn (entries); above, the view gives its structure in words.
MAX_ENTRIES = 250_000
#: Building J takes one VJP per consumer element; above this many rows it is skipped.
MAX_ROWS = 5_000
#: Cells are annotated with their numbers up to this many per heatmap.
ANNOTATE_MAX = 64
#: Wider than this many times its height, the panel puts its text beside the plot.
SIDE_BY_SIDE_ASPECT = 2.2
#: Share of the width the text column takes when it sits beside the plot.
TEXT_SHARE = 0.36


def _diverging() -> pg.ColorMap:
    """Blue (negative) – white (zero) – red (positive): the sign reads at a glance."""
    return pg.ColorMap([0.0, 0.5, 1.0], list(THEME.diverging))


def _sym_levels(*arrays: np.ndarray) -> tuple[float, float]:
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays if a.size]
    top = max((float(f.max()) for f in finite if f.size), default=0.0)
    top = top if top > 0 else 1.0
    return -top, top


def _int_ticks(count: int, most: int = 10) -> list[tuple[float, str]]:
    """Element indices at cell centres, every 1, 2, 5, 10, ... so at most ``most`` show."""
    step = 1
    while count / step > most:
        for f in (2, 5, 10):
            if count / (step * f) <= most or f == 10:
                step *= f
                break
    return [(i + 0.5, str(i)) for i in range(0, count, step)]


class JacobianView(QWidget):
    """Heatmap of ``player.frame.active``'s Jacobian with upstream and vjp strips."""

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("JacobianView")
        self.player = player
        self._cache: dict[int, np.ndarray | None] = {}
        self._jac: np.ndarray | None = None
        self._texts: list[tuple[pg.PlotItem, pg.TextItem]] = []

        self.title = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.title.setObjectName("JacobianTitle")
        self.info = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.info.setObjectName("JacobianInfo")

        self.plots = pg.GraphicsLayoutWidget(self)
        self.plots.setBackground(THEME.paper)
        cmap = _diverging()
        gl = self.plots.ci
        self.up_plot = gl.addPlot(row=0, col=0)
        self.j_plot = gl.addPlot(row=0, col=1)
        # one-word bar titles: a vertical title longer than a short bar is cut off
        self.j_bar = pg.ColorBarItem(values=(-1, 1), colorMap=cmap, interactive=False,
                                     label="J")
        gl.addItem(self.j_bar, row=0, col=2)
        self.vjp_plot = gl.addPlot(row=1, col=1)
        self.g_bar = pg.ColorBarItem(values=(-1, 1), colorMap=cmap, interactive=False,
                                     label="grad")
        gl.addItem(self.g_bar, row=1, col=2)
        gl.layout.setColumnStretchFactor(1, 8)
        gl.layout.setRowStretchFactor(0, 8)
        gl.layout.setRowMaximumHeight(1, 90)

        self.j_img, self.up_img, self.vjp_img = pg.ImageItem(), pg.ImageItem(), pg.ImageItem()
        for plot, img in ((self.j_plot, self.j_img), (self.up_plot, self.up_img),
                          (self.vjp_plot, self.vjp_img)):
            plot.addItem(img)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setMouseEnabled(x=False, y=False)
            plot.invertY(True)
        self.j_bar.setImageItem(self.j_img)
        self.g_bar.setImageItem([self.up_img, self.vjp_img])
        self.up_plot.setYLink(self.j_plot)
        self.vjp_plot.setXLink(self.j_plot)
        # Same axes on both sides of each link, so the strips line up with J's cells.
        self.up_plot.hideAxis("bottom")
        self.up_plot.showAxis("top")
        self.up_plot.getAxis("top").setTicks([[]])
        # the strip is one cell wide: its title runs down its side (ticks: row indices)
        self.up_plot.setLabel("left", "upstream")
        self.j_plot.hideAxis("left")
        self.j_plot.hideAxis("bottom")
        self.j_plot.showAxis("top")
        self.j_plot.setLabel("top", "column")
        self.vjp_plot.hideAxis("left")
        self.vjp_label = pg.LabelItem("vjp", justify="right")
        gl.addItem(self.vjp_label, row=1, col=0)
        self.plots.scene().sigMouseMoved.connect(self._hover)

        # Tall: title, plot, info stacked. Wide and short (the panel dock of a 1280x720
        # window): the text beside the plot, so the plot keeps the whole height.
        self.text_column = fill(QVBoxLayout(), self.title, self.info, 1, margins=(0, 0, 0, 0))
        self.box = fill(QBoxLayout(QBoxLayout.Direction.TopToBottom, self), (self.plots, 1),
                        self.text_column, margins=(6, 6, 6, 6))
        self._arrange(side_by_side=False)
        self.follow = FollowPlayer(self, player, self._render, self._cache.clear)
        self.apply_theme()

    # ------------------------------------------------------------------ public

    def apply_theme(self) -> None:
        """Fonts follow THEME.scale (presentation mode)."""
        self.title.setFont(THEME.font(11, bold=True))
        self.info.setFont(THEME.font(10))
        tick = THEME.font(9)
        for plot in (self.j_plot, self.up_plot, self.vjp_plot):
            for name in ("left", "top", "bottom"):
                plot.getAxis(name).setTickFont(tick)
        self.plots.ci.layout.setColumnMaximumWidth(0, 70 * THEME.scale)
        self.follow.request()

    def jacobian(self) -> np.ndarray | None:
        """The Jacobian on display (None: no step, or too large)."""
        return self._jac

    def _render(self) -> None:
        frame = self.player.frame
        if frame.active_group is not None:
            self._show_group(frame.active_group)
        else:
            self._show(frame.active)

    @reported
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        size = event.size()
        side = size.width() > SIDE_BY_SIDE_ASPECT * max(size.height(), 1)
        if side != self.side_by_side:
            self._arrange(side)
        if self._jac is not None:
            self.follow.request()  # cell numbers are shown only where they fit

    def _arrange(self, side_by_side: bool) -> None:
        """Text under the plot, or (wide and short) in a column to its right."""
        self.side_by_side = side_by_side
        Direction = QBoxLayout.Direction
        self.box.setDirection(Direction.LeftToRight if side_by_side else Direction.TopToBottom)
        beside = (round(100 * (1 - TEXT_SHARE)), round(100 * TEXT_SHARE))
        for i, stretch in enumerate(beside if side_by_side else (1, 0)):  # plot, text
            self.box.setStretch(i, stretch)
        # the title goes above the plot when stacked (its text reads first)
        self.text_column.removeWidget(self.title)
        self.box.removeWidget(self.title)
        (self.text_column if side_by_side else self.box).insertWidget(0, self.title)

    # ------------------------------------------------------------------ internals

    def _jacobian_of(self, step: Step) -> np.ndarray | None:
        key = id(step)
        if key not in self._cache:
            ok = step.jacobian_size <= MAX_ENTRIES and step.upstream.size <= MAX_ROWS
            self._cache[key] = step.jacobian(force=True) if ok else None
        return self._cache[key]

    def _clear(self) -> None:
        for img in (self.j_img, self.up_img, self.vjp_img):
            img.clear()
        self._jac = None
        self._clear_texts()

    def _clear_texts(self) -> None:
        for plot, item in self._texts:
            plot.removeItem(item)
        self._texts.clear()

    def _annotate(self, plot: pg.PlotItem, grid: np.ndarray, levels: tuple[float, float]) -> None:
        """Write each cell's number on it (small grids whose cells are big enough on
        screen for every number: never cut or overlapping); dark text on light cells."""
        if grid.size > ANNOTATE_MAX:
            return
        font = THEME.font(9)
        fm = QFontMetricsF(font)
        cell = plot.getViewBox().viewPixelSize()  # scene units per pixel, (x, y)
        cell_w = 1.0 / max(cell[0], 1e-9)
        cell_h = 1.0 / max(cell[1], 1e-9)
        widest = max(fm.horizontalAdvance(fmt_num(v)) for v in grid.flat)
        if widest + 4 > cell_w or fm.height() + 2 > cell_h:
            return
        top = max(abs(levels[0]), abs(levels[1])) or 1.0
        for (r, c), v in np.ndenumerate(grid):
            light = not np.isfinite(v) or abs(v) < 0.6 * top
            item = pg.TextItem(fmt_num(v), color=THEME.text if light else THEME.paper,
                               anchor=(0.5, 0.5))
            item.setFont(font)
            item.setPos(c + 0.5, r + 0.5)
            plot.addItem(item)
            self._texts.append((plot, item))

    def _show(self, step: Step | None) -> None:
        if step is None:
            self._clear()
            self.title.setText("Jacobian of the current step")
            self.info.setText("Step into the backward pass to see the local Jacobian "
                              "∂consumer/∂operand of each edge.")
            return
        c, o = labels.h_name(step.consumer), labels.h_name(step.operand)
        m, n = int(step.upstream.size), int(step.vjp.size)
        self.title.setText(
            f"∂{c}/∂{o}: {m}×{n} Jacobian ({fmt_shape(step.upstream.shape)} → "
            f"{fmt_shape(step.vjp.shape)})<br/><span style='font-weight:normal'>"
            f"{labels.esc(step.structure())}</span>")
        self._draw(self._jacobian_of(step), step.upstream, step.vjp)

    def _show_group(self, step: GroupStep) -> None:
        """A collapsed group's (a captured module's) one step: its local Jacobian from
        its inputs to its outputs, built from its members' VJPs up to JACOBIAN_LIMIT."""
        key = id(step)
        if key not in self._cache:
            doc = self.player.doc
            self._cache[key] = step_jacobian(doc.graph, doc.results.forward, step)
        row, col = group_vectors(step)
        outs = ", ".join(labels.h_name(o) for o in step.outputs)
        ins = ", ".join(labels.h_name(x) for x in step.inputs)
        self.title.setText(
            f"∂({outs})/∂({ins}): {row.size}×{col.size} Jacobian of {group_title(step)}"
            f"<br/><span style='font-weight:normal'>composed from its {step.edges} "
            "inner steps' VJPs</span>")
        self._draw(self._cache[key], row, col)

    def _draw(self, jac: np.ndarray | None, upstream: np.ndarray, out: np.ndarray) -> None:
        """J as a heatmap with ``upstream`` beside its rows and ``out`` (the vjp) under
        its columns; in words when J was too large to build."""
        self._jac = jac
        up = np.asarray(upstream, dtype=float).ravel()
        vjp = np.asarray(out, dtype=float).ravel()
        m, n = up.size, vjp.size
        if jac is None:
            self._clear()
            self.info.setText(
                f"Too large to draw ({m:,}×{n:,} = {m * n:,} entries). "
                f"upstream: {labels.esc(labels.inline_tensor(upstream))}; "
                f"vjp: {labels.esc(labels.inline_tensor(out))}")
            return
        self.j_img.setImage(np.nan_to_num(jac.T), autoLevels=False)
        self.up_img.setImage(np.nan_to_num(up.reshape(1, m)), autoLevels=False)
        self.vjp_img.setImage(np.nan_to_num(vjp.reshape(n, 1)), autoLevels=False)
        j_levels, g_levels = _sym_levels(jac), _sym_levels(up, vjp)
        self.j_bar.setLevels(j_levels)
        self.g_bar.setLevels(g_levels)
        self.j_plot.setRange(xRange=(0, n), yRange=(0, m), padding=0)
        self.up_plot.getAxis("left").setTicks([_int_ticks(m)])
        self.j_plot.getAxis("top").setTicks([_int_ticks(n)])
        self.vjp_plot.getAxis("bottom").setTicks([_int_ticks(n)])
        self.up_plot.setXRange(0, 1, padding=0)
        self.vjp_plot.setYRange(0, 1, padding=0)
        self._clear_texts()  # after the ranges: numbers go only where cells fit them
        self._annotate(self.j_plot, jac, j_levels)
        self._annotate(self.up_plot, up.reshape(m, 1), g_levels)
        self._annotate(self.vjp_plot, vjp.reshape(1, n), g_levels)
        red = colours.GRAD_TEXT
        self.info.setText(
            f"upstreamᵀ · J = vjp: <span style='color:{red}'>"
            f"{labels.esc(labels.inline_tensor(upstream))}</span> · J = "
            f"<span style='color:{red}'>{labels.esc(labels.inline_tensor(out))}</span>"
            "<br/>Hover a cell for its value.")

    def _hover(self, pos: QPointF) -> None:
        jac = self._jac
        if jac is None:
            return
        vb = self.j_plot.getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return
        p = vb.mapSceneToView(pos)
        col, row = int(np.floor(p.x())), int(np.floor(p.y()))
        if 0 <= row < jac.shape[0] and 0 <= col < jac.shape[1]:
            self.j_plot.setToolTip(f"J[{row}, {col}] = {fmt_num(jac[row, col])}")
