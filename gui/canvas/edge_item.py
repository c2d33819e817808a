"""Edges (bezier curves from an output port to an operand port) and what the player
draws on them: the travelling pulse and the label of the active step.

Edges keep their path in scene coordinates (the item sits at the origin), so
moving a node only recomputes the curves that touch it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from enum import StrEnum

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
    QRadialGradient,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsPathItem,
    QGraphicsPolygonItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from ..model.labels import wrap_label
from ..model.timeline import EdgeKey
from ..qt_override import reported, reported_or, reported_or_unchanged
from ..theme import THEME
from .port_item import UNIT, cfont, cline


class EdgeState(StrEnum):
    """How an edge is drawn: plain, already propagated, carrying the active step, or
    selected by the user (which wins over the others)."""

    NORMAL = "normal"
    DONE = "done"
    ACTIVE = "active"
    SELECTED = "selected"


NORMAL, DONE, ACTIVE = EdgeState.NORMAL, EdgeState.DONE, EdgeState.ACTIVE
#: A rectangle as its x, y, width and height (a ``QRectF``'s own four numbers).
XYWH = tuple[float, float, float, float]


def bezier(p1: QPointF, p2: QPointF) -> QPainterPath:
    """The S-curve from an output port (p1) to an operand port (p2)."""
    return _bezier(p1.x(), p1.y(), p2.x(), p2.y())[0]


def _bezier(x1: float, y1: float, x2: float, y2: float) -> tuple[QPainterPath, QRectF]:
    """:func:`bezier` from plain floats, with its control points' rectangle (Qt's
    ``controlPointRect``, without asking the path: thousands of edges open at once)."""
    path = QPainterPath()
    _add_bezier(path, x1, y1, x2, y2)
    return path, _bezier_extent(x1, y1, x2, y2)


def _controls(x1: float, x2: float) -> tuple[float, float]:
    """The x of the S-curve's two control points (at the heights of its ends)."""
    dx = max(abs(x2 - x1) * 0.5, 50.0 * UNIT)
    return x1 + dx, x2 - dx


def _add_bezier(path: QPainterPath, x1: float, y1: float, x2: float, y2: float) -> None:
    """Append the S-curve to ``path`` as a subpath of its own."""
    c1, c2 = _controls(x1, x2)
    path.moveTo(x1, y1)
    path.cubicTo(c1, y1, c2, y2, x2, y2)


def _bezier_extent(x1: float, y1: float, x2: float, y2: float) -> QRectF:
    """The S-curve's control points' rectangle."""
    return QRectF(*_bezier_xywh(x1, y1, x2, y2))


def _bezier_xywh(x1: float, y1: float, x2: float, y2: float) -> XYWH:
    """:func:`_bezier_extent` as its x, y, width and height."""
    c1, c2 = _controls(x1, x2)
    left, right = min(x1, c2), max(x2, c1)
    top, bottom = min(y1, y2), max(y1, y2)
    return (left, top, right - left, bottom - top)


class ArcLength:
    """A path flattened to a polyline, with the distance along it at each vertex: a
    point at a fraction of the path's length is then one interpolation. Qt's
    ``percentAtLength`` bisects the curve for every point it is asked (~0.6 ms for the
    nine label samples of one edge, most of placing a step's label; the arrow and each
    frame of the pulse asked it too); this is within a fraction of a scene unit of it
    at ~0.06 ms for the whole edge."""

    def __init__(self, path: QPainterPath) -> None:
        self.xy = _polyline(path)
        steps = np.hypot(*np.diff(self.xy, axis=0).T)
        self.along = np.concatenate(([0.0], np.cumsum(steps)))

    def points(self, fractions: Iterable[float]) -> list[tuple[float, float]]:
        """The points at ``fractions`` (0: the path's start, 1: its end) of its length."""
        at = np.asarray(list(fractions), dtype=float) * self.along[-1]
        xs, ys = np.interp(at, self.along, self.xy[:, 0]), np.interp(at, self.along, self.xy[:, 1])
        return list(zip(xs.tolist(), ys.tolist(), strict=True))

    def direction(self, fraction: float) -> tuple[float, float]:
        """The unit vector along the path (start to end) at ``fraction`` of its length."""
        i = int(np.searchsorted(self.along, fraction * self.along[-1]))
        i = min(max(i, 1), len(self.xy) - 1)
        dx, dy = (self.xy[i] - self.xy[i - 1]).tolist()
        norm = math.hypot(dx, dy) or 1.0
        return dx / norm, dy / norm


