"""What the gradient-flow panel shows at one moment of playback (no Qt).

:func:`engine.gradient_flow.trace_flow` (or ``graph_flow`` for a graph's leaves) gives
one row per parameter in depth order with its vanishing/exploding flag. This module
puts the player's frame on top: a parameter's bar *fills* once the backward pass has
applied the last step adding into its gradient (its figure is final from then on, so
a bar never shows a number that later changes), the parameter the active step sends
into is marked, and the flags show with their reasons in words. The chart's geometry
(log-scale heights, decades, threshold lines) and its SVG are here too, so the panel's
pyqtgraph chart, the handout's page and the web player's slide draw the same bars.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

from engine.captured import CapturedTrace
from engine.errors import GraphError
from engine.fileformat import GraphFile
from engine.gradient_flow import EXPLODING, VANISHING, FlowRow, graph_flow, trace_flow
from engine.groups import Group

from . import colours, labels
from .formatting import fmt_shape
from .timeline import Direction, Frame, Phase, Timeline

HEADING = "Gradient flow"
#: The thresholds, as the panel states them.
THRESHOLDS = (
    f"vanishing: mean |gradient| below {VANISHING:g} × the largest parameter's; "
    f"exploding: above {EXPLODING:g} × the median"
)
#: How to read the bars.
LEGEND = ("One bar per parameter, in depth order, grouped by module: its mean |gradient| "
          "(log scale). Hollow: the backward pass has not reached it yet; thick blue "
          "outline: the step on screen adds into it; dashed lines: the thresholds.")
#: Decades shown under the smallest bar (room for a zero gradient's stub).
FLOOR_MARGIN = 0.5


class FlowDocument(Protocol):
    """What :func:`document_flow` reads of a document (gui.document.GraphDocument)."""

    @property
    def captured(self) -> tuple[CapturedTrace, object] | None: ...

    @property
    def groups(self) -> Sequence[Group]: ...

    def to_file(self) -> GraphFile: ...


def document_flow(doc: FlowDocument) -> tuple[list[FlowRow], str]:
    """The document's rows (a captured pass's parameters, else the graph's leaves, from
    its own forward and backward) and "" or why there are none, in one line."""
    captured = doc.captured
    try:
        rows = trace_flow(captured[0]) if captured is not None else graph_flow(doc.to_file())
    except GraphError as exc:
        return [], str(exc)
    return rows, "" if rows else "no parameter received a gradient"


def module_titles(groups: Sequence[Group]) -> dict[str, str]:
    """A module's (group's) title by its id: ``0 · Linear`` for a captured ``0``."""
    return {g.id: g.title or g.id for g in groups}


@dataclass(frozen=True)
class FlowBar:
    """One parameter at one frame: reached (its gradient is final) and/or active (the
    step on screen adds into it); ``done_at``: the step k after which it is final."""

    row: FlowRow
    label: str
    module: str
    reached: bool
    active: bool
    done_at: int

    @property
    def flag(self) -> str:
        """Its flag once reached ("" before: the figure is not in yet)."""
        return self.row.flag if self.reached else ""


@dataclass(frozen=True)
class ModuleSpan:
    """A run of neighbouring bars from one module (bar indexes, ``last`` included)."""

    title: str
    first: int
    last: int


@dataclass(frozen=True)
class FlowView:
    """The panel's content at one frame."""

    bars: tuple[FlowBar, ...]
    modules: tuple[ModuleSpan, ...]
    status: str
    error: str = ""

    @property
    def reached(self) -> int:
        return sum(b.reached for b in self.bars)

    @property
    def flagged(self) -> list[FlowBar]:
        return [b for b in self.bars if b.flag]


def _short(name: str, module: str) -> str:
    """``weight`` for ``layers.0.weight`` in module ``layers.0``."""
    return name[len(module) + 1 :] if module and name.startswith(module + ".") else name


