"""Where the canvas looks while the backward pass plays: one pure function.

A teacher's audience reads the step being explained: the camera frames the active
edge's consumer and operand with their direct neighbours, zoomed so box text is at
least as large as the chain-rule text beside it. A graph whose every box shows its
name and number at that size is shown whole instead, and stays still; so is a graph
of up to :data:`SMALL_GRAPH_NODES` boxes at the steps where every name (and the
active boxes' gradient, shortened to the box if need be) reaches that size: a class
takes in the whole computation.
Any other graph is followed at every step (never whole at one step and close up at
the next), comfortably closer than its whole view would need, at one zoom while the
neighbourhood fits, so the camera pans along the graph rather than jumping, and
keeps the graph filling the frame at its ends.

The window's canvas animates towards the target, the exporters jump to it; both
call :func:`camera_target` with the boxes' rectangles, so a still frame and the
screen frame the same thing. No Qt here: rectangles are ``(x, y, w, h)`` tuples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import inf

Rect = tuple[float, float, float, float]  # x, y, width, height (scene units)

#: Empty space kept around the framed boxes, in screen pixels.
MARGIN_PX = 16.0
#: A small graph is not blown up past this multiple of the readable zoom.
MAX_OVER_READABLE = 1.5
#: Following the step, the camera looks this many times closer than the zoom at which
#: the whole graph would just be legible: a box's name then has room to grow past the
#: floor size. Measured (tesseract on 25-60 node graphs): at 1.5 the names of boxes
#: with three lines stayed near the floor and were misread; 1.6 to 1.9 read them.
COMFORT = 1.7
#: A graph of up to this many boxes is shown whole at every step where its names (and
#: the active boxes' gradient) are legible, even if the numbers under the other names
#: are not: few enough for a class to take in at once (the legibility benchmark counts
#: every name up to this size, the active neighbourhood beyond).
SMALL_GRAPH_NODES = 20


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
    touching = [(a, b) for a, b in edges if a in core or b in core]  # one quick pass
    for a, b in touching:
        for x, y in ((a, b), (b, a)):
            if x in core and y not in out:
                out.append(y)
    return out


def union(rects: Iterable[Rect]) -> Rect | None:
    """The bounding rectangle of ``rects`` (None when there are none)."""
    rs = list(rects)
    if not rs:
        return None
    xs, ys, ws, hs = zip(*rs, strict=True)  # columns: builtins run over them in C
    x0, y0 = min(xs), min(ys)
    x1 = max(map(float.__add__, map(float, xs), map(float, ws)))
    y1 = max(map(float.__add__, map(float, ys), map(float, hs)))
    return (x0, y0, x1 - x0, y1 - y0)


def fit_zoom(rect: Rect, viewport: tuple[float, float], margin_px: float = MARGIN_PX) -> float:
    """The largest zoom at which ``rect`` fits the viewport with ``margin_px`` around."""
    vw = max(viewport[0] - 2 * margin_px, 1.0)
    vh = max(viewport[1] - 2 * margin_px, 1.0)
    return min(vw / max(rect[2], 1e-9), vh / max(rect[3], 1e-9))


def least_legible(
    readable: float, zooms: Mapping[str, float] | None, nodes: Iterable[str] | None = None
) -> float:
    """The zoom at which every box (of ``nodes``; None: all of ``zooms``) is legible:
    ``readable``, or less when each has a compact form legible from its zoom in
    ``zooms`` (:mod:`gui.model.semantic_zoom`)."""
    if zooms is None:
        return readable
    if nodes is None:
        return min(readable, max(zooms.values(), default=readable))
    return min(readable, max((zooms.get(n, inf) for n in nodes), default=readable))


def camera_target(
    boxes: Mapping[str, Rect],
    edges: Iterable[tuple[str, str]],
    active: tuple[str, str] | None,
    viewport: tuple[float, float],
    readable: float,
    extra: Sequence[Rect] = (),
    compact_zoom: Mapping[str, float] | None = None,
    number_zoom: Mapping[str, float] | None = None,
    whole_zoom: Mapping[str, float] | None = None,
    label_fits: Callable[[Rect, float], bool] | None = None,
    bounds: Rect | None = None,
    anchor: Rect | None = None,
    extra_scale: Callable[[float], float] | None = None,
    most: Callable[[Mapping[str, float]], float] | None = None,
    ids: Sequence[str] | None = None,
) -> CameraTarget | None:
    """Where to look for one frame.

    ``boxes``: every node's rectangle; ``edges``: (operand, consumer) pairs;
    ``active``: the active step's (operand, consumer), None outside the backward
    pass; ``viewport``: (w, h) in pixels; ``readable``: the zoom at which box text
    is as large as the chain-rule text; ``extra``: rectangles to be seen with the
    active edge (its label); ``compact_zoom``: per node, the smallest zoom at which
    its compact form (:mod:`gui.model.semantic_zoom`) still shows its name that large
    (the active edge's boxes: their gradient too); ``number_zoom``: the same with the
    number under the name; ``whole_zoom``: the same with the active boxes' gradient
    line shortened to the box, as a whole small graph may show it (both default to
    ``compact_zoom``); ``label_fits``: whether the step's label finds room in a view of a
    scene rectangle at a zoom (asked only of a whole view that the shortened lines
    alone make legible); ``bounds``: the union of ``boxes``, when the caller keeps it
    (at 10,000 boxes, computing it was most of a call); ``anchor``: the rectangle to look at
    when no edge is active and the whole graph is not legible (the output's box, or a
    collapsed module's playing as one step), as :func:`opening_view` opens a view,
    looked at from at least ``readable`` when it fits; ``extra_scale``: how much larger
    than given ``extra`` is at a zoom (the label keeps its size on screen, so it grows in
    scene units as the camera moves out: framed at its size at zoom 1, a big label had
    no room beside the step's boxes in presentation mode); ``most``: the greatest zoom of
    one of the zoom tables over every box (inf when a box has none), when the caller
    keeps it (at 5,000 boxes, walking them twice was most of a call); ``ids``: every key
    of ``boxes`` in order, as a tuple, when the caller keeps it (two copies of 5,000 ids
    a call, else).

    The whole graph is shown, still, when every box shows its name and number in it:
    at ``readable`` or more (full boxes), or at every box's ``number_zoom`` (compact
    boxes). A graph of up to :data:`SMALL_GRAPH_NODES` boxes is also shown whole at a
    step where every box shows its name (the active edge's boxes their gradient too,
    shortened if need be, provided the label then ``label_fits``), and followed at the
    others. A bigger graph too
    big to show whole is too big for every step, so the decision is the graph's, not
    the step's (no switching between a whole view and a close-up from one step to
    the next): the camera follows the step, framing the active edge's neighbourhood
    (with ``extra``), else its two boxes (with ``extra``, then without), the first
    whose names are legible at its fitting zoom. It looks at them at :data:`COMFORT`
    times the zoom the whole graph would need (text comfortably above the floor, the
    same zoom from step to step, so the camera only pans), or further out when they
    need it, and never past the graph's edge while the graph fills the view (context,
    not empty paper). When nothing is legible the two boxes are framed whole. No
    target zooms in further than :data:`MAX_OVER_READABLE` x readable.
    """
    if not boxes:
        return None
    cap = readable * MAX_OVER_READABLE
    everything = tuple(boxes) if ids is None else ids
    drawn = bounds if bounds is not None else union(boxes.values())
    world = union([r for r in (drawn, *extra) if r is not None])
    assert world is not None

    def floor(nodes: Sequence[str], zooms: Mapping[str, float] | None) -> float:
        if nodes is everything and zooms is not None:
            if most is not None:
                return min(readable, most(zooms))
            if zooms.keys() == boxes.keys():
                return least_legible(readable, zooms)  # every box: in C
        return least_legible(readable, zooms, nodes)

    numbers = compact_zoom if number_zoom is None else number_zoom
    small = len(everything) <= SMALL_GRAPH_NODES
    whole = fit_zoom(world, viewport)
    whole_view = CameraTarget(_centre(world), min(whole, cap), tuple(everything))
    legible_whole = whole >= floor(everything, compact_zoom if small else numbers)
    if active is None or not (active[0] in boxes and active[1] in boxes):
        if legible_whole or anchor is None:
            return whole_view
        # the zoom steps follow at, or closer if the anchor's own text needs it (a
        # module's caption does not grow as compact boxes do), the anchor whole in view
        zoom = min(max(COMFORT * floor(everything, numbers), readable), cap,
                   fit_zoom(anchor, viewport))
        return CameraTarget(_clamped(anchor, world, viewport, zoom), zoom, ())
    if legible_whole:
        return whole_view
    if small and whole_zoom is not None and whole >= floor(everything, whole_zoom):
        if label_fits is None or label_fits(whole_view.visible_rect(viewport), whole_view.zoom):
            return whole_view  # legible with the active boxes' gradient shortened
    operand, consumer = active
    near = [n for n in neighbourhood(edges, operand, consumer) if n in boxes]
    pair = [consumer, operand]
    steady = min(COMFORT * floor(everything, numbers), cap)
    fits = []
    for nodes, extras in ((near, list(extra)), (pair, list(extra)), (pair, [])):
        fits.append((nodes, *_fitted([boxes[n] for n in nodes], extras, viewport, extra_scale)))
    # the two boxes with the label, their gradient lines shortened to the box if need
    # be, before the two boxes alone: with no room beside them, a big label had nowhere
    # whole in view off the boxes
    shortened = compact_zoom if whole_zoom is None else whole_zoom
    tries = [(fits[0], compact_zoom), (fits[1], compact_zoom), (fits[1], shortened),
             (fits[2], compact_zoom)]
    for (nodes, rect, z), zooms in tries:
        if z >= floor(nodes, zooms):
            zoom = min(z, steady)
            return CameraTarget(_clamped(rect, world, viewport, zoom), zoom, tuple(nodes))
    nodes, rect, zoom = fits[-1]
    return CameraTarget(_centre(rect), zoom, tuple(nodes))


def _fitted(
    rects: list[Rect], extras: list[Rect], viewport: tuple[float, float],
    scale_at: Callable[[float], float] | None,
) -> tuple[Rect, float]:
    """The union of ``rects`` and ``extras`` and the zoom it fits at, each extra grown
    about its centre by ``scale_at`` the zoom (found by a few rounds: a smaller zoom, a
    larger extra)."""
    rect = union(rects + extras)
    assert rect is not None
    zoom = fit_zoom(rect, viewport)
    if scale_at is None or not extras:
        return rect, zoom
    for _ in range(8):
        k = scale_at(zoom)
        grown = [(x + w * (1 - k) / 2, y + h * (1 - k) / 2, w * k, h * k) for x, y, w, h in extras]
        rect = union(rects + grown)
        assert rect is not None
        before, zoom = zoom, fit_zoom(rect, viewport)
        if abs(zoom - before) <= 1e-3 * before:
            break
    return rect, zoom


def opening_view(
    world: Rect, anchor: Rect, viewport: tuple[float, float], legible: float, cap: float
) -> tuple[tuple[float, float], float]:
    """Where a view opens (centre, zoom): the whole ``world`` (the graph, margin
    included) when its text is legible there (``legible``: the least zoom at which box
    text can be read), zoomed in no further than ``cap``; else a readable part, at
    ``legible``, around ``anchor`` (the output's box), kept inside ``world``. A
    resnet18 fitted whole at 1280x720 showed its module names a few pixels high."""
    whole = fit_zoom(world, viewport, 0.0)
    if whole >= legible:
        return _centre(world), min(whole, cap)
    return _clamped(anchor, world, viewport, legible), legible


def _centre(rect: Rect) -> tuple[float, float]:
    return (rect[0] + rect[2] / 2, rect[1] + rect[3] / 2)


def _clamped(
    rect: Rect, world: Rect, viewport: tuple[float, float], zoom: float
) -> tuple[float, float]:
    """The centre that shows ``rect`` at ``zoom`` with as little paper beyond ``world``
    (the graph) as the viewport allows: on each axis, ``world``'s centre when the view
    is larger than it, else ``rect``'s centre moved so the view stays inside ``world``
    and its margin."""
    m = MARGIN_PX / zoom
    out = []
    for axis, span in ((0, viewport[0] / zoom), (1, viewport[1] / zoom)):
        lo = world[axis] - m
        hi = world[axis] + world[axis + 2] + m
        centre = rect[axis] + rect[axis + 2] / 2
        if span >= world[axis + 2]:
            out.append((lo + hi) / 2)
        else:
            out.append(min(max(centre, lo + span / 2), hi - span / 2))
    return (out[0], out[1])


def interpolate(a: CameraTarget, b: CameraTarget, t: float) -> tuple[tuple[float, float], float]:
    """Centre and zoom ``t`` (0..1) of the way from ``a`` to ``b``; the zoom moves
    geometrically, so zooming in and out feel equally fast."""
    t = min(max(t, 0.0), 1.0)
    zoom = a.zoom * (b.zoom / a.zoom) ** t
    cx = a.center[0] + (b.center[0] - a.center[0]) * t
    cy = a.center[1] + (b.center[1] - a.center[1]) * t
    return (cx, cy), zoom