#: Points each cubic segment of a path is cut into (for :class:`ArcLength`).
CUBIC_POINTS = 64
_T = np.linspace(0.0, 1.0, CUBIC_POINTS + 1)[1:, None]
_U = 1.0 - _T
#: The cubic's four Bernstein weights at each of those points, worked out once (each
#: flattening worked them out again: most of its arithmetic; the same products).
_BERNSTEIN = (_U**3, 3 * _U * _U * _T, 3 * _U * _T * _T, _T**3)


def _polyline(path: QPainterPath) -> np.ndarray:
    """``path``'s points in order, each cubic segment evaluated at :data:`CUBIC_POINTS`
    (Qt's own flattening drops a curve whose control points lie on one line, such as a
    short edge doubling back on itself). An empty path (an edge not routed yet) is the
    origin, as Qt's ``pointAtPercent`` answers for it."""
    points: list[np.ndarray] = []
    elements = [path.elementAt(i) for i in range(path.elementCount())]
    b0, b1, b2, b3 = _BERNSTEIN
    i = 0
    while i < len(elements):
        e = elements[i]
        if e.isCurveTo() and points:
            p0 = points[-1][-1]
            p1, p2, p3 = (np.array([c.x, c.y]) for c in elements[i:i + 3])
            points.append(b0 * p0 + b1 * p1 + b2 * p2 + b3 * p3)
            i += 3
            continue
        points.append(np.array([[e.x, e.y]]))
        i += 1
    return np.vstack(points) if points else np.zeros((1, 2))


def _hits(path: QPainterPath, rects: list[QRectF]) -> bool:
    """Does the curve pass through any of the boxes?"""
    box = path.controlPointRect()
    rects = [r for r in rects if r.intersects(box)]
    if not rects:
        return False
    stroker = QPainterPathStroker()
    stroker.setWidth(4.0)
    stroke = stroker.createStroke(path)
    return any(stroke.intersects(r) for r in rects)


Lane = tuple[float, float, float]  # (x from, x to, y) of a detour's straight part
#: Lanes of edges sharing a gap run this far apart (times UNIT).
LANE_SEP = 9.0


def _free_intervals(near: list[QRectF], lo: float, hi: float) -> list[tuple[float, float]]:
    """The y ranges within [lo, hi] not covered by any of the (margin-grown) boxes."""
    out, y = [], lo
    for r in sorted(near, key=lambda r: r.top()):
        if r.top() > y:
            out.append((y, min(r.top(), hi)))
        y = max(y, r.bottom())
        if y >= hi:
            break
    if y < hi:
        out.append((y, hi))
    return [(a, b) for a, b in out if b >= a]


