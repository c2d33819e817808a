"""The canvas scene: one item per node and per edge, kept in step with the document.

The scene only listens: ``structureChanged`` adds and removes items,
``positionsChanged`` moves them, ``resultsChanged`` refreshes what the boxes
say. What a box says depends on the frame being shown (``None``: live, every
value and final gradient); :meth:`CanvasScene.apply_frame` turns a
:class:`~gui.model.timeline.Frame` into box contents, edge colours, the pulse and the
label. Numbers become text here, through a cache, so a frame change formats
only what it has not formatted before and boxes whose text is unchanged are not
laid out again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import chain
from typing import Generic, TypeVar

import numpy as np
from PySide6.QtCore import QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPainterPath, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from engine.forward_mode import ForwardStep
from engine.group_layout import LayoutCache, grouped_layout, inside_collapsed
from engine.layout import LAYER_GAP, NODE_GAP, layered_layout
from engine.ops import OPS
from engine.trace import Step

from ..document import GraphDocument
from ..model.camera import Rect
from ..model.formatting import format_tensor
from ..model.forward_view import edge_label as forward_edge_label
from ..model.label_placement import LabelSpot, place_label
from ..model.labels import default_edge_label
from ..model.node_box import NodeBoxes, NodeContent
from ..model.results import Results
from ..model.semantic_zoom import MIN_SCREEN_PT
from ..model.timeline import EdgeKey, Frame, Phase
from ..qt_override import reported
from ..theme import CHAIN_RULE_PT, THEME
from . import box_renders
from .camera_boxes import CameraBoxes
from .coords import coords, rect_of
from .edge_item import (
    ACTIVE,
    DONE,
    LANE_SEP,
    NORMAL,
    EdgeItem,
    EdgeLabelItem,
    Lane,
    PulseItem,
    edge_pen,
)
from .far_boxes import FarBoxes
from .grid import draw_grid
from .group_frames import CAPTION, MARGIN, caption_room, group_caption
from .node_item import NodeItem
from .port_item import UNIT

#: Half the side of the (fixed, generous) scene rectangle: room to pan anywhere.
SCENE_HALF = 50_000.0
#: Nodes placed automatically next to existing ones go this far below them.
PLACE_GAP = 120.0
#: Edges longer than this (scene units) are routed around the boxes in between.
ROUTE_MIN_SPAN = 150.0
#: How far above and below its ends an edge may detour.
ROUTE_REACH = 400.0
#: ... and shorter than this: dodging every box along a longer edge costs time that
#: grows with the square of the graph's width (a 2,000-node chain took minutes), and
#: a curve that long reads as one sweep anyway.
ROUTE_MAX_SPAN = 3000.0
#: Above this many boxes moved, every edge is re-routed (cheaper than asking the grid
#: about each box); boxes arriving in such numbers leave the edges already there alone.
REROUTE_ALL = 64
#: Routing deferred edges in idle time goes on for about this long before it yields.
ROUTE_CHUNK_S = 0.025
#: A background repaint showing more edges than this (and most of them) strokes
#: them all as one path.
BATCH_EDGES = 64

K = TypeVar("K", bound=Hashable)
_NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents


class RectGrid(Generic[K]):
    """A uniform grid of rectangles by key: "which boxes (or edges) are near this
    rectangle" without scanning every item. Edge routing and label placement ask it
    about boxes; the background and re-routing ask it about edges.

    Overlap tests run on plain floats (``bounds``), with ``QRectF.intersects``'s
    meaning (an empty rectangle meets nothing): routing asks thousands of them when
    a big file opens, and a Qt call per test cost more than the test itself. Only the
    floats are kept (:meth:`rect` makes a ``QRectF`` when one is asked for): a
    ``QRectF`` per box and per edge was 13,000 objects more for the collector to scan
    after opening 5,000 nodes. For the same reason the cells a new graph fills at
    once (:meth:`put_many`) hold their keys as a tuple (the collector leaves a tuple
    of strings alone; 11,000 cell sets were as many objects for it), which becomes
    the very set it stands for when the cell first changes (:meth:`_cell_set`).
    """

    def __init__(self, cell: float = 256.0) -> None:
        self.cell = cell  # results never depend on it: only how many cells a put touches
        self._cells: dict[tuple[int, int], set[K] | tuple[K, ...]] = {}
        self._spans: dict[K, tuple[int, int, int, int]] = {}  # cells covered: x0, x1, y0, y1
        self._long: set[K] = set()  # rectangles over MAX_CELLS cells, kept out of the cells
        self.bounds: dict[K, tuple[float, float, float, float]] = {}  # left, top, right, bottom
        self._array: np.ndarray | None = None  # every bounds, as rows (made when asked)

    def _span(self, b: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        c = self.cell
        return (int(b[0] // c), int(b[2] // c), int(b[1] // c), int(b[3] // c))

    def put(self, key: K, rect: QRectF) -> None:
        self.put_bounds(key, coords(rect.normalized()))

    def put_bounds(self, key: K, b: tuple[float, float, float, float]) -> None:
        """:meth:`put` from (left, top, right, bottom), normalised (left <= right,
        top <= bottom)."""
        if self.bounds.get(key) == b:
            return
        self.bounds[key] = b
        self._array = None
        span, old = self._span(b), self._spans.get(key)
        if span == old:  # moved within the same cells
            return
        if old is not None:
            self._uncell(key, old)
        self._spans[key] = span
        if _cell_count(span) > MAX_CELLS:
            # an edge between far-apart boxes (±1e5): its bounding box covers tens of
            # thousands of cells; it is kept aside and tested directly instead
            self._long.add(key)
            return
        cells = self._cells
        for x in range(span[0], span[1] + 1):
            for y in range(span[2], span[3] + 1):
                bucket = cells.get((x, y))
                if bucket is None:
                    cells[(x, y)] = {key}
                else:
                    self._cell_set((x, y), bucket).add(key)

    def put_many(self, keys: list[K], bounds: np.ndarray) -> None:
        """:meth:`put_bounds` for each key and its row of ``bounds`` (N x 4, normalised).
        Into an empty grid (a new graph's boxes, or edges) in one go: the cells each
        rectangle covers are worked out with numpy and each cell's keys filed at once
        (thousands of rectangles filed one at a time were a sixth of opening 5,000 nodes)."""
        rows: list[tuple[float, float, float, float]] = list(map(tuple, bounds.tolist()))
        if self.bounds or len(set(keys)) != len(keys):
            for key, row in zip(keys, rows, strict=True):
                self.put_bounds(key, row)
            return
        self.bounds = dict(zip(keys, rows, strict=True))
        self._array = np.array(bounds, dtype=float).reshape(-1, 4)
        s = np.floor_divide(self._array, self.cell).astype(np.int64)  # (as _span's //)
        spans = s[:, [0, 2, 1, 3]]  # x0, x1, y0, y1
        self._spans = dict(zip(keys, map(tuple, spans.tolist()), strict=True))
        wide = spans[:, 1] - spans[:, 0] + 1
        counts = wide * (spans[:, 3] - spans[:, 2] + 1)
        long = counts > MAX_CELLS
        self._long = {keys[i] for i in np.flatnonzero(long).tolist()}
        # one row per (rectangle, cell it covers), sorted by cell
        each = np.flatnonzero(~long)
        n = counts[each]
        owner = np.repeat(each, n)
        k = np.arange(len(owner)) - np.repeat(np.cumsum(n) - n, n)  # its cell's number
        cx = spans[owner, 0] + k % wide[owner]
        cy = spans[owner, 2] + k // wide[owner]
        order = np.lexsort((cy, cx))
        cx, cy, owners = cx[order], cy[order], owner[order].tolist()
        if not owners:
            return
        cuts = (np.flatnonzero((np.diff(cx) != 0) | (np.diff(cy) != 0)) + 1).tolist()
        starts = [0, *cuts]
        for start, end, x, y in zip(starts, [*cuts, len(owners)], cx[starts].tolist(),
                                    cy[starts].tolist(), strict=True):
            self._cells[(x, y)] = tuple([keys[i] for i in owners[start:end]])

    def remove(self, key: K) -> None:
        span = self._spans.pop(key, None)
        if span is not None:
            del self.bounds[key]
            self._array = None
            self._uncell(key, span)

    def rect(self, key: K) -> QRectF | None:
        """``key``'s rectangle (None: not in the grid)."""
        b = self.bounds.get(key)
        return None if b is None else rect_of(b)

    def _uncell(self, key: K, span: tuple[int, int, int, int]) -> None:
        if key in self._long:
            self._long.discard(key)
            return
        cells = self._cells
        for x in range(span[0], span[1] + 1):
            for y in range(span[2], span[3] + 1):
                bucket = cells.get((x, y))
                if bucket is not None:
                    keys = self._cell_set((x, y), bucket)
                    keys.discard(key)
                    if not keys:
                        del cells[(x, y)]

    def _cell_set(self, cell: tuple[int, int], bucket: set[K] | tuple[K, ...]) -> set[K]:
        """The cell's keys as a set, to change (a tuple from :meth:`put_many` becomes
        the set made from it: the set a comprehension over the same keys makes, so
        queries meet its keys in the same order)."""
        if isinstance(bucket, tuple):
            bucket = self._cells[cell] = set(bucket)
        return bucket

    def _near(self, left: float, top: float, right: float, bottom: float) -> Iterable[K]:
        """Keys that may overlap the area: those in its cells and the long ones, or
        every key when the area itself covers more than :data:`MAX_CELLS` cells."""
        span = self._span((left, top, right, bottom))
        if _cell_count(span) > MAX_CELLS:
            return list(self.bounds)
        cells = self._cells
        found: set[K] = set(self._long)
        for x in range(span[0], span[1] + 1):
            for y in range(span[2], span[3] + 1):
                bucket = cells.get((x, y))
                if bucket:
                    found |= bucket if isinstance(bucket, set) else set(bucket)  # same order
        return found

    def bounds_array(self) -> np.ndarray:
        """Every rectangle's (left, top, right, bottom) as an N x 4 array (cached until a
        rectangle changes): area sums over many rectangles at once."""
        if self._array is None:
            self._array = np.array(list(self.bounds.values()), dtype=float).reshape(-1, 4)
        return self._array

    def query(self, rect: QRectF) -> list[K]:
        return self.query_bounds(*coords(rect.normalized()))

    def query_bounds(self, left: float, top: float, right: float, bottom: float) -> list[K]:
        """The keys whose rectangle overlaps ``left <= x <= right, top <= y <= bottom``."""
        if left >= right or top >= bottom:
            return []
        bounds = self.bounds
        near = self._near(left, top, right, bottom)
        return [k for k in near if overlaps(bounds[k], left, top, right, bottom)]

    def any_except(
        self, left: float, top: float, right: float, bottom: float, exclude: tuple[K, ...]
    ) -> bool:
        """Does a rectangle other than ``exclude``'s overlap the area (as
        :meth:`query_bounds` would find)? Stops at the first: routing asks this of
        every edge, and most edges have a box between their ends or none near."""
        if left >= right or top >= bottom:
            return False
        bounds = self.bounds
        for k in self._near(left, top, right, bottom):
            if k not in exclude and overlaps(bounds[k], left, top, right, bottom):
                return True
        return False


#: Cells one rectangle may be filed under (or one query may visit); beyond, a
#: rectangle is tested directly and a query tests every rectangle.
MAX_CELLS = 256


def _may_detour(x1: float, x2: float) -> bool:
    """Does an edge from an output port at ``x1`` to an operand port at ``x2`` span a
    distance a detour around the boxes in between may need?"""
    return ROUTE_MIN_SPAN * UNIT < x2 - x1 < ROUTE_MAX_SPAN * UNIT


def _cell_count(span: tuple[int, int, int, int]) -> int:
    return (span[1] - span[0] + 1) * (span[3] - span[2] + 1)


def overlaps(b: tuple[float, float, float, float], left: float, top: float, right: float,
             bottom: float) -> bool:
    """Does ``b`` (left, top, right, bottom) share an area with the other rectangle?
    (``QRectF.intersects`` for normalised rectangles: an empty one meets nothing.)"""
    return (b[0] < right and left < b[2] and b[1] < bottom and top < b[3]
            and b[0] < b[2] and b[1] < b[3] and left < right and top < bottom)


class LaneIndex:
    """Routed edges' lanes by height band: the lanes near a detour, without a scan of
    every lane (finding lanes for E edges was O(E²))."""

    BAND = 64.0

    def __init__(self) -> None:
        self._bands: dict[int, dict[EdgeKey, Lane]] = {}
        self._lanes: dict[EdgeKey, Lane] = {}

    def put(self, key: EdgeKey, lane: Lane | None) -> None:
        self.remove(key)
        if lane is not None:
            self._lanes[key] = lane
            self._bands.setdefault(int(lane[2] // self.BAND), {})[key] = lane

    def remove(self, key: EdgeKey) -> None:
        lane = self._lanes.pop(key, None)
        if lane is not None:
            band = self._bands[int(lane[2] // self.BAND)]
            del band[key]

    def near(self, y0: float, y1: float, exclude: EdgeKey) -> list[Lane]:
        """Lanes with a height in [y0, y1], other than ``exclude``'s."""
        out: list[Lane] = []
        for b in range(int(y0 // self.BAND), int(y1 // self.BAND) + 1):
            out += [lane for k, lane in self._bands.get(b, {}).items() if k != exclude]
        return out


#: Space kept between the active edge's label and the canvas edge, in screen pixels.
LABEL_MARGIN_PX = 8.0
#: How far the label's shadow reaches past its box (scene units at scale 1).
LABEL_SHADOW = 5.0
#: How far the label may shrink below its readable size to be whole in view, off the
#: step's boxes (the camera frames it at that size; a close-up can leave less room).
LABEL_MIN_SHRINK = 0.6
#: Where along the active edge (fractions of its length) the label may attach.
LABEL_SAMPLES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


class CanvasScene(QGraphicsScene):
    """Items for ``doc``; emits ``documentReplaced`` after a new file was loaded and
    laid out (the view then fits it)."""

    documentReplaced = Signal()
    #: A view shows the scene at this zoom now (after a pan, zoom or resize): items that
    #: keep a screen size (the update marks) follow it.
    viewChanged = Signal(float)

    def __init__(self, doc: GraphDocument, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[call-overload]
        self.doc = doc
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[EdgeKey, EdgeItem] = {}
        #: Each box's edges (a new box's as a tuple until first read: see _edges_at).
        self._touching: dict[str, set[EdgeKey] | tuple[EdgeKey, ...]] = {}
        self.frame: Frame | None = None
        #: The active edge's label text for (step, short): short writes tensors as the
        #: chain-rule panel's elided mode (a label too big to read whole in view).
        self.label_provider: Callable[[Step, bool], str] | None = None
        self._graph: object = None  # the Graph last synced (compared by identity)
        self._replaced = False
        self.boxes = NodeBoxes()
        #: Values boxes show instead of the document's (the update act: a parameter the
        #: pulse has not reached yet); see :meth:`hold_values`.
        self.held_values: dict[str, np.ndarray] = {}
        #: Train mode's update marks are up: when backward is done, the canvas shows the
        #: update act, not the last step's pulse and label (the chain-rule panel writes
        #: the update then too).
        self.update_shown = False
        self._active_key: EdgeKey | None = None
        self._label_step: Step | ForwardStep | None = None
        #: The label shows its short text for this step (set once, at most, per step:
        #: text is laid out at most twice a step).
        self._label_short = False
        self.grid: RectGrid[str] = RectGrid()  # node boxes
        # edges' extents: a long edge's is big, so bigger cells (fewer per edge)
        self.edge_grid: RectGrid[EdgeKey] = RectGrid(cell=768.0)
        self._lanes = LaneIndex()  # routed edges' lanes
        #: A new graph's edges drawn as plain curves, to route around boxes later (in
        #: order: the lanes come out as one pass would lay them); see route_pending.
        self._unrouted: list[EdgeKey] = []
        #: A new graph's edges whose plain curves only the background has drawn so far
        #: (see realize_edges).
        self._held: list[EdgeItem] = []
        self._route_timer = QTimer(self)
        self._route_timer.setSingleShot(True)
        self._route_timer.timeout.connect(self._route_some)
        self._boxes_for: object = None  # the results self.boxes was built for
        self._seen: Results | None = None  # the latest results the items were synced to
        self._batch: set[str] | None = None  # while moving many boxes: who moved
        self._pending: set[str] = set()  # moved before every box had a place
        #: A new graph's boxes wait for their first frame's content (see _sync_structure).
        self._unsized = False
        self._vacated: list[QRectF] = []  # where removed boxes were
        self._dirty_background: QRectF | None = None  # gathered by background_batch
        self._edge_paths: QPainterPath | None = None  # every plain edge, as one path
        self._selecting = 0  # inside selection_batch: the far painter hears once, at the end
        #: What Follow step's camera reads of the boxes, kept by the boxes that changed.
        self.camera_boxes = CameraBoxes(self.nodes, self.edges)
        self.setSceneRect(QRectF(-SCENE_HALF, -SCENE_HALF, 2 * SCENE_HALF, 2 * SCENE_HALF))
        self._index_for(far=False)
        #: Box text smaller than this on screen (points) switches to the compact form.
        self.min_text_pt = MIN_SCREEN_PT
        #: The active edge's label shows at least this large on screen (points).
        self.label_pt = CHAIN_RULE_PT
        self._label_view: tuple[QRectF, float] | None = None  # visible rect and zoom
        self._label_path: list[tuple[float, float]] = []  # the active edge, sampled
        self._label_home: QRectF | None = None
        #: Zoomed out below FAR_LOD: the boxes paint nothing, far_boxes draws them all.
        self.far = False
        self.far_boxes = FarBoxes(self.nodes)
        self.far_boxes.hide()
        self.addItem(self.far_boxes)
        self.selectionChanged.connect(self._far_selection)
        self.pulse = PulseItem()
        self.label = EdgeLabelItem()
        for item in (self.pulse, self.label, self.label.leader):
            item.hide()
            self.addItem(item)
        doc.structureChanged.connect(self.sync_structure)
        doc.positionsChanged.connect(self.sync_positions)
        doc.resultsChanged.connect(self.sync_results)
        doc.groupsChanged.connect(self._relayout_groups)
        doc.groupsChanged.connect(self._hide_inside_collapsed)
        self._inside: set[EdgeKey] = set()  # edges hidden inside a collapsed group
        # ... worked out for these groups (None: for other edges, after a structure sync)
        self._inside_for: tuple | None = None
        self._collapsed: dict[str, bool] = {}  # each group's state at the last layout
        # each expanded module's own layout, for one graph (engine.group_layout's cache)
        self._module_layouts: tuple[object, LayoutCache] = (None, {})
        self.sync_structure()
        self.sync_results()

    # ------------------------------------------------------------------ structure

    def sync_structure(self) -> None:
        """Add and remove node and edge items so they match the graph."""
        self._batch = set()
        # A removed box deselects itself: the far-away painter looks once, at the end
        # (once per box made deleting them all grow as N^1.67).
        with self.background_batch(), self.selection_batch():
            try:
                changed = self._sync_structure()
            finally:
                self._end_batch()
        self.camera_boxes.mark_all()
        self._far_changed(changed)  # one box added: the far painter redraws its area only
        self._inside_for = None  # other edges: worked out again
        self._hide_inside_collapsed()

    @contextmanager
    def background_batch(self) -> Iterator[None]:
        """Edges that change inside the block repaint the cached background once, at
        the end, over the area they cover together. One repaint request per edge made
        opening a big file quadratic: each merged into the views' growing dirty region."""
        outer = self._dirty_background is None
        if outer:
            self._dirty_background = QRectF()
        try:
            yield
        finally:
            if outer:
                area, self._dirty_background = self._dirty_background, None
                if area is not None and not area.isEmpty():
                    self.invalidate(area, QGraphicsScene.SceneLayer.BackgroundLayer)

    def background_changed(self, area: QRectF) -> None:
        """The cached background under ``area`` is stale (an edge drawn there changed)."""
        self._edge_paths = None
        if self._dirty_background is None:
            self.invalidate(area, QGraphicsScene.SceneLayer.BackgroundLayer)
        else:
            self._dirty_background = self._dirty_background.united(area)

    def _sync_structure(self) -> list[str] | None:
        """Match the items to the graph; the boxes added, removed or re-ported (None:
        a new graph, every box)."""
        graph = self.doc.graph
        changed: list[str] | None = []
        if graph is not self._graph:  # a file was loaded: start from scratch
            self._replaced = self._graph is not None or bool(graph.nodes)
            self._graph = graph
            changed = None
            # A new graph's results come right after its structure (resultsChanged), and
            # the frame the player opens at with them: its boxes take that content and
            # are sized, and their edges routed, once, then (not live content first).
            self._unsized = True
            self._held = []  # the edges going now
            for nid in list(self.nodes):
                self._remove_node(nid)
        gone = [n for n in self.nodes if n not in graph.nodes]
        for nid in gone:
            self._remove_node(nid)
        # An edit that names what it changed (Results.changed) added or re-ported only
        # boxes among those: the others need not be asked about their ports.
        touched = self.doc.results.changed_since(self._seen) if changed is not None else None
        self._seen = self.doc.results
        nodes = graph.nodes
        reported: list[str] = []  # boxes whose ports moved
        arrived: dict[str, list[EdgeKey]] = {}  # the new boxes' edges
        for nid in nodes if touched is None else [n for n in nodes if n in touched]:
            node = nodes[nid]
            flags = [s is not None for s in node.inputs]
            if not node.is_leaf and node.op in OPS and OPS[node.op].arity is None:
                flags.append(False)  # variadic: one free port to plug the next operand in
            item = self.nodes.get(nid)
            if item is None:
                item = NodeItem(nid)
                if self.far:  # (a new item has contents)
                    item.setFlag(_NO_CONTENTS)
                # The document recomputed before announcing the change: size the box
                # from its real content and ports now (laid out once), so its edges are
                # routed once, around it.
                item.set_input_ports(flags)
                if not self._unsized:
                    item.set_content(self._content(nid, None))
                self.nodes[nid] = item
                arrived[nid] = []
                self.addItem(item)
                pos = self.doc.positions.get(nid)
                if pos is not None:
                    item.setPos(*pos)
                self._batch_add(nid)
                if changed is not None:
                    changed.append(nid)
            elif item.set_input_ports(flags):
                reported.append(nid)
        # The edges are added in the graph's order (a set's order changes with each run's
        # hash seed): edges of one look stack in the order they were added, so where they
        # cross, the same file paints and exports the same pixels in every run.
        if touched is None:
            want = dict.fromkeys(graph.edges())
            stale = [k for k in self.edges if k not in want]
        else:  # only the named nodes' operands were reconnected (a box removed took its own)
            want = dict.fromkeys((s, n, i) for n in sorted(touched) if n in nodes
                                 for i, s in enumerate(nodes[n].inputs) if s)
            stale = [k for n in touched for k in self._touching.get(n, ())
                     if k[1] == n and k not in want]
        for key in stale:
            edge = self.edges.pop(key)
            self._forget_edge(key)
            for nid in key[:2]:
                self._edges_to_change(nid).discard(key)
            self._drop_edge(edge)
        for key in [k for k in want if k not in self.edges]:
            edge = EdgeItem(key)
            self.edges[key] = edge
            for nid in key[:2]:
                into = arrived.get(nid)
                if into is None:
                    self._edges_to_change(nid).add(key)
                else:
                    into.append(key)
            self.addItem(edge)
            self._batch_add(key[0])
        for nid, keys in arrived.items():
            self._touching[nid] = tuple(keys)
        for nid in reported:
            self._node_moved(nid)
        return None if changed is None else changed + gone + reported

    def _edges_of(self, nid: str) -> set[EdgeKey]:
        """The edges touching box ``nid`` (none for a box not here), to read. A new box
        keeps them as a tuple until they change (:meth:`_edges_to_change`): the
        collector leaves a tuple of edge keys alone, where a set per box was 5,000
        objects more for it per 5,000-node open. Read, the tuple is the set made from
        it, the very set adding its keys one at a time made (the same order)."""
        keys = self._touching.get(nid, ())
        return set(keys) if isinstance(keys, tuple) else keys

    def _edges_to_change(self, nid: str) -> set[EdgeKey]:
        """:meth:`_edges_of`, kept as a set from now on, to add to or discard from."""
        keys = self._touching.get(nid)
        if keys is None:
            return set()
        if isinstance(keys, tuple):
            keys = self._touching[nid] = set(keys)
        return keys

    def _remove_node(self, nid: str) -> None:
        item = self.nodes.pop(nid)
        touching = self._touching.pop(nid, ())
        for key in set(touching) if isinstance(touching, tuple) else touching:
            edge = self.edges.pop(key, None)
            self._forget_edge(key)
            if edge is not None:
                self._drop_edge(edge)
            other = key[1] if key[0] == nid else key[0]
            self._edges_to_change(other).discard(key)
        vacated = self.grid.rect(nid)
        if vacated is not None:
            self._vacated.append(vacated)  # edges that went around it may straighten
        self.grid.remove(nid)
        self.removeItem(item)

    def _forget_edge(self, key: EdgeKey) -> None:
        self._lanes.remove(key)
        self.edge_grid.remove(key)

    def _drop_edge(self, edge: EdgeItem) -> None:
        if edge.in_background:
            edge.repaint_background()  # it was drawn into the cached background
        self.removeItem(edge)

    def sync_positions(self, ids: list[str]) -> None:
        """Put boxes where the document says (a no-op for boxes the user just dropped),
        then re-route the edges near every box that moved."""
        self._batch = set(ids)
        with self.background_batch():
            try:
                for nid in ids:
                    item, pos = self.nodes.get(nid), self.doc.positions.get(nid)
                    if item is not None and pos is not None and (item.x(), item.y()) != pos:
                        item.setPos(QPointF(*pos))
            finally:
                self._end_batch()
        self._far_changed(ids)

    def _batch_add(self, nid: str) -> None:
        if self._batch is not None:
            self._batch.add(nid)

    def _end_batch(self) -> None:
        """Update the grid and the edges for everything that moved in the batch, once."""
        moved, self._batch = self._batch or set(), None
        self.camera_boxes.mark(moved)
        if self._unsized or any(n not in self.doc.positions for n in self.nodes):
            self._pending |= moved  # boxes not sized or placed yet: wait for them
            return
        moved |= self._pending
        self._pending = set()
        moved &= set(self.nodes)
        vacated, self._vacated = self._vacated, []
        if not moved and not vacated:
            return
        grid = self.grid
        old = vacated + [r for n in moved if (r := grid.rect(n)) is not None]
        arrived = {n for n in moved if n not in grid.bounds}  # boxes placed for the first time
        keys = list(moved)
        nodes = self.nodes
        bounds = np.array([nodes[n].scene_coords() for n in keys], dtype=float).reshape(-1, 4)
        grid.put_many(keys, bounds)
        if len(keys):
            self._room_for(rect_of((bounds[:, 0].min(), bounds[:, 1].min(),
                                    bounds[:, 2].max(), bounds[:, 3].max())))
        # Edges already there dodge a few arriving boxes, not a bulk arrival (a paste or
        # duplicate lands over its original: re-routing every edge bought nothing there).
        over = moved - arrived if len(arrived) > REROUTE_ALL else moved
        new = [r for n in over if (r := grid.rect(n)) is not None]
        # (A captured trace opens readable, zoomed in where detours show: not deferred.)
        opening = len(arrived) == len(self.nodes) and not self.doc.read_only
        if opening and len(arrived) > REROUTE_ALL:
            self._defer_routing()
        else:
            placed = [r for n in moved if (r := grid.rect(n)) is not None]
            self._reroute(moved, old + new, placed)

    def _room_for(self, rect: QRectF) -> None:
        """Grow the scene rectangle (never shrink it) to hold ``rect`` with room to pan
        around it: a captured 200-layer model lays out wider than the default, and the
        view cannot scroll (nor the follow camera reach) past the scene rectangle."""
        if rect.isEmpty():
            return
        room = rect.adjusted(-SCENE_HALF / 5, -SCENE_HALF / 5, SCENE_HALF / 5, SCENE_HALF / 5)
        if not self.sceneRect().contains(room):
            self.setSceneRect(self.sceneRect().united(room))

    def _defer_routing(self) -> None:
        """Every box of a new graph was just placed: draw each edge as its plain curve
        now and route the ones that may pass behind a box after the first paint, a
        slice per idle moment (routing was a third of opening 5,000 nodes, which opens
        zoomed out past FAR_LOD: boxes of a few pixels). The slices start when a view
        paints the new graph (:meth:`drawBackground`): started here, the first one ran
        before that paint. Anything that reads a route first routes them all
        (:meth:`route_pending`). Each curve is new, so the cached background is told
        once, about all of them (not once per edge), and each is held back as its ends
        until something other than the background needs it (:meth:`realize_edges`)."""
        nodes, edges, lanes = self.nodes, self.edges, self._lanes
        keys = [k for k in sorted(edges) if k[0] in nodes and k[1] in nodes]
        outs = {nid: item.port_xy(True) for nid, item in nodes.items()}  # (asked once each)
        unrouted: list[EdgeKey] = []
        held: list[EdgeItem] = []
        for key in keys:
            x1, y1 = outs[key[0]]
            x2, y2 = nodes[key[1]].port_xy(False, key[2])
            edge = edges[key]
            edge.set_plain(x1, y1, x2, y2, repaint=False, hold=True)
            held.append(edge)
            lanes.put(key, None)
            if _may_detour(x1, x2):
                unrouted.append(key)
        bounds = np.array([e.bounds_coords() for e in held], dtype=float).reshape(-1, 4)
        self.edge_grid.put_many(keys, bounds)
        unrouted.reverse()  # popped from the end: in sorted order
        self._unrouted, self._held = unrouted, held
        self._route_timer.stop()
        if len(bounds):
            self.background_changed(rect_of((bounds[:, 0].min(), bounds[:, 1].min(),
                                              bounds[:, 2].max(), bounds[:, 3].max())))

    def _route_some(self) -> None:
        """Route deferred edges for about :data:`ROUTE_CHUNK_S`, then let the app breathe."""
        end = time.perf_counter() + ROUTE_CHUNK_S
        with self.background_batch():
            while self._unrouted and time.perf_counter() < end:
                self._route_one(self._unrouted.pop())
        if self._unrouted:
            self._route_timer.start(0)

    def realize_edges(self) -> None:
        """Give Qt every plain curve a new graph's edges hold back (zooming in, where
        Qt's index files the edges by their extent, does)."""
        held, self._held = self._held, []
        for edge in held:
            edge.realize()

    def realize_near(self, rect: QRectF) -> None:
        """Give Qt the held curves whose extent meets ``rect``: input there is about to
        hit-test them (a far-away canvas that is never clicked never makes them)."""
        if self._held:
            edges = self.edges
            for key in self.edge_grid.query(rect):
                edges[key].realize()

    def route_pending(self) -> None:
        """Route every edge still drawn as a plain curve (an edit, zooming in to where
        detours are legible, the active edge's pulse and label, or an export need them)."""
        if not self._unrouted:
            return
        self._route_timer.stop()
        keys, self._unrouted = self._unrouted, []
        with self.background_batch():
            for key in reversed(keys):
                self._route_one(key)

    def _route_one(self, key: EdgeKey) -> None:
        self._update_edge(key)
        if key == self._active_key:
            self._update_overlay(replace_label=False)

    def _reroute(self, moved: set[str], rects: list[QRectF], placed: list[QRectF]) -> None:
        """Edges touching ``moved`` boxes, and edges passing over ``rects``, again; of
        the latter, those that would come out as they are stay (:meth:`EdgeItem.stays`:
        the plain curve with no box in its way, through none of the moved boxes where
        they are now, ``placed``): a box added beside two edges laid both out again."""
        self.route_pending()  # first, as one pass would have: the lanes stay reproducible
        touching: set[EdgeKey] = set()
        for nid in moved:
            touching |= self._edges_of(nid)
        keys = set(touching)
        if len(rects) > REROUTE_ALL:
            keys = set(self.edges)
        else:
            for r in rects:
                keys.update(self.edge_grid.query(r))
        for key in sorted(keys):  # a fixed order: lanes (and exported frames) reproducible
            if key in touching or not self._stays(key, placed):
                self._update_edge(key)
        if self._active_key in keys:
            self._update_overlay(replace_label=False)

    def nodes_dragged(self, ids: list[str]) -> None:
        """The view moved these boxes with the mouse: their edges follow."""
        for nid in ids:
            self._node_moved(nid)
        self._far_changed(ids)

    def set_far(self, far: bool) -> None:
        """The view zoomed past :data:`FAR_LOD`: draw the boxes batched (far) or each
        itself (a box's own paint and cache are worth it only when it is legible)."""
        if not far:
            self.realize_edges()
            self.route_pending()
        if far == self.far:
            return
        self.far = far
        self._index_for(far)
        for item in self.nodes.values():
            item.setFlag(_NO_CONTENTS, far)
        self.far_boxes.setVisible(far)
        self._far_changed()

    def _index_for(self, far: bool) -> None:
        """Near: a BSP index, so that a repaint asks only the items in view (without one
        every repaint visited every item: half a pan step at 5,000 nodes); a moved item
        is only filed again. Far: none, as every item is in view then and the index's
        look-up and sort of them all cost ~3 ms a repaint at 5,000 nodes (switching
        costs about one such look-up, once per crossing). Qt does not tell a new index
        the scene rectangle it splits: without it the tree had no extent and a look-up
        returned nearly every item."""
        method = QGraphicsScene.ItemIndexMethod
        self.setItemIndexMethod(method.NoIndex if far else method.BspTreeIndex)
        self.sceneRectChanged.emit(self.sceneRect())

    def _far_changed(self, ids: Iterable[str] | None = None) -> None:
        """These boxes (None: any) moved or were resized, added or removed: a box
        without contents repaints nothing itself, so the far-away painter does."""
        if self.far:
            self.far_boxes.changed(ids)

    def _far_selection(self) -> None:
        if self.far and not self._selecting:
            self.far_boxes.selection_changed()

    @contextmanager
    def selection_batch(self) -> Iterator[None]:
        """Select or deselect many boxes inside the block: the far-away painter looks
        for changed selections once, at the end (once per box made selecting a
        duplicate's copies quadratic: every box asked about every box)."""
        self._selecting += 1
        try:
            yield
        finally:
            self._selecting -= 1
            if not self._selecting:
                self._far_selection()

    def _node_moved(self, nid: str) -> None:
        self.route_pending()
        self.camera_boxes.mark((nid,))
        if self._batch is not None:
            self._batch.add(nid)
            return
        item = self.nodes.get(nid)
        if item is not None:
            self.grid.put(nid, item.scene_rect())
        for key in self._edges_of(nid):
            self._update_edge(key)
            if key == self._active_key:
                self._update_overlay(replace_label=False)

    def _stays(self, key: EdgeKey, placed: list[QRectF]) -> bool:
        """Edge ``key`` laid out again with the boxes ``placed`` new around it would be
        the curve it is (:meth:`EdgeItem.stays`, between its ports as they are now)."""
        src, dst, edge = self.nodes.get(key[0]), self.nodes.get(key[1]), self.edges.get(key)
        if src is None or dst is None or edge is None:
            return False
        return edge.stays((*src.port_xy(True), *dst.port_xy(False, key[2])), placed)

    def _update_edge(self, key: EdgeKey, plain: bool = False) -> bool:
        """Lay edge ``key`` out between its ports, around the boxes in between (or,
        ``plain``, as its plain curve); whether it spans a distance a detour may need."""
        src, dst = self.nodes.get(key[0]), self.nodes.get(key[1])
        edge = self.edges.get(key)
        if src is None or dst is None or edge is None:
            return False
        x1, y1 = src.port_xy(True)
        x2, y2 = dst.port_xy(False, key[2])
        obstacles = None
        routable = _may_detour(x1, x2)
        if routable and not plain:
            lo, hi = min(y1, y2), max(y1, y2)
            ends, grid = key[:2], self.grid
            if grid.any_except(x1, lo, x2, hi, ends):
                # a box between the ends: the curve may pass behind it (the boxes
                # around may be in the way of a detour)
                obstacles = [rect_of(grid.bounds[n]) for n in grid.query_bounds(
                    x1, lo - ROUTE_REACH, x2, hi + ROUTE_REACH) if n not in ends]
        if not obstacles:
            edge.set_plain(x1, y1, x2, y2)
            if not plain:  # no box in its way, or it cannot detour: boxes do not change it
                edge.free_ends = (x1, y1, x2, y2)
        else:
            reach = ROUTE_REACH + LANE_SEP * UNIT
            lane_lo, lane_hi = min(y1, y2) - reach, max(y1, y2) + reach
            edge.set_ends(QPointF(x1, y1), QPointF(x2, y2), obstacles,
                          lambda: self._lanes.near(lane_lo, lane_hi, key))
        self._lanes.put(key, edge.lane)
        self.edge_grid.put(key, edge.bounds)
        return routable

    # ------------------------------------------------------------------ results and frames

    def sync_results(self) -> None:
        """The engine recomputed: refresh every box (cheaply), then place new nodes.

        When the frame shown already belongs to the new results (a player connected
        before the scene sent it), the boxes are up to date: nothing is redrawn twice.
        """
        self._seen = self.doc.results
        f = self.frame
        if f is None or f.timeline is None or f.timeline.results is not self.doc.results:
            self.apply_frame(f)
        self._place_missing()
        if self._replaced:
            self._replaced = False
            self.documentReplaced.emit()

    def apply_frame(self, frame: Frame | None) -> None:
        """Show one moment of the playback (None: live, all values and final grads).

        Stepping to another frame of the same timeline redraws only the nodes and edges
        that differ (``Timeline.changes``); the same frame again redraws everything
        (new results, a new theme).
        """
        with self.background_batch():
            self._apply_frame(frame)

    def _apply_frame(self, frame: Frame | None) -> None:
        previous, self.frame = self.frame, frame
        self._content_results()
        changes = None
        if previous is not None and frame is not None and previous is not frame:
            timeline = frame.timeline
            changes = timeline.changes(previous, frame) if timeline is not None else None
        if changes is None:
            node_ids: Iterable[str] = self.nodes
            edge_keys: Iterable[EdgeKey] = self.edges
        else:
            node_ids = [n for n in changes.nodes if n in self.nodes]
            # (an edit's changes name no edges: those at the nodes it changed may be new)
            edge_keys = list({*changes.edges, *(k for n in node_ids for k in self._edges_of(n))}
                             & self.edges.keys())
        active = frame.edge_step if frame is not None else None
        resized = []
        self.camera_boxes.mark(node_ids)
        for nid in node_ids:
            item = self.nodes[nid]
            before = item.size
            item.set_content(self._content(nid, frame))
            item.set_consumer_highlight(active is not None and active.consumer == nid)
            if item.size != before:
                resized.append(nid)
        if self._unsized:  # a new graph's first content (every box: changes is None)
            self._unsized = False
            resized = list(self.nodes)
        self._boxes_resized(resized)
        done = frame.done_edges if frame is not None else frozenset()
        self._active_key = frame.active_edge if frame is not None else None
        forward = frame is not None and frame.tangent_step is not None
        self.pulse.forward = forward
        for key in edge_keys:
            state = ACTIVE if key == self._active_key else DONE if key in done else NORMAL
            self.edges[key].set_state(state, forward and state == ACTIVE)
        self._update_overlay(replace_label=True)

    def draw_ahead(self, frame: Frame, view: QTransform, window: QRect, ratio: float,
                   hints: QPainter.RenderHint) -> None:
        """Draw the boxes that showing ``frame`` (the next step's) changes as they will
        look, at the transform ``view`` shows the scene with now, those that will show in
        ``window`` (see :meth:`NodeItem.draw_ahead`): that step then copies their pictures."""
        timeline = frame.timeline
        if self.frame is None or timeline is None:
            return
        changes = timeline.changes(self.frame, frame)
        if changes is None:
            return
        active = frame.edge_step
        for nid in sorted(changes.nodes):
            item = self.nodes.get(nid)
            if item is None or not item.isVisible():
                continue
            consumer = active is not None and active.consumer == nid
            item.draw_ahead(self._content(nid, frame), consumer, item.sceneTransform() * view,
                            window, ratio, hints)

    def _update_overlay(self, replace_label: bool) -> None:
        """Pulse and label on the active edge (hidden when there is none)."""
        edge = self.edges.get(self._active_key) if self._active_key else None
        step = self.frame.edge_step if self.frame is not None else None
        done = self.frame is not None and self.frame.phase is Phase.BACKWARD_DONE
        if edge is None or step is None or (done and self.update_shown):
            self.pulse.hide()
            self.label.hide()
            self._label_step = None
            return
        if self._active_key in self._unrouted:
            self.route_pending()
        path = edge.path()
        self.pulse.set_path(path, edge.arc())
        self.pulse.show()
        if replace_label or step is not self._label_step:
            self._label_step = step
            self._label_short = False
            self.label.set_text(self._label_text(short=False))
        assert self._active_key is not None  # an edge is active: it was found above
        self._label_path = edge.arc().points(LABEL_SAMPLES)
        self._label_home = None
        self.label.show()
        self._place_label()

    def _label_text(self, short: bool) -> str:
        """The active step's label text (``short``: its elided form)."""
        step = self._label_step
        if isinstance(step, ForwardStep):
            hidden = self.frame.hidden if self.frame else frozenset()
            return forward_edge_label(step, hidden, short)
        assert step is not None  # a label is only asked for with a step active
        return (self.label_provider or default_edge_label)(step, short)

    def _shorten_label(self) -> bool:
        """Show the short text instead (once a step); False: it says nothing shorter."""
        self._label_short = True
        short = self._label_text(short=True)
        if short == self.label.text:
            return False
        self.label.set_text(short)
        self._label_home = None
        return True

    def label_home(self) -> QRectF:
        """Where the active edge's label goes at its own size, whatever the view (the
        camera frames that; worked out once per step, when first asked)."""
        if self._label_home is None:
            natural = self.label.natural_rect()
            home = self._label_spot(1.0, None).centre
            self._label_home = QRectF(natural).translated(QPointF(*home) - natural.center())
        return self._label_home

    @property
    def view_zoom(self) -> float:
        """The zoom a view last showed the scene at (1 before any)."""
        return 1.0 if self._label_view is None else self._label_view[1]

    def fit_label(self, visible: QRectF, zoom: float) -> None:
        """The view now shows ``visible`` at ``zoom``: keep the active edge's label at
        least :attr:`label_pt` on screen and inside ``visible`` (cheap: one label,
        the boxes near it)."""
        self._label_view = (QRectF(visible), zoom)
        if self.label.isVisible():
            self._place_label(moved=False)
        self.viewChanged.emit(zoom)

    def _place_label(self, moved: bool = True) -> None:
        """Scale the label for the view and put it where :func:`place_label` says.
        ``moved`` False: only the view changed (a label still whole at the right
        size stays)."""
        if self._label_view is None:
            spot = self._label_spot(self.label.scale(), None)
        else:
            scale, view = self._label_fit(*self._label_view)
            readable = self.label.scale_for(self._label_view[1], self.label_pt)
            if not self._label_short and scale < readable - 1e-6 and self._shorten_label():
                # too big to show whole at the readable size: the short text instead
                scale, view = self._label_fit(*self._label_view)
                moved = True
            rescaled = abs(scale - self.label.scale()) > 1e-6
            if rescaled:
                self.label.setScale(scale)
            if not rescaled and not moved and _whole_in(self._padded_rect(), view):
                return  # a pan or zoom that leaves the label whole and its size: stay
            spot = self._label_spot(scale, view)
            if not spot.whole and not self._label_short and self._shorten_label():
                # no whole spot off the step's boxes at this size: the short text first
                scale, view = self._label_fit(*self._label_view)
                self.label.setScale(scale)
                spot = self._label_spot(scale, view)
            k = scale
            while not spot.whole and k > scale * LABEL_MIN_SHRINK:
                # nowhere whole in view and off the step's boxes: a little smaller
                k *= 0.9
                shrunk = self._label_spot(k, view)
                if shrunk.whole:
                    self.label.setScale(k)
                    spot = shrunk
        self.label.place(QPointF(*spot.centre), QPointF(*spot.anchor))

    def label_clear_at(self, visible: QRectF, zoom: float) -> bool:
        """Would the active edge's label, as a view of ``visible`` at ``zoom`` scales
        it, find a spot there, whole, that covers no box? (The camera asks before it
        shows a small graph whole, where a big label may have no room beside the step.)"""
        return self._label_spot(*self._label_fit(visible, zoom)).clear

    def _label_fit(self, visible: QRectF, zoom: float) -> tuple[float, Rect]:
        """The label's scale in a view of ``visible`` at ``zoom`` (readable, but never
        larger than the canvas: a big Jacobian shrinks to fit), and the rectangle its
        box and shadow should lie whole inside."""
        m = LABEL_MARGIN_PX / zoom
        natural = self.label.natural_rect()
        room = min((visible.width() - 2 * m) / (natural.width() + 2 * LABEL_SHADOW),
                   (visible.height() - 2 * m) / (natural.height() + 2 * LABEL_SHADOW))
        scale = max(min(self.label.scale_for(zoom, self.label_pt), room), 1e-3)
        view = visible.adjusted(m, m, -m, -m)
        return scale, (view.x(), view.y(), view.width(), view.height())

    def _padded_rect(self) -> Rect:
        """The label's box with its shadow, where it is now (scene units)."""
        k, c = self.label.scale(), self.label.pos()
        w, h = self._label_size(k)
        pad = LABEL_SHADOW * k
        return (c.x() - w / 2 - pad, c.y() - h / 2 - pad, w + 2 * pad, h + 2 * pad)

    def _label_size(self, scale: float) -> tuple[float, float]:
        natural = self.label.natural_rect()
        return natural.width() * scale, natural.height() * scale

    def _label_spot(self, scale: float, view: Rect | None) -> LabelSpot:
        """The label's spot at ``scale`` in ``view`` (None: no view yet), clear of the
        active step's two boxes (:func:`gui.model.label_placement.place_label`)."""
        step = self._label_step
        ids = (step.consumer, step.operand) if step is not None else ()
        step_boxes = [
            _rect_tuple(self.nodes[n].scene_rect()) for n in dict.fromkeys(ids) if n in self.nodes
        ]
        return place_label(self._label_size(scale), step_boxes, self._label_path, view,
                           self.grid.bounds_array(), self._edges_under, LABEL_SHADOW * scale)

    def _edges_under(self, rect: Rect) -> int:
        return len(self.edge_grid.query(QRectF(*rect)))

    @reported
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # type: ignore[override]  # noqa: N802 - Qt API
        """Paper, a subtle grid, and every plain edge.

        The view caches its background, so the plain edges are stroked once, not on
        every repaint; an edge that changes invalidates only its own area.
        """
        if self._unrouted and not self._route_timer.isActive():
            self._route_timer.start(0)  # a new graph is being painted: route after it
        painter.fillRect(rect, THEME.background)
        draw_grid(painter, rect)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(edge_pen(NORMAL))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        edges = self.edges
        seen = self._edges_meeting(rect)  # counted at once: asking for each one cost more
        if seen > BATCH_EDGES and 2 * seen > len(edges):
            painter.drawPath(self._background_edges())
            return
        shown = self.edge_grid.query(rect)  # only what is in view
        for key in sorted(shown):
            edge = edges[key]
            if edge.in_background:
                painter.drawPath(edge.curve())

    def _edges_meeting(self, rect: QRectF) -> int:
        """How many edges' rectangles share an area with ``rect`` (the grid's
        ``query`` meaning, with numpy over all of them)."""
        r = rect.normalized()
        left, top, right, bottom = r.left(), r.top(), r.right(), r.bottom()
        if left >= right or top >= bottom:
            return 0
        b = self.edge_grid.bounds_array()
        hits = _meeting(b, left, top, right, bottom) & (b[:, 0] < b[:, 2]) & (b[:, 1] < b[:, 3])
        return int(np.count_nonzero(hits))

    def _background_edges(self) -> QPainterPath:
        """Every plain edge as one path: a view showing most of a big graph (zoomed
        out, after each zoom step) strokes it in one call, not one call per edge.
        Kept until an edge drawn in the background changes."""
        if self._edge_paths is None:
            path = QPainterPath()
            edges = self.edges
            for key in sorted(edges):
                edge = edges[key]
                if edge.in_background:
                    edge.add_to(path)
            self._edge_paths = path
        return self._edge_paths

    def set_pulse_progress(self, t: float) -> None:
        self.pulse.set_progress(t)

    # ------------------------------------------------------------------ content

    def _content_results(self) -> None:
        """Point the box builder at the document's latest results (once per results)."""
        if self._boxes_for is not self.doc.results:
            self._boxes_for = self.doc.results
            self.boxes.set_results(self.doc.results)

    def _content(self, nid: str, frame: Frame | None) -> NodeContent:
        self._content_results()
        doc = self.doc
        content = self.boxes.content(doc.graph, doc.results, doc.output, nid, frame)
        held = self.held_values.get(nid)
        return content if held is None else replace(content, value=format_tensor(held))

    def show_update(self, on: bool) -> None:
        """Train mode's marks are up (or gone): see :attr:`update_shown`."""
        if on != self.update_shown:
            self.update_shown = on
            self._update_overlay(replace_label=False)

    def hold_values(self, values: dict[str, np.ndarray]) -> None:
        """Boxes ``values`` names show those values instead of the document's ({}: none);
        only the boxes whose shown value changes are redrawn (and their edges, resized)."""
        old, self.held_values = self.held_values, dict(values)
        ids = [
            n for n in {*old, *values}
            if n in self.nodes and (n not in old or n not in values or old[n] is not values[n])
        ]
        self.camera_boxes.mark(ids)
        resized = []
        with self.background_batch():
            for nid in ids:
                item = self.nodes[nid]
                before = item.size
                item.set_content(self._content(nid, self.frame))
                if item.size != before:
                    resized.append(nid)
            self._boxes_resized(resized)

    def _boxes_resized(self, resized: list[str]) -> None:
        """Boxes that changed size: the grid, their edges and the far view follow, once."""
        if resized:
            self._batch = set(resized)
            self._end_batch()
            self._far_changed(resized)

    # ------------------------------------------------------------------ automatic placement

    def _place_missing(self) -> None:
        """Lay out nodes that have no position (a file saved without them).

        Loading is not an edit, so this moves the document directly (no undo entry).
        """
        graph, positions = self.doc.graph, self.doc.positions
        missing = [n for n in graph.nodes if n not in positions]
        if not missing:
            return
        sizes = self.node_sizes()
        layout = self.layout_positions()
        if len(missing) < len(graph.nodes):
            placed = [n for n in graph.nodes if n in positions]
            left = min(positions[n][0] for n in placed)
            bottom = max(positions[n][1] + sizes[n][1] for n in placed)
            top = min(layout[n][1] for n in missing)
            x0 = min(layout[n][0] for n in missing)
            layout = {n: (layout[n][0] - x0 + left, layout[n][1] - top + bottom + PLACE_GAP)
                      for n in missing}
        self.doc.move_nodes({n: layout[n] for n in missing})  # edges re-routed on the signal

    def _hide_inside_collapsed(self) -> None:
        """Hide the edges inside collapsed groups, show those of expanded ones (no work
        for a graph without a collapsed group, as most edits are, nor when the edges and
        groups are those of the last time: opening a trace announces its structure, then
        its groups, and it worked the edges out twice)."""
        groups = self.doc.groups
        if not self._inside and not any(g.collapsed for g in groups):
            return
        state = tuple((g.id, g.collapsed, tuple(g.members)) for g in groups)
        if state == self._inside_for:
            return
        self._inside_for = state
        inside = inside_collapsed(groups, self.edges)
        with self.background_batch():
            for key in inside ^ self._inside:
                edge = self.edges.get(key)
                if edge is not None:
                    edge.set_inside(key in inside)
        self._inside = inside

    def _relayout_groups(self) -> None:
        """A captured trace's modules are laid out on demand: one expanded or collapsed,
        the graph is laid out again around it, that module kept where it was (so
        collapsing restores what expanding moved). A user's boxes stay where they are."""
        states = {g.id: g.collapsed for g in self.doc.groups}
        toggled = [g for g in self.doc.groups if self._collapsed.get(g.id, g.collapsed)
                   != g.collapsed]
        self._collapsed = states
        positions = self.doc.positions
        if not toggled or not self.doc.read_only or len(positions) < len(self.nodes):
            return
        layout = self.layout_positions()
        anchor = [m for m in toggled[0].members if m in layout and m in positions]
        if not anchor:
            return
        dx = min(positions[m][0] for m in anchor) - min(layout[m][0] for m in anchor)
        dy = min(positions[m][1] for m in anchor) - min(layout[m][1] for m in anchor)
        moved = {}  # only the boxes that move: their edges are routed again
        for n, (x, y) in layout.items():
            old = positions.get(n)
            if old is None or abs(old[0] - x - dx) > 1e-6 or abs(old[1] - y - dy) > 1e-6:
                moved[n] = (x + dx, y + dy)
        if moved:
            self.doc.move_nodes(moved)

    # ------------------------------------------------------------------ queries

    def node_sizes(self) -> dict[str, tuple[float, float]]:
        return {nid: item.size for nid, item in self.nodes.items()}

    def layout_positions(self) -> dict[str, tuple[float, float]]:
        """Auto-layout of the whole graph for the boxes' real sizes (gaps follow the
        theme's scale, so presentation mode keeps the same proportions); a captured
        trace's modules are boxes of their own (engine.group_layout)."""
        s = UNIT
        gaps = {"layer_gap": LAYER_GAP * s, "node_gap": NODE_GAP * s}
        if self.doc.read_only:
            doc = self.doc
            rooms = {g.id: caption_room(group_caption(doc, g)) for g in doc.groups if g.collapsed}
            if self._module_layouts[0] is not doc.graph:  # another trace: its own layouts
                self._module_layouts = (doc.graph, {})
            return grouped_layout(doc.graph, self.node_sizes(), doc.groups, margin=MARGIN,
                                  caption=CAPTION, rooms=rooms, cache=self._module_layouts[1],
                                  **gaps)
        return layered_layout(self.doc.graph, self.node_sizes(), **gaps)

    def nodes_rect(self) -> QRectF:
        """The bounding rectangle of all node boxes (empty when there are none)."""
        if not self.nodes:
            return QRectF()
        # Read straight into the array: each box's four floats are let go as the next
        # are read (5,000 tuples held in a list were enough new objects to run the
        # collector, in the middle of opening a big file: fitting it asks this).
        sides = chain.from_iterable(item.scene_coords() for item in self.nodes.values())
        b = np.fromiter(sides, dtype=float, count=4 * len(self.nodes)).reshape(-1, 4)
        return rect_of((b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()))

    def restyle(self) -> None:
        """The theme changed (presentation mode): lay every item out again."""
        box_renders.clear()  # (pictures of the old looks: none is drawn again)
        with self.background_batch():
            for item in self.nodes.values():
                item.restyle()
            for edge in self.edges.values():
                edge.restyle()
            self.label.restyle()
            self.apply_frame(self.frame)
            self._batch = set(self.nodes)
            self._end_batch()
        self.camera_boxes.mark_all()
        self._far_changed()


def _meeting(
    bounds: np.ndarray, left: float, top: float, right: float, bottom: float
) -> np.ndarray:
    """Which rows of ``bounds`` (x0, y0, x1, y1) share an area with the rectangle
    ``left``..``right`` x ``top``..``bottom`` (touching edges do not count)."""
    return (
        (bounds[:, 0] < right) & (bounds[:, 2] > left)
        & (bounds[:, 1] < bottom) & (bounds[:, 3] > top)
    )


def _rect_tuple(r: QRectF) -> Rect:
    return (r.x(), r.y(), r.width(), r.height())


def _whole_in(rect: Rect, view: Rect) -> bool:
    """Does ``view`` hold all of ``rect``?"""
    eps = 1e-6
    return (rect[0] >= view[0] - eps and rect[1] >= view[1] - eps
            and rect[0] + rect[2] <= view[0] + view[2] + eps
            and rect[1] + rect[3] <= view[1] + view[3] + eps)