class FlowModel:
    """Rows and a timeline: :meth:`view` of any frame is O(parameters)."""

    def __init__(
        self, rows: Sequence[FlowRow], timeline: Timeline, titles: Mapping[str, str],
        error: str = "",
    ) -> None:
        self.rows = list(rows)
        self.timeline = timeline
        self.error = error
        self._updates = [timeline.update_steps(r.name) for r in self.rows]
        self._titles = [titles.get(r.module, r.module) for r in self.rows]
        spans: list[ModuleSpan] = []
        for i, title in enumerate(self._titles):
            if spans and spans[-1].title == title:
                spans[-1] = ModuleSpan(title, spans[-1].first, i)
            else:
                spans.append(ModuleSpan(title, i, i))
        self.modules = tuple(spans)

    @cached_property
    def geometry(self) -> Chart:
        """:func:`chart` of the rows (the same at every frame)."""
        return chart(self.rows)

    def view(self, frame: Frame, mark_active: bool = True) -> FlowView:
        """The flow at ``frame``; ``mark_active``: mark the step's parameters (a page
        showing the end alone does not)."""
        tl, n = self.timeline, len(self.timeline.steps)
        backward = tl.direction is Direction.REVERSE and frame.phase in (
            Phase.BACKWARD, Phase.BACKWARD_DONE, Phase.FORWARD_DONE)
        k = frame.k if backward else 0
        done = backward and frame.phase is Phase.BACKWARD_DONE
        bars = []
        for row, title, updates in zip(self.rows, self._titles, self._updates, strict=True):
            done_at = updates[-1] if updates else n
            full = done or (backward and k >= done_at and k > 0)
            into = mark_active and backward and k > 0 and k in updates
            bars.append(FlowBar(row, _short(row.name, row.module), title, full, into, done_at))
        reached = sum(b.reached for b in bars)
        if tl.direction is Direction.FORWARD:
            status = "forward mode plays: the gradient flow fills in reverse mode"
        elif not backward:
            status = "forward pass: no gradient has flowed yet"
        else:
            status = (f"{reached} of {len(bars)} parameters reached "
                      f"(backward step {k} of {n})")
            names = [b.row.name for b in bars if b.active]
            if names:
                status += "; this step adds into " + ", ".join(names)
        return FlowView(tuple(bars), self.modules, status, self.error)


def number(x: float | None) -> str:
    """A figure as the panel writes it (three significant digits, as the reasons do)."""
    return "—" if x is None else f"{x:.3g}"


def hover_text(bar: FlowBar) -> str:
    """Every figure of one parameter, as plain text (a tooltip)."""
    r = bar.row
    lines = [f"{r.name}  (module {bar.module or '—'})", f"shape {fmt_shape(r.shape)}"]
    if not bar.reached:
        lines.append(f"not reached yet: its gradient is complete after backward step "
                     f"{bar.done_at}")
        return "\n".join(lines)
    lines += [
        f"mean |grad| {number(r.mean_abs)}   max |grad| {number(r.max_abs)}",
        f"‖grad‖ {number(r.norm)}   ratio ‖grad‖/‖weight‖ {number(r.ratio)}",
    ]
    if r.flag:
        lines.append(f"{r.flag.upper()}: {r.reason}")
    return "\n".join(lines)


def flow_html(view: FlowView, base_pt: float) -> str:
    """The panel's words: heading, where the pass is, the thresholds, each flagged
    parameter with its reason (user text escaped here, by :func:`labels.esc`)."""
    body = [labels.h_heading(HEADING, "120%")]
    if view.error:
        body.append(labels.h_para(labels.esc(f"No gradient flow: {view.error}"),
                                  colours.GRAD_TEXT))
        return labels.h_document("".join(body), base_pt)
    body.append(labels.h_para(labels.esc(view.status)))
    flagged = view.flagged  # first: what a reader must see without scrolling
    for b in flagged:
        body.append(labels.h_para(
            f"<b>{labels.esc(b.row.name)}</b> is {labels.esc(b.flag)}: "
            f"{labels.esc(b.row.reason)}", colours.ERROR_TEXT))
    if not flagged and view.reached:
        body.append(labels.h_para("No parameter reached so far is flagged.", colours.RIGHT))
    body.append(labels.h_para(labels.esc("Flags — " + THRESHOLDS), colours.TEXT_MUTED,
                              size="90%"))
    body.append(labels.h_para(labels.esc(LEGEND), colours.TEXT_MUTED, size="90%"))
    return labels.h_document("".join(body), base_pt)


@dataclass(frozen=True)
class Chart:
    """Bars on a log10 axis: each from ``floor`` up to ``tops[i]`` (log10 of its mean
    |gradient|; a zero one gets a stub at the floor), the threshold lines (log10, None
    where undefined) and the decades to label."""

    floor: float
    ceiling: float
    tops: tuple[float, ...]
    vanishing: float | None
    exploding: float | None

    @property
    def decades(self) -> list[int]:
        return list(range(math.ceil(self.floor), math.floor(self.ceiling) + 1))


def chart(rows: Sequence[FlowRow]) -> Chart:
    """The log-scale geometry of ``rows`` (the same at every frame: bars only fill)."""
    means = [r.mean_abs for r in rows]
    positive = [m for m in means if m > 0 and math.isfinite(m)]
    if not positive:
        return Chart(-1.0, 1.0, tuple(-1.0 for _ in rows), None, None)
    logs = [math.log10(m) for m in positive]
    largest, median = max(means), float(np.median(means))
    vanishing = math.log10(VANISHING * largest)
    exploding = math.log10(EXPLODING * median) if median > 0 else None
    low = min([*logs, vanishing]) - FLOOR_MARGIN
    high = max(logs) + FLOOR_MARGIN
    if exploding is not None and exploding <= high + 1:
        high = max(high, exploding + 0.2)
    elif exploding is not None:
        exploding = None  # far above every bar: stated in words, not drawn off the chart
    floor, ceiling = math.floor(low), math.ceil(high)
    tops = tuple(math.log10(m) if m > 0 and math.isfinite(m) else floor + 0.05 for m in means)
    return Chart(float(floor), float(ceiling), tops, vanishing, exploding)