def route(
    p1: QPointF,
    p2: QPointF,
    obstacles: list[QRectF],
    taken: Callable[[], Iterable[Lane]] | None = None,
) -> tuple[QPainterPath, Lane | None, bool]:
    """The S-curve, or, when it would pass behind other boxes, a detour along a free
    horizontal lane between them (the auto-layout leaves room for such lanes); and
    whether it is the S-curve because no box is in its way (then a box arriving that it
    does not pass through, or any box leaving, gives the same curve again).

    ``taken()`` gives other edges' lanes (asked only for a detour): a new lane keeps
    clear of them, so edges that share a gap run side by side instead of on top of
    each other.
    """
    default = bezier(p1, p2)
    if not obstacles or not _hits(default, obstacles):
        return default, None, True
    s = UNIT
    span = p2.x() - p1.x()
    d = min(max(span * 0.2, 45.0 * s), 90.0 * s)
    if span < 2 * d + 10 * s:
        return default, None, False
    a, b, m, sep = p1.x() + d, p2.x() - d, 14.0 * s, LANE_SEP * s
    near = [r.adjusted(-m, -m, m, m) for r in obstacles if r.right() + m > a and r.left() - m < b]
    lo, hi = min(p1.y(), p2.y()) - 400.0, max(p1.y(), p2.y()) + 400.0
    ideal = (p1.y() + p2.y()) / 2
    busy = [y for (ta, tb, y) in (taken() if taken is not None else ()) if ta < b and a < tb]
    candidates: list[tuple[float, float]] = []
    for g0, g1 in _free_intervals(near, lo, hi):
        start = min(max(ideal, g0), g1)
        ys = [start] + [start + k * sep * sign for k in range(1, 8) for sign in (-1, 1)]
        for y in ys:
            if g0 <= y <= g1 and all(abs(y - t) >= sep for t in busy):
                cost = abs(y - p1.y()) + abs(y - p2.y()) + 0.5 * abs(y - ideal)
                candidates.append((cost, y))
                break
    for _, y in sorted(candidates)[:4]:
        path = QPainterPath(p1)
        path.cubicTo(QPointF(p1.x() + d * 0.6, p1.y()), QPointF(a - d * 0.4, y), QPointF(a, y))
        path.lineTo(QPointF(b, y))
        path.cubicTo(QPointF(b + d * 0.4, y), QPointF(p2.x() - d * 0.6, p2.y()), p2)
        if not _hits(path, obstacles):
            return path, (a, b, y), False
    return default, None, False


#: Width of the band around a curve that takes clicks (times UNIT).
HIT_WIDTH = 12.0

_pens: dict[tuple[EdgeState, float, bool, str], QPen] = {}


def edge_pen(state: EdgeState) -> QPen:
    """The pen of an edge in ``state`` (shared by all edges in that state)."""
    key = (state, UNIT, THEME.high_contrast, THEME.name)
    pen = _pens.get(key)
    if pen is None:
        colour, width = {
            EdgeState.SELECTED: (THEME.node_selected, 3.0),
            ACTIVE: (THEME.edge_active, 4.5),
            DONE: (THEME.edge_done, 3.0),
        }.get(state, (THEME.edge, 2.0))
        pen = _pens[key] = QPen(colour, cline(width))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    return pen


_NO_BOUNDS: XYWH = (0.0, 0.0, 0.0, 0.0)  # QRectF(): empty


def _padded(x: float, y: float, w: float, h: float) -> XYWH:
    """An edge's bounds from its curve's extent: the pen's reach added (the numbers
    ``QRectF.adjusted(-pad, -pad, pad, pad)`` gives)."""
    pad = 4.0 * UNIT
    return (x - pad, y - pad, w + pad + pad, h + pad + pad)  # (w + pad) + pad, as Qt adds


