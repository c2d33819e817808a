"""Where the canvas looks while the backward pass plays: one pure function.

A teacher's audience reads the step being explained, not the whole graph: the
camera frames the active edge's consumer and operand with their direct neighbours,
zoomed so box text is at least as large as the chain-rule text beside it. When a
bigger part of the graph (or all of it) fits at that zoom, the camera shows that
instead: less motion between steps, more context, the same legibility.

The window's canvas animates towards the target, the exporters jump to it; both
call :func:`camera_target` with the boxes' rectangles, so a still frame and the
screen frame the same thing. No Qt here: rectangles are ``(x, y, w, h)`` tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import inf

Rect = tuple[float, float, float, float]  # x, y, width, height (scene units)

#: Empty space kept around the framed boxes, in screen pixels.
MARGIN_PX = 16.0
#: A small graph is not blown up past this multiple of the readable zoom.
MAX_OVER_READABLE = 1.5


@dataclass(frozen=True)
class CameraTarget:
    """The view's goal: scene point at the viewport's centre and the zoom (pixels per
    scene unit); ``nodes`` are the boxes it frames."""

    center: tuple[float, float]
    zoom: float
    nodes: tuple[str, ...]

    def visible_rect(self, viewport: tuple[float, float]) -> Rect:
        """The scene rectangle a ``viewport`` (w, h in pixels) shows at this target."""
        w, h = viewport[0] / self.zoom, viewport[1] / self.zoom
        return (self.center[0] - w / 2, self.center[1] - h / 2, w, h)


def readable_zoom(panel_pt: float, box_pt: float) -> float:
    """The zoom at which box text of ``box_pt`` points shows as large as the
    chain-rule panel's ``panel_pt`` points."""
    return panel_pt / box_pt


def neighbourhood(edges: Iterable[tuple[str, str]], operand: str, consumer: str) -> list[str]:
    """The active edge's consumer and operand, then every node one edge away from
    either (in the order the edges list them)."""
    core = [consumer, operand]
    out = list(core)
    for a, b in edges:
        for x, y in ((a, b), (b, a)):
            if x in core and y not in out:
                out.append(y)
    return out


def union(rects: Iterable[Rect]) -> Rect | None:
    """The bounding rectangle of ``rects`` (None when there are none)."""
    rs = list(rects)
    if not rs:
        return None
    x0 = min(r[0] for r in rs)
    y0 = min(r[1] for r in rs)
    x1 = max(r[0] + r[2] for r in rs)
    y1 = max(r[1] + r[3] for r in rs)
    return (x0, y0, x1 - x0, y1 - y0)


def fit_zoom(rect: Rect, viewport: tuple[float, float], margin_px: float = MARGIN_PX) -> float:
    """The largest zoom at which ``rect`` fits the viewport with ``margin_px`` around."""
    vw = max(viewport[0] - 2 * margin_px, 1.0)
    vh = max(viewport[1] - 2 * margin_px, 1.0)
    return min(vw / max(rect[2], 1e-9), vh / max(rect[3], 1e-9))


def camera_target(
    boxes: Mapping[str, Rect],
    edges: Iterable[tuple[str, str]],
    active: tuple[str, str] | None,
    viewport: tuple[float, float],
    readable: float,
    extra: Sequence[Rect] = (),
    compact_zoom: Mapping[str, float] | None = None,
) -> CameraTarget | None:
    """Where to look for one frame.

    ``boxes``: every node's rectangle; ``edges``: (operand, consumer) pairs;
    ``active``: the active step's (operand, consumer), None outside the backward
    pass; ``viewport``: (w, h) in pixels; ``readable``: the zoom at which box text
    is as large as the chain-rule text; ``extra``: rectangles to be seen with the
    active edge (its label); ``compact_zoom``: per node, the smallest zoom at which
    its compact form (:mod:`gui.model.semantic_zoom`) still shows its name that large.

    The candidates are the whole graph, the active edge's neighbourhood, and its two
    boxes (with ``extra``, then without); each is legible at its fitting zoom when
    that is at least ``readable`` (full boxes) or every box's ``compact_zoom`` (compact
    boxes). The first legible one wins, full boxes before compact ones for the same
    set, more context before less: a small graph stays whole and still, a big one
    follows the edge. When nothing is legible the two boxes are framed whole.
    A legible target zooms in no further than :data:`MAX_OVER_READABLE` x readable.
    """
    if not boxes:
        return None
    everything = list(boxes)
    sets: list[tuple[list[str], list[Rect]]] = [(everything, [])]
    if active is not None and active[0] in boxes and active[1] in boxes:
        operand, consumer = active
        near = [n for n in neighbourhood(edges, operand, consumer) if n in boxes]
        pair = [consumer, operand]
        sets = [(everything, list(extra)), (near, list(extra)), (pair, list(extra)), (pair, [])]
    fits = []
    for nodes, extras in sets:
        rect = union([boxes[n] for n in nodes] + extras)
        assert rect is not None
        fits.append((nodes, rect, fit_zoom(rect, viewport)))

    def compact_ok(nodes: list[str], z: float) -> bool:
        return compact_zoom is not None and all(z >= compact_zoom.get(n, inf) for n in nodes)

    chosen = None
    for nodes, rect, z in fits:
        if z >= readable:
            chosen = (nodes, rect, min(z, readable * MAX_OVER_READABLE))
        elif compact_ok(nodes, z):
            chosen = (nodes, rect, z)
        if chosen is not None:
            break
    if chosen is None:
        chosen = fits[-1]
    nodes, rect, zoom = chosen
    centre = (rect[0] + rect[2] / 2, rect[1] + rect[3] / 2)
    return CameraTarget(centre, zoom, tuple(nodes))


def interpolate(a: CameraTarget, b: CameraTarget, t: float) -> tuple[tuple[float, float], float]:
    """Centre and zoom ``t`` (0..1) of the way from ``a`` to ``b``; the zoom moves
    geometrically, so zooming in and out feel equally fast."""
    t = min(max(t, 0.0), 1.0)
    zoom = a.zoom * (b.zoom / a.zoom) ** t
    cx = a.center[0] + (b.center[0] - a.center[0]) * t
    cy = a.center[1] + (b.center[1] - a.center[1]) * t
    return (cx, cy), zoom