def bar_fill(bar: FlowBar) -> str | None:
    """The colour a bar fills with; None while the pass has not reached it (outline)."""
    if not bar.reached:
        return None
    return colours.ERROR if bar.flag else colours.EDGE_DONE


def flow_svg(view: FlowView, width: int = 900, height: int = 320, pt: float = 11.0) -> str:
    """The chart as an inline SVG element (no script, nothing loaded): decades left,
    the threshold lines named right, one bar per parameter grouped by module (labels
    under), flags written on their bars, the active parameter outlined; names escaped
    by :func:`labels.esc`."""
    c = chart([b.row for b in view.bars])
    px = pt * 96 / 72
    left, right, top, bottom = 5.0 * px, 6.0 * px, 1.6 * px, 3.4 * px  # right: line names
    plot_w, plot_h = width - left - right, height - top - bottom
    span = c.ceiling - c.floor

    def y(v: float) -> float:
        return top + plot_h * (c.ceiling - v) / span

    n = max(1, len(view.bars))
    slot = plot_w / n
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
           f'font-family="DejaVu Sans, Verdana, sans-serif" font-size="{px:.1f}">',
           f'<rect width="{width}" height="{height}" fill="{colours.PAPER}"/>']
    for i, m in enumerate(view.modules):
        x0 = left + m.first * slot
        w = (m.last - m.first + 1) * slot
        if i % 2 == 0:
            out.append(f'<rect x="{x0:.1f}" y="{top:.1f}" width="{w:.1f}" '
                       f'height="{plot_h:.1f}" fill="{colours.GROUP_FILL}"/>')
        room = w - 4

        def fits(text: str, room: float = room) -> bool:
            return len(text) * 0.6 * px <= room

        label = module_label(m.title, fits)
        if label:
            out.append(_svg_text(labels.esc(label), x0 + w / 2, height - 0.6 * px,
                                 colours.TEXT, "middle"))
    for d in c.decades:
        out.append(f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{y(d):.1f}" '
                   f'y2="{y(d):.1f}" stroke="{colours.GRID_MAJOR}"/>')
        out.append(_svg_text(f"1e{d}", left - 0.3 * px, y(d) + 0.35 * px, colours.TEXT, "end"))
    for value, name in ((c.vanishing, "vanishing"), (c.exploding, "exploding")):
        if value is not None:
            out.append(f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{y(value):.1f}" '
                       f'y2="{y(value):.1f}" stroke="{colours.ERROR}" stroke-dasharray="6 4"/>')
            out.append(_svg_text(name, left + plot_w + 0.3 * px, y(value) + 0.35 * px,
                                 colours.ERROR_TEXT, "start"))
    for i, (bar, tip) in enumerate(zip(view.bars, c.tops, strict=True)):
        x0, w = left + i * slot + 0.15 * slot, 0.7 * slot
        fill = bar_fill(bar)
        stroke = colours.NODE_SELECTED if bar.active else colours.RULE
        y0 = y(tip)
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" '
                   f'height="{max(0.0, y(c.floor) - y0):.1f}" fill="{fill or "none"}" '
                   f'stroke="{stroke}" stroke-width="{3 if bar.active else 1}">'
                   f"<title>{labels.esc(hover_text(bar))}</title></rect>")
        if bar.flag and len(bar.flag) * 0.6 * px <= slot:
            out.append(_svg_text(labels.esc(bar.flag), x0 + w / 2, y0 - 0.3 * px,
                                 colours.ERROR_TEXT, "middle"))
        if len(bar.label) * 0.6 * px <= slot - 4:
            out.append(_svg_text(labels.esc(bar.label), x0 + w / 2,
                                 top + plot_h + 1.1 * px, colours.TEXT_MUTED, "middle"))
    out.append(_svg_text("mean |gradient| (log scale)", left, top - 0.45 * px, colours.TEXT,
                         "start"))
    out.append("</svg>")
    return "\n".join(out)


def module_label(title: str, fits: Callable[[str], bool]) -> str:
    """What goes under a module's bars: its title (``layers.0 · Linear``), else its path
    alone when only that ``fits``, else nothing."""
    for text in (title, title.split(" · ")[0]):
        if text and fits(text):
            return text
    return ""


def _svg_text(escaped: str, x: float, y: float, colour: str, anchor: str) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}" '
            f'text-anchor="{anchor}">{escaped}</text>')


def final_view(doc: FlowDocument, timeline: Timeline) -> FlowView:
    """The flow when backward is done (every parameter reached), as exports show it."""
    rows, error = document_flow(doc)
    model = FlowModel(rows, timeline, module_titles(doc.groups), error)
    return model.view(timeline.frame(timeline.end), mark_active=False)