class EdgeItem(QGraphicsPathItem):
    """Operand ``key[0]`` plugged into port ``key[2]`` of ``key[1]``.

    A plain edge (not done, active or selected) has no contents of its own: the
    scene draws it into the view's cached background (see
    :meth:`gui.canvas.scene.CanvasScene.drawBackground`), so hundreds of curves cost
    one pixmap blit per repaint instead of hundreds of antialiased strokes. The item
    still catches clicks, and draws itself while it stands out.

    Slotted: the wrapper keeps its state without an instance dict, one object fewer
    per edge for the collector (8,000 per 5,000-node open).
    """

    __slots__ = (
        "key", "state", "_hit", "_arc", "_extent", "lane", "_arrow", "forward", "selected",
        "inside", "_bounds", "_given", "_plain_ends", "_held", "free_ends",
    )

    def __init__(self, key: EdgeKey) -> None:
        super().__init__()
        self.key = key
        self.state = NORMAL
        self._hit: QPainterPath | None = None
        self._arc: ArcLength | None = None  # the path by its length (kept while active)
        self._extent: QRectF | None = None  # set only while Qt measures a new path
        self.lane: Lane | None = None
        self._arrow: QGraphicsPolygonItem | None = None
        self.forward = False  # the arrow points at the consumer (forward mode's J·t)
        self.selected = False  # kept by the view: Qt's selection would draw a dashed box
        self.inside = False  # both ends in one collapsed group: drawn nowhere (set_inside)
        #: The curve's extent, pen included (scene coordinates), as floats: no
        #: rectangle object per edge (see :attr:`bounds`).
        self._bounds = _NO_BOUNDS
        self._given = False  # Qt has been given a path (a new edge has none)
        #: The ends of the plain curve the path is (None: a detour, or no path yet).
        self._plain_ends: tuple[float, float, float, float] | None = None
        #: The plain curve is known by its ends only: Qt is given it when anything but
        #: the scene's background asks (see :meth:`realize`).
        self._held = False
        #: The ends (x1, y1, x2, y2) of the plain curve it is because no box was in its
        #: way when laid out (None: a detour, or not known so): laid out between the same
        #: ends again it is the same curve, unless a box arrives on it (the scene then
        #: leaves alone such an edge near a box that arrived beside it or left).
        self.free_ends: tuple[float, float, float, float] | None = None
        self.setPen(edge_pen(NORMAL))
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)

    @property
    def bounds(self) -> QRectF:
        """The curve's extent, pen included (scene coordinates; a new rectangle)."""
        return QRectF(*self._bounds)

    def bounds_coords(self) -> tuple[float, float, float, float]:
        """:attr:`bounds` as (left, top, right, bottom), without a rectangle."""
        x, y, w, h = self._bounds
        return (x, y, x + w, y + h)

    @property
    def in_background(self) -> bool:
        """Drawn by the scene's background (True) or by the item itself."""
        return self.state == NORMAL and not self.selected and not self.inside

    def set_ends(self, p1: QPointF, p2: QPointF, obstacles: list[QRectF] | None = None,
                 taken: Callable[[], Iterable[Lane]] | None = None) -> None:
        """Ends in scene coordinates; ``obstacles`` are the boxes to route around and
        ``taken()`` the lanes other edges already run along (asked only for a detour)."""
        if not obstacles:
            self.set_plain(p1.x(), p1.y(), p2.x(), p2.y())
            return
        path, self.lane, free = route(p1, p2, obstacles, taken)
        self.free_ends = (p1.x(), p1.y(), p2.x(), p2.y()) if free else None
        if self._held or path != self.path():
            self._plain_ends = None
            self._show(path, path.controlPointRect())

    def stays(self, ends: tuple[float, float, float, float], arrived: list[QRectF]) -> bool:
        """Whether laying it out between ``ends`` again, with the boxes ``arrived`` new
        around it (others only gone), gives the curve it is: it is the plain curve
        between those ends with no box in its way (:attr:`free_ends`), and it does not
        pass through any of them."""
        if ends != self.free_ends:
            return False
        return not _hits(bezier(QPointF(ends[0], ends[1]), QPointF(ends[2], ends[3])), arrived)

    def set_plain(self, x1: float, y1: float, x2: float, y2: float,
                  repaint: bool = True, hold: bool = False) -> None:
        """:meth:`set_ends` without obstacles, from plain floats: the plain curve (the
        same ends as the plain curve it has cost a tuple comparison). ``repaint``
        False: the caller tells the scene's background about it (with many others).
        ``hold``: a new edge drawn only by the background keeps the curve as its ends
        (its extent is known) until :meth:`realize` gives it to Qt: a path, Qt's
        measuring it and the curve's rectangle were a third of a big file's edges'
        cost before its first paint."""
        self.lane = None
        self.free_ends = None  # (the scene says when no box is in its way)
        ends = (x1, y1, x2, y2)
        if ends != self._plain_ends:
            self._plain_ends = ends
            if hold and self.in_background and not self._given:
                self._hit = self._arc = None
                self._held = True
                self._bounds = _padded(*_bezier_xywh(x1, y1, x2, y2))
                return
            self._show(*_bezier(x1, y1, x2, y2), repaint)

    def realize(self) -> None:
        """Give Qt the plain curve held back as its ends (see :meth:`set_plain`): before
        anything hit-tests, measures or paints the item itself."""
        if self._held:
            assert self._plain_ends is not None  # held: a plain curve
            path, extent = _bezier(*self._plain_ends)
            self._held = False
            self._given = True
            self.setPath(path)
            self._measure(extent)

    def path(self) -> QPainterPath:
        """The curve (one held back as its ends is given to Qt first)."""
        self.realize()
        return super().path()

    def curve(self) -> QPainterPath:
        """The curve, for the background to draw (one held back stays held: Qt is not
        given it while painting)."""
        if self._held:
            assert self._plain_ends is not None  # held: a plain curve
            return _bezier(*self._plain_ends)[0]
        return super().path()

    def add_to(self, path: QPainterPath) -> None:
        """Append the curve to ``path`` (the background's one path of every plain
        edge), without giving Qt a curve held back."""
        if self._held:
            assert self._plain_ends is not None  # held: a plain curve
            _add_bezier(path, *self._plain_ends)
        else:
            path.addPath(super().path())

    def _show(self, path: QPainterPath, extent: QRectF, repaint: bool = True) -> None:
        """Take ``path`` (``extent``: its control points' rectangle)."""
        old = self.bounds
        self._held = False
        self._given = True
        self._hit = self._arc = None
        self.setPath(path)
        self._measure(extent)
        rect: XYWH = extent.getRect()  # type: ignore[assignment]  # PySide6's stubs say object
        self._bounds = _padded(*rect)
        self._place_arrow()
        if repaint and self.in_background:
            self.repaint_background(old)

    def repaint_background(self, old: QRectF | None = None) -> None:
        """The background under this curve (and where it was) must be drawn again
        (the scene may gather the areas of many edges into one repaint)."""
        scene = self.scene()
        if scene is not None:
            area = self.bounds if old is None or old.isEmpty() else self.bounds.united(old)
            scene.background_changed(area)  # type: ignore[attr-defined]  # a CanvasScene

    def arc(self) -> ArcLength:
        """The curve by its length, kept while the edge is active and keeps its path: a
        step's arrow, label and pulse each flattened the same new active edge (three
        times a step); an edge no longer active drops it (thousands kept were MBs)."""
        if self._arc is None:
            self._arc = ArcLength(self.path())
        return self._arc

    def set_state(self, state: EdgeState, forward: bool = False) -> None:
        """``forward``: the active step is forward mode's (its arrow points at the consumer)."""
        if state != self.state or forward != self.forward:
            self.state, self.forward = state, forward
            self.restyle()

    def set_inside(self, flag: bool) -> None:
        """Inside a collapsed group (``engine.group_layout.inside_collapsed``): hidden,
        and out of the background, until the group is expanded."""
        if flag != self.inside:
            self.inside = flag
            self.setVisible(not flag)
            self.restyle()

    def set_selected(self, flag: bool) -> None:
        if flag != self.selected:
            self.selected = flag
            self.restyle()

    def _measure(self, extent: QRectF | None = None) -> None:
        """Have Qt measure the item now (a new path or pen made it forget), from the
        curve's extent (see :meth:`shape`; None: the path's control points' rectangle)."""
        if extent is None:
            extent = self.path().controlPointRect()
        pad = HIT_WIDTH / 2 * UNIT + 1.0
        self._extent = extent.adjusted(-pad, -pad, pad, pad)
        self.boundingRect()
        self._extent = None

    def restyle(self) -> None:
        self.setPen(edge_pen(EdgeState.SELECTED if self.selected else self.state))
        self._measure()
        self.setZValue({ACTIVE: 0.6, DONE: 0.3}.get(self.state, 0.0))
        flag = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
        if bool(self.flags() & flag) != self.in_background:
            self.setFlag(flag, self.in_background)
            self.repaint_background()  # it moves into, or out of, the background
        self._place_arrow()

    def _place_arrow(self) -> None:
        """Active edge: an arrowhead pointing back toward the operand (where vjp goes), or
        in forward mode on toward the consumer (where J·t goes)."""
        if self.state != ACTIVE:
            self._arc = None
            if self._arrow is not None:
                self._arrow.hide()
            return
        if self.path().isEmpty():
            return
        arc = self.arc()
        tip = QPointF(*arc.points((0.5,))[0])
        dx, dy = arc.direction(0.5)
        back = QPointF(-dx, -dy)  # pointing toward the operand
        if self.forward:
            back = -back
        side = QPointF(-back.y(), back.x())
        size = 13.0 * UNIT
        base = tip - back * size
        if self._arrow is None:
            self._arrow = QGraphicsPolygonItem(self)
            self._arrow.setPen(Qt.PenStyle.NoPen)
        self._arrow.setBrush(self.pen().color())
        self._arrow.setPolygon(
            QPolygonF([tip, base + side * size * 0.55, base - side * size * 0.55])
        )
        self._arrow.show()

    @reported_or(QPainterPath)
    def shape(self) -> QPainterPath:
        """A wide band so a thin curve is easy to click (built on the first hit test).

        ``QGraphicsPathItem`` measures its bounding rectangle through ``shape()`` once
        per new path or pen: :meth:`_measure` asks for it at once and is handed the
        curve's extent grown by the band's half width, so no band is stroked for thousands of
        edges nobody clicks (opening a big file spent ~0.1 s stroking them).
        """
        if self._extent is not None:
            extent = QPainterPath()
            extent.addRect(self._extent)
            return extent
        if self._held:
            return QPainterPath()  # not given to Qt yet: hit tests realize it first
        if self._hit is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(HIT_WIDTH * UNIT)
            self._hit = stroker.createStroke(self.path())
        return self._hit


class TempEdgeItem(QGraphicsPathItem):
    """The dashed curve following the mouse while a connection is being dragged."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(4)
        self.set_valid(None)

    def set_ends(self, p1: QPointF, p2: QPointF) -> None:
        self.setPath(bezier(p1, p2))

    def set_valid(self, valid: bool | None) -> None:
        """None: no target yet; True: dropping connects; False: refused (red)."""
        colour = {None: THEME.edge, True: THEME.port_out, False: THEME.error}[valid]
        pen = QPen(colour, cline(3.0 if valid is False else 2.5))
        pen.setStyle(Qt.PenStyle.SolidLine if valid is False else Qt.PenStyle.DashLine)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        self.setPen(pen)


class PulseItem(QGraphicsItem):
    """A glowing dot travelling along the active edge, from consumer to operand (forward
    mode: from operand to consumer)."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(5)
        # Drawn once per zoom: each frame of its travel only moves it (a blit).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._arc: ArcLength | None = None  # the path it travels (None: none yet)
        self.progress = 0.0
        self.forward = False

    @property
    def radius(self) -> float:
        return 9.0 * UNIT

    def set_path(self, path: QPainterPath, arc: ArcLength | None = None) -> None:
        """Travel along ``path`` (``arc``: the path by its length, when the caller has it)."""
        self._arc = None if path.isEmpty() else arc or ArcLength(path)
        self.set_progress(self.progress)

    def set_progress(self, t: float) -> None:
        """t = 0: at the consumer's port; t = 1: arrived at the operand's output port
        (forward mode: the other way round)."""
        self.progress = min(max(float(t), 0.0), 1.0)
        along = self.progress if self.forward else 1.0 - self.progress
        if self._arc is not None:
            self.setPos(QPointF(*self._arc.points((along,))[0]))

    @reported_or(QRectF)
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        r = self.radius * 2
        return QRectF(-r, -r, 2 * r, 2 * r)

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        r = self.radius
        glow = QRadialGradient(QPointF(0, 0), 2 * r)
        c = QColor(THEME.pulse)
        c.setAlpha(150)
        glow.setColorAt(0.0, c)
        c.setAlpha(0)
        glow.setColorAt(1.0, c)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(glow))
        painter.drawEllipse(QPointF(0, 0), 2 * r, 2 * r)
        painter.setPen(QPen(THEME.paper, cline(2.0)))
        painter.setBrush(THEME.pulse)
        painter.drawEllipse(QPointF(0, 0), r * 0.6, r * 0.6)


#: Point size of the active edge's label at zoom 1 (it is scaled up when zoomed out).
LABEL_PT = 10.5


class EdgeLabelItem(QGraphicsItem):
    """The active step's text in a rounded white box (mono font). When it had to sit
    away from the curve to keep clear of the boxes, a dotted leader joins it to the
    edge; the leader is its own item, stacked under the boxes, so it never crosses
    one."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(10)
        # Drawn once per text and scale: the whole-canvas repaints of a step and the
        # pulse's frames under it blit it instead of laying its lines out again.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.text = ""
        self._rect = QRectF()
        self._lines: list[str] = []
        self.leader = QGraphicsLineItem()
        self.leader.setZValue(0.8)  # above the active edge, below the node boxes
        self.leader.hide()

    def set_text(self, text: str) -> None:
        """Show ``text``; the same text again (an edit elsewhere, the same step) costs a
        comparison: the label's text is drawn uncached, and redrawing it was most of the
        canvas's repaint after such an edit."""
        if text != self.text:
            self.text = text
            self.restyle()

    def restyle(self) -> None:
        """Lay the text out again (the theme's scale or fonts changed)."""
        self.prepareGeometryChange()
        self._lines = wrap_label(self.text)
        fm = QFontMetricsF(cfont(LABEL_PT, mono=True))
        pad = 9.0 * UNIT
        w = max((fm.horizontalAdvance(x) for x in self._lines), default=0.0) + 2 * pad
        h = len(self._lines) * fm.lineSpacing() + 2 * pad - (fm.lineSpacing() - fm.height())
        self._rect = QRectF(-w / 2, -h / 2, w, h)
        self.update()

    def natural_rect(self) -> QRectF:
        """The box's scene rectangle at scale 1 (the camera frames the label at that
        size: at the zoom it picks for a step the label is about that size, or is
        scaled and kept in view)."""
        return self._rect.translated(self.pos())

    def scale_for(self, zoom: float, min_pt: float) -> float:
        """The scale at which the label's text shows at least ``min_pt`` points on
        screen at ``zoom`` (1 when its own size already does)."""
        return max(1.0, min_pt / (LABEL_PT * UNIT * zoom))

    def place(self, centre: QPointF, anchor: QPointF) -> None:
        """Centre the box at ``centre``; lead a dotted line to ``anchor`` on the edge."""
        self.setPos(centre)
        k = self.scale()
        w, h = self._rect.width() * k, self._rect.height() * k
        rect = QRectF(centre.x() - w / 2, centre.y() - h / 2, w, h)
        if rect.adjusted(-4, -4, 4, 4).contains(anchor):
            self.leader.hide()
            return
        near = QPointF(min(max(anchor.x(), rect.left()), rect.right()),
                       min(max(anchor.y(), rect.top()), rect.bottom()))
        self.leader.setPen(QPen(THEME.edge_active, cline(1.2), Qt.PenStyle.DotLine))
        self.leader.setLine(near.x(), near.y(), anchor.x(), anchor.y())
        self.leader.setVisible(self.isVisible())

    @reported_or_unchanged
    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:  # noqa: N802
        # the leader shows and hides with its label (one item: this costs nothing)
        if change == QGraphicsItem.GraphicsItemChange.ItemVisibleHasChanged and not value:
            self.leader.hide()
        return super().itemChange(change, value)

    @reported_or(QRectF)
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self._rect.adjusted(-3, -3, 4, 5)

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        s = UNIT
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(THEME.edge_label_shadow)
        painter.drawRoundedRect(self._rect.translated(1.5 * s, 2.5 * s), 6 * s, 6 * s)
        painter.setBrush(THEME.edge_label_fill)
        painter.setPen(QPen(THEME.edge_active, cline(1.5)))
        painter.drawRoundedRect(self._rect, 6 * s, 6 * s)
        font = cfont(LABEL_PT, mono=True)
        fm = QFontMetricsF(font)
        painter.setFont(font)
        painter.setPen(THEME.text)
        pad = 9.0 * s
        y = self._rect.top() + pad + fm.ascent()
        for line in self._lines:
            painter.drawText(QPointF(self._rect.left() + pad, y), line)
            y += fm.lineSpacing()
